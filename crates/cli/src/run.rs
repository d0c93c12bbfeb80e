//! `herd run URL`, `herd run -f urls.txt` and `herd run FILE.yaml`: flags -> a `RunSpec`;
//! herd-run checks and plays it; here the signals, the shard's wait, the server watch, the
//! summary, the JSON file and the exit code.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use crate::interrupt;
use herd_engine::Control;
use herd_report::render_text;
use herd_result::RunResult;
use herd_run::{LoadFlags, RequestFlags, RunSpec, Source};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// The run `herd run`'s flags describe: a workload file, a URL file or a URL.
pub fn spec(a: &RunArgs) -> RunSpec {
    let request = RequestFlags {
        method: a.method.clone(),
        headers: a.headers.clone(),
        body: a.body.clone(),
        body_file: a.body_file.clone(),
        form: a.form.clone(),
        redact: a.secrets.redaction(),
    };
    let file = crate::workload_cmd::workload_file(a);
    let source = match (&file, &a.urls_file) {
        (Some(path), _) => Source::Workload { path: path.clone() },
        (None, None) if a.script.is_some() => Source::Script {
            url: a.url.clone().unwrap_or_default(),
            script: a.script.clone().unwrap_or_default(),
            args: a.script_args.clone(),
        },
        (None, Some(path)) => Source::UrlFile { path: path.clone() },
        (None, None) => Source::Url {
            url: a.url.clone().unwrap_or_default(),
        },
    };
    RunSpec {
        source,
        request,
        load: LoadFlags {
            connections: a.connections,
            rate: a.rate,
            duration: a.duration,
            requests: a.requests,
            calls_per_conn: a.calls_per_conn,
            pipeline: a.pipeline.map(|depth| herd_run::Pipeline {
                depth: depth as usize,
                any_method: a.pipeline_any_method,
            }),
            timeout: a.timeout,
            warmup: a.warmup,
            threads: a.threads,
        },
        level: None,
        length: None,
        insecure: a.insecure,
        bind: a.bind,
        connect: a.connect.flags(),
        watch: a.watch.plan(),
        http: a.http.flags(),
    }
}

pub fn cmd(a: &RunArgs) -> Result<i32, Exit> {
    crate::env_values::apply(&a.env)?;
    if let (Some(file), true) = (crate::workload_cmd::workload_file(a), a.script.is_some()) {
        return Err(Exit::bad_input(format!(
            "-s/--script drives a URL, not a workload file ({}): give the URL the script \
             loads",
            file.display()
        )));
    }
    let spec = spec(a);
    let prepared = match (spec.prepare(), crate::outputs::check(a)) {
        (Ok(p), Ok(())) => p,
        (p, o) => {
            let problems: Vec<String> = [p.err().map(Exit::from), o.err()]
                .into_iter()
                .flatten()
                .map(|e| e.message)
                .collect();
            return Err(Exit::bad_input(problems.join("\n")));
        }
    };
    let shard = crate::shard_run::resolve(&a.shard)?;
    let mut prepared = prepared;
    // The engine plays only this shard's share of the plan.
    prepared.shard = shard.as_ref().map(|s| s.shard.clone());
    // The shard's own checks, before its wait for the start instant.
    prepared.check().map_err(Exit::from)?;
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let plan = prepared.plan();
    let mut sinks = crate::outputs::sinks(a, &plan)?;
    // A shard's plan hash: a workload's file and data files; a URL's resolved settings and body.
    let config = prepared.config();
    let body = match &spec.source {
        Source::UrlFile { path, .. } => std::fs::read(path).unwrap_or_default(),
        _ => prepared.body().to_vec(),
    };
    let hash = || match &spec.source {
        Source::Workload { path } => crate::shard_run::workload_hash(path),
        _ => Ok(crate::shard_run::config_hash(&config, &body)),
    };
    let result = crate::shard_run::play(shard.as_ref(), hash, &control, |late, header| {
        prepared.late = crate::shard_run::late_start(&prepared.plan(), late)?;
        sinks.start(&herd_live::Start {
            run_id: herd_live::Start::new_run_id(),
            target: prepared.config().url,
            config: prepared.config(),
            measure_start: SystemTime::now() + plan.warmup,
            timeline_start_unix_s: header.as_ref().and_then(|h| h.1),
            shard: header.map(|h| h.0),
            labels: prepared.labels(),
        });
        let result = prepared.run(None, &control, &mut sinks)?;
        Ok((result, prepared.plan().missed()))
    })?;
    let code = crate::outputs::finish(&result, &mut sinks)?;
    if let Some(s) = &shard {
        if herd_run::conclude(&result) == herd_run::Conclusion::NoShare {
            eprintln!(
                "herd: shard {} has no share of this run (fewer users or requests than shards): it sent nothing, and herd merge counts it",
                s.shard
            );
        }
        crate::shard_run::print_frame(&result)?;
    }
    Ok(code)
}

/// Writes the JSON, prints the summary, and picks the exit code. The file first: a summary
/// that cannot be printed (`| head` closed the pipe) must not cost the measurement.
pub fn finish(result: &RunResult, json: Option<&Path>) -> Result<i32, Exit> {
    if let Some(path) = json {
        let cannot = |e: std::io::Error| {
            Exit::bad_input(format!(
                "cannot write the JSON result to {}: {e}",
                path.display()
            ))
        };
        herd_live::json::write_final(path, result).map_err(cannot)?;
    }
    print_summary(result);
    Ok(exit::code(herd_run::conclude(result)))
}

/// The text summary on stdout.
pub fn print_summary(result: &RunResult) {
    let mut text = String::new();
    let _ = render_text(result, &mut text);
    print!("{text}");
    // What a wrk script printed (init's lines, done's report) comes after herd's summary.
    if let Some(out) = result
        .extra
        .get("script")
        .and_then(|s| s["output"].as_str())
    {
        print!("{out}");
    }
}
