//! `herd replay LOG... --target URL`: a log's requests sent with their recorded timing (or at a
//! fixed `--rate`), as an open-model run on the one engine: each line is an arrival at its own
//! offset, and its latency is measured from that offset (no coordinated omission). Identical
//! requests are built once; a line costs its offset and a request number.

use crate::exit::Exit;
use crate::progress::Live;
use crate::replay_cmd::ReplayArgs;
use herd_engine::{Action, Control, Ctx, Last, Load, Plan, Request, Script, SystemClock};
use herd_http::{prepare, HttpTransport, RequestSpec, Target, TlsOptions};
use herd_logs::replay::{arrivals, ReplayOptions, Skipped};
use herd_logs::source::{FormatSpec, ReadStats};
use herd_report::{Model, RunConfig, RunResult};
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
    };
    let mut key_buf = Vec::new();
    let (stats, skipped) = arrivals(&a.logs, spec, a.fields.as_deref(), opts, |arr| {
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
    })
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
            (Last::Start, Some(i)) => match self.ids.get(i as usize) {
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
    let duration = span + Duration::from_millis(1);
    let mean_rate = n as f64 / duration.as_secs_f64();
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
        ..Plan::default()
    };
    plan.validate()
        .map_err(|e| Exit::bad_input(e.to_string()))?;
    crate::limits::ensure_fds(plan.max_connections())?;
    let transport = HttpTransport::new(
        target,
        TlsOptions {
            insecure: a.insecure,
            source: None,
        },
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
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
    let mut result = crate::run::to_result(url.to_owned(), config, &plan, &out);
    let by_name: Vec<_> = if out.by_name.is_empty() {
        vec![herd_report::name_result(
            r.names.first().map_or("all", String::as_str),
            &out.total,
            out.duration,
        )]
    } else {
        r.names
            .iter()
            .zip(&out.by_name)
            .map(|(name, s)| herd_report::name_result(name, s, out.duration))
            .collect()
    };
    result.by_name = by_name;
    result.workload = Some(
        a.logs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    Ok(result)
}
