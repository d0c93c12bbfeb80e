//! `herd run URL`: flags -> plan -> engine -> summary and JSON.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use crate::{interrupt, limits, progress::Live, watch};
use herd_engine::{Control, Load, Plan, RunOutput, Single, SystemClock};
use herd_http::{prepare, with_closing, HttpTransport, RequestSpec, Target, TlsOptions};
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
    /// The local address connections are made from.
    pub bind: Option<std::net::IpAddr>,
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
        shard: None,
        late: std::time::Duration::ZERO,
        arrivals: None,
        arrivals_period: None,
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
        bind: a.bind,
    })
}

/// Runs a prepared plan against a real target and returns the result; prints nothing.
pub fn execute(p: &Prepared, control: Arc<Control>, live: &mut Live) -> Result<RunResult, Exit> {
    limits::ensure_fds(p.plan.max_connections())?;
    let request = prepare(&p.target, &p.spec).map_err(|e| Exit::bad_input(e.to_string()))?;
    // A connection's last request asks the server to close (`--calls-per-conn`), so the
    // TIME_WAIT lands on the server's side, as with ab and httperf.
    let request = with_closing(request);
    let transport = HttpTransport::new(
        &p.target,
        TlsOptions {
            insecure: p.insecure,
            source: p.bind,
        },
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    let out = herd_engine::run(
        &p.plan,
        Arc::new(SystemClock),
        |_| transport.wire(),
        |_| Single(request.clone()),
        control,
        |pr| live.update(pr),
    )
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
        warnings: generator_warnings(&target, out),
        threads: g.threads as u64,
        worker: Some("loop".to_owned()),
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
        started_at: out.started_at + out.warmup,
        duration: out.duration,
        interrupted: out.interrupted,
        stats: &out.total,
        timeline: &out.timeline,
        dropped: out.dropped,
        warmup_requests: out.warmup_requests,
        warmup_duration: out.warmup,
        generator,
    })
}

/// The generator's warnings, by the rule its verdict uses (`herd_engine::generator`), from what
/// the engine reported. The engine's verdict does not know the target's address; here the URL
/// tells whether it is loopback, where Linux reuses TIME_WAIT ports by default.
fn generator_warnings(url: &str, out: &RunOutput) -> Vec<String> {
    let g = &out.generator;
    let health = herd_engine::generator::Health {
        ports_peak: g.ports_peak,
        port_range: g.port_range,
        connections_opened: g.connections_opened,
        peak_connections: g.peak_connections,
        wall: out.duration,
        tw_reuse: herd_engine::health::tw_reuse(),
        loopback: loopback(url),
        ..Default::default()
    };
    herd_engine::generator::warnings(&health)
}

/// Whether a URL's host is this machine, when its text says so (an IP literal or `localhost`);
/// `None` for names, which are not resolved again here.
fn loopback(url: &str) -> Option<bool> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return Some(true);
    }
    host.parse::<std::net::IpAddr>()
        .ok()
        .map(|ip| ip.is_loopback())
}

/// Writes the JSON, prints the summary, and picks the exit code. The file first: a summary
/// that cannot be printed (`| head` closed the pipe) must not cost the measurement.
pub fn finish(result: &RunResult, json: Option<&std::path::Path>) -> Result<i32, Exit> {
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
    let mut text = String::new();
    let _ = render_text(result, &mut text);
    print!("{text}");
    Ok(exit_code(result))
}

/// Interrupted beats everything (the run is incomplete); then a run nothing answered (it
/// measured no server at all); then an invalid measurement (the generator was the limit) beats
/// thresholds, which would judge the wrong thing.
pub fn exit_code(result: &RunResult) -> i32 {
    if result.interrupted {
        exit::INTERRUPTED
    } else if herd_report::answers::nothing_answered(result.totals.completed) {
        exit::NO_RESPONSE
    } else if result.generator.verdict == GeneratorVerdict::GeneratorLimited {
        exit::GENERATOR_LIMITED
    } else {
        exit::OK
    }
}

/// Every output file of `herd run` (`--json`), checked before anything is sent.
pub fn check_outputs(a: &RunArgs) -> Result<(), Exit> {
    let problems: Vec<String> = [("--json", a.json.as_deref())]
        .into_iter()
        .filter_map(|(flag, path)| crate::output::check_writable(flag, path?).err())
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Exit::bad_input(format!(
            "{}\nnothing was sent",
            problems.join("\n")
        )))
    }
}

pub fn cmd(a: &RunArgs) -> Result<i32, Exit> {
    if let Some(file) = crate::workload_cmd::workload_file(a) {
        return crate::workload_cmd::run_file(a, &file);
    }
    if let Some(urls) = &a.urls_file {
        return crate::workload_cmd::run_urls(a, urls);
    }
    let outputs = check_outputs(a);
    let (prepared, watch) = match (prepare_run(a), watch::check(&a.watch), outputs) {
        (Ok(p), Ok(w), Ok(())) => (p, w),
        (p, w, o) => {
            let problems: Vec<String> = [p.err(), w.err(), o.err()]
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
    prepared.plan.shard = shard.as_ref().map(|s| s.shard.clone());
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let mut live = Live::new(a.quiet).planned(crate::progress::Planned {
        duration: prepared.plan.duration,
        requests: prepared.plan.requests,
    });
    let plan_hash = crate::shard_run::config_hash(&prepared.config, &prepared.spec.body);
    let hash = || Ok(plan_hash);
    let result = crate::shard_run::play(shard.as_ref(), hash, &control, |late| {
        prepared.plan.late = crate::shard_run::late_start(&prepared.plan, late)?;
        let watcher = watch::start(watch, Instant::now() + prepared.plan.warmup)?;
        let result = execute(&prepared, Arc::clone(&control), &mut live);
        let server = watch::stop(watcher);
        let mut result = result?;
        result.server = server;
        Ok((result, prepared.plan.missed()))
    })?;
    let code = finish(&result, a.json.as_deref())?;
    if shard.is_some() {
        crate::shard_run::print_frame(&result)?;
    }
    Ok(code)
}
