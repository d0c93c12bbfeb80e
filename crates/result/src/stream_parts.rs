//! What a line of the stream carries beside its timeline entry: the second per request name,
//! per scenario and per check, and the partial result's sections rebuilt from them, so a run
//! killed before its end keeps its per-name, per-scenario and per-check numbers.

use crate::build::per_second;
use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::{CheckResult, NameResult, ReportError, ScenarioResult, Totals};
use hdrhistogram::Histogram;
use herd_metrics::{new_histogram, ByName};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One request name's second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NameLine {
    pub name: String,
    pub ok: u64,
    pub failed: u64,
    pub errors: u64,
    /// Its responses' latency (microseconds), encoded as the result's histograms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
}

/// Iterations of one scenario that ended in the second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioLine {
    pub name: String,
    pub iterations: u64,
}

/// Passes and fails of one check in the second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckLine {
    pub name: String,
    pub passes: u64,
    pub fails: u64,
}

/// The lines of a second's names; `name(i)` names index `i`.
pub fn name_lines(by_name: &ByName, name: impl Fn(u32) -> String) -> Vec<NameLine> {
    by_name
        .iter()
        .map(|n| NameLine {
            name: name(n.name),
            ok: n.ok,
            failed: n.failed,
            errors: n.errors,
            latency_histogram: (!n.latency.is_empty())
                .then(|| encode_histogram(&n.latency.to_histogram())),
        })
        .collect()
}

/// The per-name, per-scenario and per-check sections of a partial result, added up line by
/// line in the order names first appear.
#[derive(Default)]
pub struct Sections {
    names: Vec<(String, Totals, Histogram<u64>)>,
    scenarios: Vec<(String, u64)>,
    checks: Vec<(String, u64, u64)>,
}

fn slot<'a, T>(
    v: &'a mut Vec<T>,
    name: &str,
    key: impl Fn(&T) -> &str,
    new: impl FnOnce() -> T,
) -> &'a mut T {
    let i = match v.iter().position(|x| key(x) == name) {
        Some(i) => i,
        None => {
            v.push(new());
            v.len() - 1
        }
    };
    &mut v[i]
}

impl Sections {
    pub fn add(
        &mut self,
        names: &[NameLine],
        scenarios: &[ScenarioLine],
        checks: &[CheckLine],
    ) -> Result<(), ReportError> {
        for n in names {
            let (_, t, h) = slot(
                &mut self.names,
                &n.name,
                |x| &x.0,
                || (n.name.clone(), Totals::default(), new_histogram()),
            );
            t.ok += n.ok;
            t.failed += n.failed;
            t.errors += n.errors;
            if let Some(enc) = &n.latency_histogram {
                let _ = h.add(decode_histogram(enc)?);
            }
        }
        for s in scenarios {
            slot(
                &mut self.scenarios,
                &s.name,
                |x| &x.0,
                || (s.name.clone(), 0),
            )
            .1 += s.iterations;
        }
        for c in checks {
            let e = slot(
                &mut self.checks,
                &c.name,
                |x| &x.0,
                || (c.name.clone(), 0, 0),
            );
            e.1 += c.passes;
            e.2 += c.fails;
        }
        Ok(())
    }

    pub fn by_name(&self, duration_s: f64) -> Vec<NameResult> {
        self.names
            .iter()
            .map(|(name, t, h)| {
                let mut totals = t.clone();
                totals.completed = t.ok + t.failed;
                totals.sent = totals.completed + t.errors;
                totals.scheduled = totals.sent;
                NameResult {
                    name: name.clone(),
                    throughput_rps: per_second(totals.completed, duration_s),
                    totals,
                    status: BTreeMap::new(),
                    errors: BTreeMap::new(),
                    latency_ms: summarize_us(h),
                    service_time_ms: Default::default(),
                    time_to_error_ms: Default::default(),
                    response_bytes: Default::default(),
                    connect_ms: None,
                    phases: None,
                    histograms: None,
                    streams: None,
                }
            })
            .collect()
    }

    pub fn by_scenario(&self) -> Vec<ScenarioResult> {
        self.scenarios
            .iter()
            .map(|(name, iterations)| ScenarioResult {
                name: name.clone(),
                weight: 0,
                iterations: *iterations,
                duration_ms: Default::default(),
                duration_histogram: None,
            })
            .collect()
    }

    pub fn checks(&self) -> Vec<CheckResult> {
        self.checks
            .iter()
            .map(|(name, passes, fails)| CheckResult {
                name: name.clone(),
                passes: *passes,
                fails: *fails,
                sample: None,
            })
            .collect()
    }
}
