//! What each metric of a criterion measures on a [`RunResult`]: one definition for
//! thresholds, the capacity SLO and the sweep stop rule.

use super::{Criterion, Metric, Stat};
use crate::summary::{Summary, Totals};
use crate::workload::ThresholdResult;
use crate::RunResult;

/// Percent of scheduled requests that did not get an OK answer: transport errors, 4xx/5xx
/// answers and arrivals never sent (dropped). A 503 from an overloaded server is as much a lost
/// visitor as a reset, and so is an arrival herd could not send on time, so all of them count.
pub fn error_percent(r: &RunResult) -> f64 {
    share_not_ok(&r.totals)
}

/// `(errors + failed + dropped) / scheduled`; where nothing was scheduled (a closed model's
/// per-name totals), the requests that ended stand in for the schedule.
fn share_not_ok(t: &Totals) -> f64 {
    let bad = t.errors + t.failed + t.dropped;
    let all = if t.scheduled > 0 {
        t.scheduled
    } else {
        t.completed + t.errors + t.dropped
    };
    if all == 0 {
        return 0.0;
    }
    100.0 * bad as f64 / all as f64
}

impl Criterion {
    /// Measures the criterion's metric on `r` and compares it with the value.
    pub fn evaluate(&self, r: &RunResult) -> ThresholdResult {
        let (totals, rps, latency) = match &self.name {
            None => (&r.totals, r.throughput_rps, &r.latency_ms),
            Some(n) => match r.by_name.iter().find(|b| &b.name == n) {
                Some(b) => (&b.totals, b.throughput_rps, &b.latency_ms),
                None => return self.unmeasured(format!("no request is named `{n}`")),
            },
        };
        self.judge(totals, rps, latency)
    }

    /// Compares the criterion's metric, measured on these figures (a run's, a request name's,
    /// a fault window's seconds'), with its value.
    pub fn judge(&self, totals: &Totals, rps: f64, latency: &Summary) -> ThresholdResult {
        let asked = totals
            .scheduled
            .max(totals.completed + totals.errors + totals.dropped);
        if asked == 0 {
            return self.unmeasured("no requests were measured".to_owned());
        }
        if matches!(self.metric, Metric::Latency(_)) && latency.count == 0 {
            // Latency is of responses: with none, a 0 would pass any limit.
            return self.unmeasured(format!(
                "no responses to measure latency on: all {} requests failed without one",
                crate::format::count(asked)
            ));
        }
        let value = match self.metric {
            Metric::Latency(s) => stat(latency, s),
            Metric::Errors => share_not_ok(totals),
            Metric::Rps => rps,
        };
        ThresholdResult {
            expression: self.text.clone(),
            value,
            unit: self.unit().to_owned(),
            pass: self.op.holds(value, self.value),
            note: None,
        }
    }

    fn unmeasured(&self, note: String) -> ThresholdResult {
        ThresholdResult {
            expression: self.text.clone(),
            value: 0.0,
            unit: self.unit().to_owned(),
            pass: false,
            note: Some(note),
        }
    }
}

/// The statistic `s` of a latency summary, in ms.
pub fn stat(summary: &Summary, s: Stat) -> f64 {
    match s {
        Stat::P50 => summary.p50,
        Stat::P75 => summary.p75,
        Stat::P90 => summary.p90,
        Stat::P95 => summary.p95,
        Stat::P99 => summary.p99,
        Stat::P999 => summary.p999,
        Stat::Mean => summary.mean,
        Stat::Min => summary.min,
        Stat::Max => summary.max,
    }
}
