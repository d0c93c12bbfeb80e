//! `herd replay LOG... --target URL`: the logs read into a `herd_run::Replay` (each line an
//! arrival at its own offset, identical requests built once), which herd-run plays as any other
//! run; and the summary's lines of production against now.

use crate::exit::Exit;
use crate::replay_cmd::ReplayArgs;
use herd_http::{prepare, RequestSpec, Target};
use herd_logs::replay::{arrivals, ReplayOptions, Skipped};
use herd_logs::source::{FormatSpec, ReadStats};
use herd_result::RunResult;
use herd_run::Replay;
use std::collections::HashMap;

/// Request types beyond this many are reported together as `other`.
const MAX_NAMES: usize = 50;

/// A log read into what the engine plays, and what reading it found.
pub struct Read {
    pub replay: Replay,
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
) -> Result<Read, Exit> {
    let mut by_key: HashMap<(String, String, Option<String>, Option<String>), u32> = HashMap::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut r = Replay {
        repeat: a.repeat,
        logs: a
            .files
            .logs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        ..Replay::default()
    };
    let mut invalid = 0;
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
                        invalid += 1;
                        return;
                    };
                    // Named as `herd logs` and `herd model` name it, query parameters included.
                    let (path, query) = arr
                        .path_and_query
                        .split_once('?')
                        .unwrap_or((&arr.path_and_query, ""));
                    herd_logs::pattern::template(
                        arr.method.as_bytes(),
                        path.as_bytes(),
                        query.as_bytes(),
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
    Ok(Read {
        replay: r,
        stats,
        skipped,
        invalid,
    })
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

/// `+12%`, or `from 0` where there is no ratio.
pub fn change_text(v: &serde_json::Value) -> String {
    v.as_f64()
        .map_or("from 0".to_owned(), |c| format!("{:+.0}%", c * 100.0))
}

#[cfg(test)]
mod change_tests {
    use super::*;
    use herd_run::p95_change;

    #[test]
    fn a_p95_rising_from_zero_is_not_shown_as_unchanged() {
        let json = |c: Option<f64>| serde_json::json!(c);
        assert_eq!(change_text(&json(p95_change(0, 230))), "from 0");
        assert_eq!(change_text(&json(p95_change(0, 0))), "+0%");
        assert_eq!(change_text(&json(p95_change(100, 150))), "+50%");
        assert_eq!(change_text(&json(p95_change(200, 100))), "-50%");
    }
}
