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
        (Some(path), _) => Source::Workload {
            path: path.clone(),
            target: a.target.clone(),
        },
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
            arrivals: a.arrivals,
            seed: a.seed,
        },
        level: None,
        length: None,
        insecure: a.insecure,
        bind: a.bind,
        connect: a.connect.flags(),
        watch: a.watch.plan(),
        http: a.http.flags(),
        shard: None,
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
    if let (None, Some(url)) = (crate::workload_cmd::workload_file(a), &a.target) {
        return Err(Exit::bad_input(format!(
            "--target {url} aims a workload file at another host: give the file (herd run \
             shop.yaml --target {url}), or give a URL alone"
        )));
    }
    let mut spec = spec(a);
    spec.shard = a.shard.resolve()?;
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
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let plan = prepared.plan();
    let sinks = crate::outputs::sinks(a, &plan, &control)?;
    let mut observer = Starting {
        sinks,
        config: prepared.config(),
        warmup: plan.warmup,
        labels: prepared.labels(),
    };
    let log = crate::outputs::requests_log(&a.outputs, &observer.labels, &control)?;
    let run = prepared.run(None, &control, &mut observer);
    // The lines written so far are kept even when the run failed.
    let logged = crate::outputs::finish_requests_log(log, &control);
    let mut result = run?;
    let log_failed = crate::outputs::note_requests_log(logged, &mut result);
    let code = crate::outputs::finish(&result, &mut observer.sinks)?;
    crate::shard_run::conclude(&result)?;
    match log_failed {
        Some(e) => Err(e),
        None => Ok(code),
    }
}

/// The run's outputs, told how it starts when the engine does (a shard's after its wait for
/// the start instant, with its header).
struct Starting {
    sinks: herd_live::Sinks,
    config: herd_result::RunConfig,
    warmup: std::time::Duration,
    labels: herd_run::Labels,
}

impl herd_run::Observer for Starting {
    fn progress(&mut self, p: &herd_engine::Progress) {
        herd_run::Observer::progress(&mut self.sinks, p);
    }

    fn starting(&mut self, shard: Option<&herd_result::ShardHeader>, timeline_start: Option<u64>) {
        self.sinks.start(&herd_live::Start {
            run_id: herd_live::Start::new_run_id(),
            target: self.config.url.clone(),
            config: self.config.clone(),
            measure_start: SystemTime::now() + self.warmup,
            timeline_start_unix_s: timeline_start,
            shard: shard.cloned(),
            labels: self.labels.clone(),
        });
    }

    fn watched(&mut self, fresh: &herd_result::Server) {
        herd_run::Observer::watched(&mut self.sinks, fresh);
    }

    fn finished(&mut self) {
        herd_run::Observer::finished(&mut self.sinks);
    }
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
