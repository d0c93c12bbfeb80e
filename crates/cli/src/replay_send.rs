//! `herd replay LOG... --target URL`: a log's requests sent with their recorded timing (or at a
//! fixed `--rate`), as an open-model run on the one engine: each line is an arrival at its own
//! offset, and its latency is measured from that offset (no coordinated omission). Identical
//! requests are built once; a line costs its offset and a request number.

use crate::exit::Exit;
use crate::progress::Live;
use crate::replay_cmd::ReplayArgs;
use hdrhistogram::Histogram;
use herd_engine::{Action, Control, Ctx, Last, Load, Plan, Request, Script, SystemClock};
use herd_http::{prepare, HttpTransport, RequestSpec, Target, TlsOptions};
use herd_logs::replay::{arrivals, ReplayOptions, Skipped};
use herd_logs::source::{FormatSpec, ReadStats};
use herd_result::{Model, RunConfig, RunResult};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Request types beyond this many are reported together as `other`.
const MAX_NAMES: usize = 50;

/// A log read into what the engine plays.
pub struct Replay {
    pub offsets: Vec<Duration>,
    /// Per arrival, its request.
    pub ids: Vec<u32>,
    pub requests: Vec<Request>,
    pub names: Vec<String>,
    pub stats: ReadStats,
    pub skipped: Skipped,
    /// Lines whose request cannot be sent to the target (a path it refuses).
    pub invalid: u64,
    /// Per request type, the time the production server took (when the log says), in us.
    pub production: Vec<Option<Histogram<u64>>>,
}

/// Reads the logs' arrivals and builds their requests for `target`.
pub fn load(
    a: &ReplayArgs,
    target: &Target,
    spec: &FormatSpec,
    opts: &ReplayOptions,
) -> Result<Replay, Exit> {
    let mut by_key: HashMap<(String, String, Option<String>, Option<String>), u32> = HashMap::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut r = Replay {
        offsets: Vec::new(),
        ids: Vec::new(),
        requests: Vec::new(),
        names: Vec::new(),
        stats: ReadStats::default(),
        skipped: Skipped::default(),
        invalid: 0,
        production: Vec::new(),
    };
    let mut key_buf = Vec::new();
    let (stats, skipped) = arrivals(
        &a.files.logs,
        spec,
        a.files.fields.as_deref(),
        opts,
        |arr| {
            let key = (
                arr.method.clone(),
                arr.path_and_query.clone(),
                arr.user_agent.clone(),
                arr.referer.clone(),
            );
            let id = match by_key.get(&key) {
                Some(id) => *id,
                None => {
                    let mut headers = Vec::new();
                    if let Some(ua) = &arr.user_agent {
                        headers.push(("User-Agent".to_owned(), ua.clone()));
                    }
                    if let Some(re) = &arr.referer {
                        headers.push(("Referer".to_owned(), re.clone()));
                    }
                    let spec = RequestSpec {
                        method: arr.method.clone(),
                        path: arr.path_and_query.clone(),
                        headers,
                        body: Vec::new(),
                    };
                    let Ok(mut req) = prepare(target, &spec) else {
                        r.invalid += 1;
                        return;
                    };
                    let path = arr.path_and_query.split('?').next().unwrap_or_default();
                    herd_logs::pattern::template(
                        arr.method.as_bytes(),
                        path.as_bytes(),
                        b"",
                        &mut key_buf,
                    );
                    let mut name = String::from_utf8_lossy(&key_buf).into_owned();
                    if !by_name.contains_key(&name) && by_name.len() + 1 >= MAX_NAMES {
                        name = "other".to_owned();
                    }
                    let next = by_name.len() as u32;
                    let n = *by_name.entry(name.clone()).or_insert(next);
                    if n as usize == r.names.len() {
                        r.names.push(name);
                    }
                    req.name = n;
                    let id = r.requests.len() as u32;
                    r.requests.push(req);
                    by_key.insert(key, id);
                    id
                }
            };
            r.offsets.push(arr.offset);
            r.ids.push(id);
            if let Some(taken) = arr.taken {
                let name = r.requests[id as usize].name as usize;
                if r.production.len() <= name {
                    r.production.resize(name + 1, None);
                }
                r.production[name]
                    .get_or_insert_with(herd_engine::metrics::new_histogram)
                    .saturating_record(taken.as_micros() as u64);
            }
        },
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    r.stats = stats;
    r.skipped = skipped;
    Ok(r)
}

/// Plays each arrival's own request.
#[derive(Clone)]
struct ReplayScript {
    requests: Arc<[Request]>,
    ids: Arc<[u32]>,
}

impl Script for ReplayScript {
    type User = ();

    fn new_user(&self, _id: u64) {}

    fn next(&self, _: &mut (), last: Last<'_>, ctx: Ctx) -> Action {
        match (last, ctx.arrival) {
            (Last::Start, Some(i)) => match self.ids.get((i % self.ids.len() as u64) as usize) {
                Some(&id) => Action::Send(self.requests[id as usize].clone()),
                None => Action::Done,
            },
            _ => Action::Done,
        }
    }
}

/// Sends `r` to `url` and returns the run's result.
pub fn send(a: &ReplayArgs, url: &str, target: &Target, r: Replay) -> Result<RunResult, Exit> {
    if r.offsets.is_empty() {
        return Err(Exit::bad_input(
            "nothing to replay: no line of the logs passed the filters (see --methods, --include, --exclude, --from, --to)",
        ));
    }
    let n = r.offsets.len();
    // --rate: the same requests, evenly spaced; otherwise the log's own timing.
    let offsets: Vec<Duration> = match a.rate {
        Some(rate) if rate.is_finite() && rate > 0.0 => (0..n)
            .map(|i| Duration::from_secs_f64(i as f64 / rate))
            .collect(),
        Some(rate) => {
            return Err(Exit::bad_input(format!(
                "--rate {rate} must be a positive number of requests per second"
            )))
        }
        None => r.offsets,
    };
    let span = offsets.last().copied().unwrap_or_default();
    // --loop: the next round starts one mean gap after the last line, so the rate holds.
    let period = a.repeat.then(|| {
        if n > 1 {
            span + span / (n as u32 - 1).max(1)
        } else {
            Duration::from_secs(1)
        }
    });
    let duration = match (a.repeat, a.duration) {
        (true, Some(d)) => d,
        _ => span + Duration::from_millis(1),
    };
    let mean_rate = n as f64 / period.unwrap_or(duration).as_secs_f64();
    let plan = Plan {
        load: Load::Open {
            rate: mean_rate,
            max_connections: a.connections,
        },
        duration: Some(duration),
        requests: None,
        threads: a.threads,
        timeout: a.timeout,
        names: r.names.len().max(1),
        arrivals: Some(offsets.into()),
        arrivals_period: period,
        ..Plan::default()
    };
    plan.validate()
        .map_err(|e| Exit::bad_input(e.to_string()))?;
    herd_run::ensure_fds(plan.max_connections()).map_err(Exit::from)?;
    let transport = HttpTransport::new(
        target,
        TlsOptions {
            insecure: a.insecure,
            source: None,
        },
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    let production = r.production;
    let script = ReplayScript {
        requests: r.requests.into(),
        ids: r.ids.into(),
    };
    let control = Arc::new(Control::new());
    crate::interrupt::cancel_on_signal(Arc::clone(&control));
    let mut live = Live::new(a.quiet);
    let out = herd_engine::run(
        &plan,
        Arc::new(SystemClock),
        |_| transport.wire(),
        |_| script.clone(),
        control,
        |p| live.update(p),
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    live.clear();
    let config = RunConfig {
        url: url.to_owned(),
        method: "replay".to_owned(),
        model: Model::Open,
        connections: plan.max_connections(),
        rate: Some(mean_rate),
        duration_s: Some(duration.as_secs_f64()),
        requests: None,
        warmup_s: 0.0,
        threads: plan.effective_threads() as u64,
        timeout_s: plan.timeout.as_secs_f64(),
        calls_per_conn: None,
        headers: Vec::new(),
        body_bytes: 0,
    };
    let mut result = herd_run::to_result(url.to_owned(), config, &plan, &out);
    let by_name: Vec<_> = if out.by_name.is_empty() {
        vec![herd_result::name_result(
            r.names.first().map_or("all", String::as_str),
            &out.total,
            out.duration,
        )]
    } else {
        r.names
            .iter()
            .zip(&out.by_name)
            .map(|(name, s)| herd_result::name_result(name, s, out.duration))
            .collect()
    };
    result.by_name = by_name;
    if production.iter().any(Option::is_some) {
        result.extra.insert(
            "replay".to_owned(),
            production_against_now(&r.names, &production, &out),
        );
    }
    result.workload = Some(
        a.files
            .logs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    Ok(result)
}

/// Per request type, the production server's time taken (from the log) beside this run's
/// service time: p50, p95, max, and the change of p95.
fn production_against_now(
    names: &[String],
    production: &[Option<Histogram<u64>>],
    out: &herd_engine::RunOutput,
) -> serde_json::Value {
    let ms = |us: u64| us as f64 / 1e3;
    let rows: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let prod = production.get(i)?.as_ref()?;
            let now = out.by_name.get(i).unwrap_or(&out.total);
            let (p95_then, p95_now) = (prod.value_at_quantile(0.95), now.service.value_at_quantile(0.95));
            Some(serde_json::json!({
                "name": name,
                "production_ms": {"count": prod.len(), "p50": ms(prod.value_at_quantile(0.5)), "p95": ms(p95_then), "max": ms(prod.max())},
                "now_ms": {"count": now.service.len(), "p50": ms(now.service.value_at_quantile(0.5)), "p95": ms(p95_now), "max": ms(now.service.max())},
                "p95_change": p95_change(p95_then, p95_now),
            }))
        })
        .collect();
    serde_json::json!({ "production_vs_now": rows })
}

/// The lines `herd replay` adds to the summary: production against now, per request type.
pub fn render_comparison(result: &RunResult) -> Option<String> {
    let rows = result
        .extra
        .get("replay")?
        .get("production_vs_now")?
        .as_array()?;
    let mut s = String::from(
        "  production against now (the log's time taken; this run's service time), ms:\n",
    );
    s.push_str(&format!(
        "    {:<32} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}   {:>8}\n",
        "type", "was p50", "p95", "max", "now p50", "p95", "max", "p95"
    ));
    for r in rows {
        let f = |k: &str, q: &str| r[k][q].as_f64().unwrap_or(0.0);
        s.push_str(&format!(
            "    {:<32} {:>8.2} {:>8.2} {:>8.2}   {:>8.2} {:>8.2} {:>8.2}   {:>8}\n",
            r["name"].as_str().unwrap_or(""),
            f("production_ms", "p50"),
            f("production_ms", "p95"),
            f("production_ms", "max"),
            f("now_ms", "p50"),
            f("now_ms", "p95"),
            f("now_ms", "max"),
            change_text(&r["p95_change"])
        ));
    }
    Some(s)
}

/// The p95's change as a share; `None` (JSON null) from a production p95 of 0 to more, which no
/// percentage describes (it once read `+0%` for 0.00 -> 0.23 ms).
fn p95_change(then: u64, now: u64) -> Option<f64> {
    match (then, now) {
        (0, 0) => Some(0.0),
        (0, _) => None,
        _ => Some((now as f64 - then as f64) / then as f64),
    }
}

/// `+12%`, or `from 0` where there is no ratio.
pub fn change_text(v: &serde_json::Value) -> String {
    v.as_f64()
        .map_or("from 0".to_owned(), |c| format!("{:+.0}%", c * 100.0))
}

#[cfg(test)]
mod change_tests {
    use super::*;

    #[test]
    fn a_p95_rising_from_zero_is_not_shown_as_unchanged() {
        let json = |c: Option<f64>| serde_json::json!(c);
        assert_eq!(change_text(&json(p95_change(0, 230))), "from 0");
        assert_eq!(change_text(&json(p95_change(0, 0))), "+0%");
        assert_eq!(change_text(&json(p95_change(100, 150))), "+50%");
        assert_eq!(change_text(&json(p95_change(200, 100))), "-50%");
    }
}
