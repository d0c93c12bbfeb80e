//! The public result, built in one place from what the engine measured and, for files, what the
//! scripts counted.

use crate::what::UrlRequest;
use crate::LoadFlags;
use herd_engine::{Load, Plan, RunOutput};
use herd_result::{
    build_run, name_result, scenario_result, CheckResult, Generator, GeneratorSample,
    GeneratorVerdict, Model, RunConfig, RunInput, RunResult,
};
use herd_workload::Workload;

/// Turns what the engine measured into the public result.
pub fn to_result(target: String, config: RunConfig, plan: &Plan, out: &RunOutput) -> RunResult {
    let g = &out.generator;
    let lag = if matches!(plan.load, Load::Open { .. }) {
        &g.send_lag
    } else {
        &g.loop_delay
    };
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
        warnings: generator_warnings(&target, plan, out),
        threads: g.threads as u64,
        worker: Some("loop".to_owned()),
        connections_opened: g.connections_opened,
        peak_connections: g.peak_connections,
        protocols: {
            let mut rows: Vec<_> = g
                .protocols
                .iter()
                .map(|p| herd_result::ProtocolUse {
                    protocol: p.protocol.to_owned(),
                    connections: p.connections,
                    requests: p.requests,
                    handshakes: (!p.handshakes.is_empty()).then(|| handshakes(&p.handshakes)),
                })
                .collect();
            rows.sort_by(|a, b| a.protocol.cmp(&b.protocol));
            rows
        },
        tls: {
            let mut rows: Vec<_> = g
                .tls
                .iter()
                .map(|u| herd_result::TlsUse {
                    version: u.negotiated.version.to_owned(),
                    cipher: u.negotiated.cipher.to_owned(),
                    alpn: u.negotiated.alpn.map(str::to_owned),
                    connections: u.connections,
                })
                .collect();
            herd_result::TlsUse::sort(&mut rows);
            rows
        },
        fds_peak: g.fds_peak,
        fd_limit: g.fd_limit,
        ephemeral_ports_peak: g.ports_peak,
        ephemeral_port_range: g.port_range,
        streams_allowed: g.stream_limit.map(|l| l as u64),
        naps: (g.naps.windows > 0).then_some(herd_result::Naps {
            windows: g.naps.windows,
            napping: g.naps.napping,
            longest_us: g.naps.longest.as_micros() as u64,
        }),
        timeline: g.timeline.iter().map(generator_sample).collect(),
        machine: Some(herd_monitor::system::fingerprint()),
    };
    build_run(RunInput {
        target,
        config,
        started_at: out.started_at + out.warmup,
        duration: out.duration,
        offered: plan.length().map(|l| l.saturating_sub(out.warmup)),
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
fn generator_warnings(url: &str, plan: &Plan, out: &RunOutput) -> Vec<String> {
    let g = &out.generator;
    let health = herd_engine::generator::Health {
        // Drops are the server's saturation only when herd itself was not the limit.
        dropped: if g.verdict.is_ok() { out.dropped } else { 0 },
        max_connections: plan.max_connections(),
        ports_peak: g.ports_peak,
        port_range: g.port_range,
        connections_opened: g.connections_opened,
        server_closed: g.server_closed,
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

/// How a URL run is described in its result: its resolved flags at its level.
pub(crate) fn url_config(r: &UrlRequest, f: &LoadFlags, plan: &Plan) -> RunConfig {
    RunConfig {
        url: r.shown_url.clone(),
        method: r.spec.method.clone(),
        model: match plan.load {
            Load::Open { .. } => Model::Open,
            Load::Closed { .. } => Model::Closed,
        },
        connections: plan.max_connections(),
        rate: match plan.load {
            Load::Open { rate, .. } => f.rate.or(Some(rate)),
            Load::Closed { .. } => None,
        },
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        requests: plan.requests,
        warmup_s: plan.warmup.as_secs_f64(),
        threads: plan.effective_threads() as u64,
        timeout_s: plan.timeout.as_secs_f64(),
        calls_per_conn: plan.calls_per_conn,
        pipeline: (plan.pipeline > 1).then_some(plan.pipeline as u64),
        streams: None,
        proxy: None,
        headers: r.headers.clone(),
        body_bytes: r.body_len,
        secrets_shown: r.secrets_shown,
        labels: Default::default(),
        arrivals: arrivals(plan),
    }
}

/// A random arrival process and its seed, as the result shows them.
fn arrivals(plan: &Plan) -> Option<herd_result::Arrivals> {
    let open = matches!(plan.load, Load::Open { .. }) && plan.arrivals.is_none();
    (open && plan.process != herd_engine::Process::Constant).then(|| herd_result::Arrivals {
        process: plan.process.name().to_owned(),
        seed: plan.seed,
    })
}

/// How a log replay is described in its result: the open model at the log's mean rate.
pub(crate) fn replay_config(url: &str, plan: &Plan) -> RunConfig {
    RunConfig {
        model: Model::Open,
        requests: None,
        warmup_s: 0.0,
        ..plan_config(url.to_owned(), "replay", plan)
    }
}

/// How a workload's run is described in its result: the file's target, its plan's load.
pub(crate) fn workload_config(w: &Workload, plan: &Plan) -> RunConfig {
    let url = herd_result::redact::Redaction::default().url(&w.target().to_string());
    plan_config(url, "workload", plan)
}

/// What the plan alone says of a run (no request flags: replay and workloads).
fn plan_config(url: String, method: &str, plan: &Plan) -> RunConfig {
    RunConfig {
        url,
        method: method.to_owned(),
        model: match plan.load {
            Load::Open { .. } => Model::Open,
            Load::Closed { .. } => Model::Closed,
        },
        connections: plan.max_connections(),
        rate: match plan.load {
            Load::Open { rate, .. } => Some(rate),
            Load::Closed { .. } => None,
        },
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        requests: plan.requests,
        warmup_s: plan.warmup.as_secs_f64(),
        threads: plan.effective_threads() as u64,
        timeout_s: plan.timeout.as_secs_f64(),
        calls_per_conn: None,
        pipeline: None,
        streams: None,
        proxy: None,
        headers: Vec::new(),
        body_bytes: 0,
        secrets_shown: false,
        labels: Default::default(),
        arrivals: arrivals(plan),
    }
}

/// Per-name stats, scenarios and checks from what the engine and the scripts counted.
pub(crate) fn add_workload(
    w: &Workload,
    out: &RunOutput,
    tally: &herd_workload::Tally,
    result: &mut RunResult,
) {
    let names = w.names();
    // With one name the engine keeps only totals: they are that name's stats.
    let by_name: Vec<_> = if out.by_name.is_empty() {
        names
            .iter()
            .map(|n| name_result(n, &out.total, out.duration))
            .collect()
    } else {
        names
            .iter()
            .zip(&out.by_name)
            .map(|(n, s)| name_result(n, s, out.duration))
            .collect()
    };
    result.by_name = by_name;
    // A workload's `grpc:` steps: each request name whose answers were calls'.
    result.grpc = match out.by_name.is_empty() {
        true => herd_result::Grpc::of_calls(names.iter().map(|n| (n.as_str(), &out.total))),
        false => herd_result::Grpc::of_calls(names.iter().map(String::as_str).zip(&out.by_name)),
    };
    if !w.walks() {
        result.by_scenario = w
            .scenarios()
            .iter()
            .zip(&tally.scenarios)
            .map(|((name, weight), t)| scenario_result(name, *weight, t.iterations, &t.duration))
            .collect();
    }
    result.checks = w
        .checks()
        .iter()
        .zip(&tally.checks)
        .map(|(name, c)| CheckResult {
            name: name.clone(),
            passes: c.passes,
            fails: c.fails,
            sample: c.sample.clone(),
        })
        .collect();
    // The `script:`'s errors outside a response (a check's are its response's error) are
    // the `lua` class, as `-s` counts them.
    result.add_errors(
        crate::script::LUA_ERRORS,
        tally.lua_errors,
        tally.lua_sample.as_deref(),
    );
}

/// One second of the generator's health as results carry it.
pub fn generator_sample(h: &herd_engine::HealthSample) -> GeneratorSample {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    GeneratorSample {
        t: h.t,
        cpu_percent: h.cpu_percent.clone(),
        send_lag_p99_ms: ms(h.send_lag_p99),
        loop_delay_max_ms: ms(h.loop_delay_max),
        connections: h.open_connections,
        fds: h.fds,
        ephemeral_ports: h.ephemeral_ports,
    }
}

/// A protocol's handshakes, in the result's units.
fn handshakes(h: &herd_engine::Handshakes) -> herd_result::Handshakes {
    // Whole microseconds, so that shards merge exactly.
    let times = |t: &herd_engine::HandshakeTimes| herd_result::HandshakeTimes {
        count: t.count,
        mean_ms: (t.total.as_micros() / u128::from(t.count.max(1))) as f64 / 1e3,
        max_ms: t.max.as_micros() as f64 / 1e3,
        total_ms: t.total.as_micros() as f64 / 1e3,
    };
    herd_result::Handshakes {
        full: times(&h.full),
        resumed: times(&h.resumed),
        early_data_accepted: h.early_data_accepted,
        early_data_rejected: h.early_data_rejected,
    }
}
