//! One target at one step as a spreadsheet row: autobench's columns computed from a run, herd's
//! own columns after them, and the rule that ends a sweep once the server is past saturation.

use crate::criteria::error_percent;
use crate::{GeneratorVerdict, Model, RunResult};

/// httperf and autobench count net I/O in KB of 1,024 bytes; keeping theirs keeps old
/// spreadsheets comparable.
const KB: f64 = 1024.0;

/// autobench's columns for one target at one step (httperf's "Reply rate" line and friends).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// Requests sent per second.
    pub req_rate: f64,
    /// Connections opened per second.
    pub con_rate: f64,
    /// Replies (responses of any status) per second over one-second samples.
    pub min_rep_rate: f64,
    pub avg_rep_rate: f64,
    pub max_rep_rate: f64,
    pub stddev_rep_rate: f64,
    /// Mean response time in ms, from each request's intended send time.
    pub resp_time: f64,
    /// Bytes sent and received per second, in KB of 1,024 bytes.
    pub net_io: f64,
    /// Percent of requests without an OK answer: errors, 4xx/5xx, and dropped arrivals.
    pub errors: f64,
    /// herd's own columns; absent in a file autobench wrote.
    pub extra: Option<Extra>,
}

/// Why a table's value cannot have been measured: nothing measured is negative and no share
/// passes 100%. Such a table was edited or damaged, and a plot of it would mislead without a word.
pub fn implausible(x: f64, percent: bool) -> Option<&'static str> {
    if x < 0.0 {
        Some("a measurement cannot be negative")
    } else if percent && x > 100.0 {
        Some("a share of requests cannot pass 100%")
    } else {
        None
    }
}

impl Table {
    /// The first value [`implausible`] refuses, named by its level, target and column.
    pub fn check(&self) -> Result<(), String> {
        for step in &self.steps {
            let at = |what: String| format!("the step at {}, {what}", step.level);
            if let Some(why) = implausible(step.level, false) {
                return Err(at(format!("level {}: {why}", step.level)));
            }
            for (target, r) in self.targets.iter().zip(&step.rows) {
                let x = r.extra.as_ref();
                let cells = [
                    ("req_rate", Some(r.req_rate)),
                    ("con_rate", Some(r.con_rate)),
                    ("min_rep_rate", Some(r.min_rep_rate)),
                    ("avg_rep_rate", Some(r.avg_rep_rate)),
                    ("max_rep_rate", Some(r.max_rep_rate)),
                    ("stddev_rep_rate", Some(r.stddev_rep_rate)),
                    ("resp_time", Some(r.resp_time)),
                    ("net_io", Some(r.net_io)),
                    ("errors", Some(r.errors)),
                    ("p50_ms", x.map(|x| x.p50)),
                    ("p95_ms", x.map(|x| x.p95)),
                    ("p99_ms", x.map(|x| x.p99)),
                    ("p99.9_ms", x.map(|x| x.p999)),
                ];
                for (column, value) in cells {
                    let Some(v) = value else { continue };
                    if let Some(why) = implausible(v, column == "errors") {
                        return Err(at(format!("target `{target}`: `{column}` is {v}: {why}")));
                    }
                }
            }
        }
        Ok(())
    }
}

/// herd's columns after autobench's: percentiles in ms, counts, and whether the step measured
/// the server or herd itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Extra {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub ok: u64,
    pub failed: u64,
    pub generator: GeneratorVerdict,
}

/// A sweep as rows: for each step its level and one row per target, in `targets` order.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Open: levels are demanded req/s (`dem_req_rate`); closed: users (`users`).
    pub model: Model,
    pub targets: Vec<String>,
    /// Suffix every target's columns with `_NAME` even when there is only one, as autobench
    /// does (`req_rate_testhost`): a target given a name (`--target NAME=URL`), or a table read
    /// with suffixes. Otherwise a lone target's columns are bare (`req_rate`).
    pub named: bool,
    pub steps: Vec<TableStep>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableStep {
    pub level: f64,
    pub rows: Vec<Row>,
}

/// The row of one run.
pub fn row_of(r: &RunResult) -> Row {
    let secs = r.duration_s.max(1e-9);
    let per_s = |n: u64| n as f64 / secs;
    // Reply-rate samples are whole seconds of load; a partial last second or the stragglers
    // after the end would read as a dip that never happened.
    let mut samples: Vec<f64> = r.samples().map(|e| (e.ok + e.failed) as f64).collect();
    if samples.is_empty() {
        samples.push(per_s(r.totals.completed));
    }
    let (min, avg, max, sd) = stats(&samples);
    let l = &r.latency_ms;
    Row {
        req_rate: per_s(r.totals.sent),
        con_rate: per_s(r.connect_ms.count),
        min_rep_rate: min,
        avg_rep_rate: avg,
        max_rep_rate: max,
        stddev_rep_rate: sd,
        resp_time: l.mean,
        net_io: (r.totals.bytes_sent + r.totals.bytes_received) as f64 / secs / KB,
        errors: error_percent(r),
        extra: Some(Extra {
            p50: l.p50,
            p95: l.p95,
            p99: l.p99,
            p999: l.p999,
            ok: r.totals.ok,
            failed: r.totals.failed,
            generator: r.generator.verdict,
        }),
    }
}

/// min, mean, max and sample standard deviation (httperf's) of non-empty samples.
fn stats(x: &[f64]) -> (f64, f64, f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let min = x.iter().copied().fold(f64::INFINITY, f64::min);
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sd = if x.len() > 1 {
        (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (min, mean, max, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_httperfs() {
        let (min, avg, max, sd) = stats(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((min, avg, max), (2.0, 5.0, 9.0));
        assert!((sd - 2.138).abs() < 1e-3, "{sd}");
        assert_eq!(stats(&[3.0]), (3.0, 3.0, 3.0, 0.0));
    }
}
