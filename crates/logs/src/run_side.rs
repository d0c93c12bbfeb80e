//! herd's side of `herd logs --against`, read from a run's result: what herd sent, to set beside
//! what the server logged.

use crate::against::{NameSide, RunSide};
use herd_result::RunResult;
use std::collections::BTreeMap;

impl RunSide {
    /// The run's requests per second, status classes and service times, per request name (or,
    /// for a URL run, its one request named as the log's lines are).
    pub fn of(r: &RunResult) -> Result<RunSide, String> {
        let start = crate::time::Clock::default()
            .iso8601(r.started_at.as_bytes())
            .ok_or_else(|| format!("the result's started_at `{}` is not a time", r.started_at))?;
        Ok(RunSide {
            start: start.micros as f64 / 1e6,
            duration_s: r.duration_s,
            per_second: r.timeline.iter().map(|t| t.requests).collect(),
            status_classes: class_of(&r.status),
            service_ms: (r.service_time_ms.p50, r.service_time_ms.p95),
            names: if r.by_name.is_empty() {
                url_name(r, class_of(&r.status)).into_iter().collect()
            } else {
                r.by_name
                    .iter()
                    .map(|n| NameSide {
                        name: n.name.clone(),
                        requests: n.totals.completed + n.totals.errors,
                        status_classes: class_of(&n.status),
                        service_ms: (n.service_time_ms.p50, n.service_time_ms.p95),
                    })
                    .collect()
            },
        })
    }
}

/// Status codes counted by class (`2xx`), anything else as `other`.
fn class_of(status: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = BTreeMap::new();
    for (code, n) in status {
        let k = match code.parse::<u16>() {
            Ok(c @ 100..=599) => format!("{}xx", c / 100),
            _ => "other".into(),
        };
        *m.entry(k).or_default() += n;
    }
    m
}

/// A URL run's one request type, named as the log's lines are (`GET /path`), so its row holds
/// herd's count rather than `herd 0`.
fn url_name(r: &RunResult, status_classes: BTreeMap<String, u64>) -> Option<NameSide> {
    let rest = r.config.url.split_once("://")?.1;
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("/");
    Some(NameSide {
        name: format!("{} {path}", r.config.method),
        requests: r.totals.completed + r.totals.errors,
        status_classes,
        service_ms: (r.service_time_ms.p50, r.service_time_ms.p95),
    })
}
