//! A workload's `faults:` played on the run's timeline: checked before any load (the API
//! answers, each proxy exists, each window lies inside the run), driven on a thread of their
//! own while the engine runs (`driver`), and written into the result as windows with their
//! thresholds and recovery (herd-result's `fault`).

mod api;
mod driver;

pub(crate) use api::Api;
pub(crate) use driver::{Driver, Log, Notice};

use herd_engine::Plan;
use herd_result::{FaultWindow, RunResult};
use herd_workload::{did_you_mean, Fault, Workload};
use std::path::Path;
use std::time::SystemTime;

/// Where the faults' API is: `$TOXIPROXY_URL` (as toxiproxy's clients find it), else the file's
/// `proxy_api:`, else toxiproxy's default.
pub(crate) fn api_url(workload: &Workload) -> String {
    std::env::var("TOXIPROXY_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .or_else(|| workload.proxy_api.clone())
        .unwrap_or_else(|| api::DEFAULT_URL.to_owned())
}

/// Every problem with playing `workload`'s faults as `plan`, before anything is sent.
/// `alone`: a run of the file at its own load, not a level of a series or a shard.
pub(crate) fn check(workload: &Workload, file: &Path, plan: &Plan, alone: bool) -> Vec<String> {
    let faults = &workload.faults;
    if faults.is_empty() {
        return Vec::new();
    }
    let file = file.display();
    if !alone {
        return vec![format!(
            "{file}: `faults:` play only in `herd run {file}` at the file's own load, not in a sweep, a capacity search or a shard: remove them for this run"
        )];
    }
    let mut problems = Vec::new();
    if let Some(length) = plan.length() {
        let measured = length.saturating_sub(plan.warmup);
        for f in faults.iter().filter(|f| f.end() > measured) {
            problems.push(format!(
                "{file}:{}: the fault ends at {} from the start of the measurement, after the run's {}: shorten `for:` or lengthen the run",
                f.line,
                humantime::format_duration(f.end()),
                humantime::format_duration(measured)
            ));
        }
    }
    let url = api_url(workload);
    let names = match Api::new(&url).and_then(|a| a.proxies()) {
        Ok(names) => names,
        Err(e) => {
            problems.push(format!(
                "{file}: faults: the proxy API at {url} does not answer ({e}): start `herd proxy` (its API on 127.0.0.1:8474), or set TOXIPROXY_URL or `proxy_api:` to where it listens"
            ));
            return problems;
        }
    };
    for f in faults.iter().filter(|f| !names.contains(&f.proxy)) {
        let hint = did_you_mean(&f.proxy, names.iter().map(String::as_str))
            .unwrap_or_else(|| format!("its proxies: {}", names.join(", ")));
        problems.push(format!(
            "{file}:{}: no proxy `{}` on the API at {url} ({hint})",
            f.line, f.proxy
        ));
    }
    problems
}

/// Starts playing the faults on a timeline whose second 0 is about `origin`.
pub(crate) fn start(workload: &Workload, origin: SystemTime) -> Result<Option<Driver>, String> {
    if workload.faults.is_empty() {
        return Ok(None);
    }
    let api = Api::new(&api_url(workload))?;
    Driver::start(api, workload.faults.clone(), origin).map(Some)
}

/// The windows played, placed on the result's timeline (second 0 at `measure_start`), each
/// with its own thresholds judged and its recovery; what went wrong becomes a warning.
pub(crate) fn add_to(
    result: &mut RunResult,
    log: Log,
    faults: &[Fault],
    thresholds: &[herd_result::Criterion],
    measure_start: SystemTime,
) {
    let at = |t: SystemTime| seconds(t, measure_start);
    for p in &log.played {
        let f = &faults[p.index];
        let (start_s, end_s) = (at(p.added), at(p.removed));
        result.faults.push(FaultWindow {
            proxy: f.proxy.clone(),
            toxic: f.toxic.clone(),
            name: p.name.clone(),
            stream: f.stream.clone(),
            attributes: serde_json::Value::Object(f.attributes.clone()),
            description: f.describe(),
            start_s: round_ms(start_s),
            end_s: round_ms(end_s),
            thresholds: herd_result::fault::judge_window(result, start_s, end_s, &f.thresholds),
            recovery: herd_result::fault::recovery(result, start_s, end_s, thresholds),
        });
    }
    herd_result::fault::mark_timeline(result);
    result.warnings.extend(log.problems);
}

/// A notice as the window a sink is told of (its end the planned one while in force).
pub(crate) fn window_of(n: &Notice, faults: &[Fault], measure_start: SystemTime) -> FaultWindow {
    let f = &faults[n.index];
    let start_s = seconds(n.added, measure_start);
    let end_s = match n.removed {
        Some(t) => seconds(t, measure_start),
        None => start_s + f.length.as_secs_f64(),
    };
    FaultWindow {
        proxy: f.proxy.clone(),
        toxic: f.toxic.clone(),
        name: driver::toxic_name(n.index),
        stream: f.stream.clone(),
        attributes: serde_json::Value::Object(f.attributes.clone()),
        description: f.describe(),
        start_s: round_ms(start_s),
        end_s: round_ms(end_s),
        thresholds: Vec::new(),
        recovery: Default::default(),
    }
}

/// `t` in seconds of the timeline (negative before second 0).
fn seconds(t: SystemTime, measure_start: SystemTime) -> f64 {
    match t.duration_since(measure_start) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

fn round_ms(s: f64) -> f64 {
    (s * 1e3).round() / 1e3
}
