//! `herd run URL`: flags -> plan -> engine -> summary and JSON.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use crate::{interrupt, limits, progress::Live, watch};
use herd_engine::{Control, Load, Plan, RunOutput, Single};
use herd_http::{prepare, HttpCodec, HttpTransport, RequestSpec, Target, TlsOptions};
use herd_report::{
    build_run, render_text, write_json, Generator, GeneratorSample, GeneratorVerdict, Model,
    RunConfig, RunInput, RunResult,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default closed-model connections, as wrk's.
pub(crate) const DEFAULT_CONNECTIONS: u64 = 10;
/// Default connection cap in the open model: enough to hold most rates against a slow server.
pub(crate) const DEFAULT_OPEN_CAP: u64 = 1000;
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// Everything `herd run` resolved from its flags, ready to go.
pub struct Prepared {
    pub plan: Plan,
    pub target: Target,
    pub spec: RequestSpec,
    pub config: RunConfig,
    pub insecure: bool,
}

/// Checks every flag and reports all problems at once.
pub fn prepare_run(a: &RunArgs) -> Result<Prepared, Exit> {
    let mut problems = Vec::new();
    let url = a.url.clone().unwrap_or_default();
    let target = match Target::parse(&url) {
        Ok(t) => Some(t),
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    let mut headers = Vec::new();
    for h in &a.headers {
        match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                headers.push((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => problems.push(format!(
                "header `{h}` is not `Name: value`, e.g. -H 'Accept: text/html'"
            )),
        }
    }
    let body = match (&a.body, &a.body_file) {
        (Some(b), _) => b.clone().into_bytes(),
        (None, Some(path)) => match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("cannot read the body file {}: {e}", path.display()));
                Vec::new()
            }
        },
        (None, None) => Vec::new(),
    };
    let has_body = a.body.is_some() || a.body_file.is_some();
    let method = a
        .method
        .clone()
        .map(|m| m.to_ascii_uppercase())
        .unwrap_or_else(|| if has_body { "POST" } else { "GET" }.to_owned());
    let load = match a.rate {
        Some(rate) => Load::Open {
            rate,
            max_connections: a.connections.unwrap_or(DEFAULT_OPEN_CAP),
        },
        None => Load::Closed {
            users: a.connections.unwrap_or(DEFAULT_CONNECTIONS),
        },
    };
    let duration = match (a.duration, a.requests) {
        (None, None) => Some(DEFAULT_DURATION),
        (d, _) => d,
    };
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let plan = Plan {
        load,
        duration,
        requests: a.requests,
        warmup: a.warmup,
        threads,
        timeout: a.timeout,
        calls_per_conn: a.calls_per_conn,
        names: 1,
        stages: Vec::new(),
    };
    if let Err(e) = plan.validate() {
        problems.extend(e.0);
    }
    let spec = RequestSpec {
        method: method.clone(),
        path: String::new(),
        headers,
        body,
    };
    if let Some(t) = &target {
        if let Err(e) = prepare(t, &spec) {
            problems.push(e.to_string());
        }
    }
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    let target = target.expect("no problems means the URL parsed");
    let config = RunConfig {
        url,
        method,
        model: if a.rate.is_some() {
            Model::Open
        } else {
            Model::Closed
        },
        connections: plan.max_connections(),
        rate: a.rate,
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        requests: plan.requests,
        warmup_s: plan.warmup.as_secs_f64(),
        threads: plan.effective_threads() as u64,
        timeout_s: plan.timeout.as_secs_f64(),
        calls_per_conn: plan.calls_per_conn,
        headers: a.headers.clone(),
        body_bytes: spec.body.len() as u64,
    };
    Ok(Prepared {
        plan,
        target,
        spec,
        config,
        insecure: a.insecure,
    })
}

/// Runs a prepared plan against a real target and returns the result; prints nothing.
pub fn execute(p: &Prepared, control: Arc<Control>, live: &mut Live) -> Result<RunResult, Exit> {
    limits::ensure_fds(p.plan.max_connections())?;
    let request = prepare(&p.target, &p.spec).map_err(|e| Exit::bad_input(e.to_string()))?;
    let transport = HttpTransport::new(
        &p.target,
        TlsOptions {
            insecure: p.insecure,
        },
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    let direct = transport
        .plain_addr()
        .filter(|_| herd_engine::direct_supports(&p.plan) && !force_async());
    let out = match direct {
        // Plain HTTP: the readiness loop, wrk's design.
        Some(addr) => herd_engine::run_direct(&p.plan, addr, request, HttpCodec, control, |pr| {
            live.update(pr)
        }),
        None => herd_engine::run(
            &p.plan,
            |_| transport.clone(),
            |_| Single(request.clone()),
            control,
            |pr| live.update(pr),
        ),
    }
    .map_err(|e| Exit {
        code: exit::BAD_INPUT,
        message: e.to_string(),
    })?;
    live.clear();
    Ok(to_result(
        p.config.url.clone(),
        p.config.clone(),
        &p.plan,
        &out,
    ))
}

/// `HERD_WORKER=async` runs plain-HTTP runs on the general async worker instead of
/// the direct one: for comparing the two, and a way around the direct worker should it misbehave.
fn force_async() -> bool {
    std::env::var_os("HERD_WORKER").is_some_and(|v| v == "async")
}

/// Turns what the engine measured into the public result.
pub fn to_result(target: String, config: RunConfig, plan: &Plan, out: &RunOutput) -> RunResult {
    let g = &out.generator;
    let lag = if matches!(plan.load, Load::Open { .. }) {
        &g.send_lag
    } else {
        &g.loop_delay
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let generator = Generator {
        cpu_user_s: g.cpu.user.as_secs_f64(),
        cpu_sys_s: g.cpu.sys.as_secs_f64(),
        cpu_percent: g.cpu_percent,
        send_lag_p99_ms: lag.value_at_quantile(0.99) as f64 / 1e3,
        verdict: if g.verdict.is_ok() {
            GeneratorVerdict::Ok
        } else {
            GeneratorVerdict::GeneratorLimited
        },
        reasons: g.verdict.clone().err().unwrap_or_default(),
        threads: g.threads as u64,
        worker: Some(g.worker.to_owned()),
        connections_opened: g.connections_opened,
        peak_connections: g.peak_connections,
        fds_peak: g.fds_peak,
        fd_limit: g.fd_limit,
        ephemeral_ports_peak: g.ports_peak,
        ephemeral_port_range: g.port_range,
        timeline: g
            .timeline
            .iter()
            .map(|h| GeneratorSample {
                t: h.t,
                cpu_percent: h.cpu_percent.clone(),
                send_lag_p99_ms: ms(h.send_lag_p99),
                loop_delay_max_ms: ms(h.loop_delay_max),
                connections: h.open_connections,
                fds: h.fds,
                ephemeral_ports: h.ephemeral_ports,
            })
            .collect(),
    };
    build_run(RunInput {
        target,
        config,
        started_at: out.started_at + plan.warmup,
        duration: out.duration,
        interrupted: out.interrupted,
        stats: &out.total,
        timeline: &out.timeline,
        dropped: out.dropped,
        warmup_requests: out.warmup_requests,
        warmup_duration: plan.warmup,
        generator,
    })
}

/// Prints the summary, writes the JSON, and picks the exit code.
pub fn finish(result: &RunResult, json: Option<&std::path::Path>) -> Result<i32, Exit> {
    let mut text = String::new();
    let _ = render_text(result, &mut text);
    print!("{text}");
    if let Some(path) = json {
        let file = std::fs::File::create(path).map_err(|e| {
            Exit::bad_input(format!(
                "cannot write the JSON result to {}: {e}",
                path.display()
            ))
        })?;
        write_json(result, std::io::BufWriter::new(file)).map_err(|e| {
            Exit::bad_input(format!(
                "cannot write the JSON result to {}: {e}",
                path.display()
            ))
        })?;
    }
    Ok(exit_code(result))
}

/// Interrupted beats everything (the run is incomplete); then an invalid measurement (the
/// generator was the limit) beats thresholds, which would judge the wrong thing.
pub fn exit_code(result: &RunResult) -> i32 {
    if result.interrupted {
        exit::INTERRUPTED
    } else if result.generator.verdict == GeneratorVerdict::GeneratorLimited {
        exit::GENERATOR_LIMITED
    } else {
        exit::OK
    }
}

pub fn cmd(a: &RunArgs) -> Result<i32, Exit> {
    if let Some(file) = crate::workload_cmd::workload_file(a) {
        return crate::workload_cmd::run_file(a, &file);
    }
    if let Some(urls) = &a.urls_file {
        return crate::workload_cmd::run_urls(a, urls);
    }
    let (prepared, watch) = match (prepare_run(a), watch::check(&a.watch)) {
        (Ok(p), Ok(w)) => (p, w),
        (p, w) => {
            let problems: Vec<String> = [p.err(), w.err()]
                .into_iter()
                .flatten()
                .map(|e| e.message)
                .collect();
            return Err(Exit::bad_input(problems.join("\n")));
        }
    };
    let shard = crate::shard_run::resolve(&a.shard)?;
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let mut live = Live::new(a.quiet);
    let hash = || {
        Ok(crate::shard_run::config_hash(
            &prepared.config,
            &prepared.spec.body,
        ))
    };
    let result = crate::shard_run::play(shard.as_ref(), hash, &control, || {
        let watcher = watch::start(watch, Instant::now() + prepared.plan.warmup)?;
        let result = execute(&prepared, Arc::clone(&control), &mut live);
        let server = watch::stop(watcher);
        let mut result = result?;
        result.server = server;
        Ok(result)
    })?;
    let code = finish(&result, a.json.as_deref())?;
    if shard.is_some() {
        crate::shard_run::print_frame(&result)?;
    }
    Ok(code)
}
