//! Runs side by side: the change of each metric against the first (base) run, whether it is
//! beyond noise, and whether it is a regression that should stop a release (`herd compare`).
//!
//! A metric regressed when it got worse by more than the threshold *and* the change is beyond
//! noise. Noise is judged on each run's per-second timeline (Welch's t-test, 95%,
//! [`significance`]) for the key metrics, which gate; metrics the timeline does not carry are
//! judged from the histograms (95% intervals of the quantile) and are shown but do not gate.
//! docs/compare.md says why. [`Comparison::document`] is what `herd compare --json` writes
//! (`schema/compare.schema.json`); the text and HTML renderings are herd-report's.
//!
//! ```
//! use herd_compare::{compare, Judgement};
//! # let json = include_str!("../../result/tests/fixtures/run-open.json");
//! let run = herd_result::parse_json(json, "run-open.json").unwrap();
//! let c = compare(&[("base".into(), &run), ("new".into(), &run)], 0.10);
//! let p99 = c.metrics.iter().find(|m| m.metric.key == "p99").unwrap();
//! assert_eq!(p99.changes[0].unwrap().judgement, Judgement::Unchanged);
//! assert!(c.passed());
//! ```

mod asked;
mod files;
mod noise;
pub mod significance;

pub use files::{baseline_label, read_runs};
use herd_result::sections::{self, NameStats};
use herd_result::RunResult;
use noise::{histogram_noise, judge};
pub use noise::{per_second, Noise, ALPHA, MIN_SECONDS};
use serde::Serialize;

/// A run as the comparison names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunLabel {
    /// What the user called it: usually the file name.
    pub label: String,
    pub target: String,
    pub started_at: String,
    pub duration_s: f64,
    /// A run killed before it finished its file: how much of it the comparison has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// The seconds a partial result holds, of those its plan asked for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Partial {
    pub seconds: u64,
    /// The measurement's planned length in seconds; `None` for a run bounded by a count.
    pub of: Option<u64>,
}

impl Partial {
    fn of(r: &RunResult) -> Option<Partial> {
        r.is_partial().then(|| Partial {
            seconds: r.timeline.len() as u64,
            of: r.config.duration_s.map(|d| d.ceil() as u64),
        })
    }
}

impl std::fmt::Display for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.of {
            Some(of) => write!(f, "partial ({} of {of} seconds)", self.seconds),
            None => write!(f, "partial ({} seconds)", self.seconds),
        }
    }
}

/// What a metric measures and which way is worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Metric {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// Counts towards the verdict (judged on per-second samples).
    pub gates: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    PerSecond,
    Ms,
    /// A share, 0..=1.
    Share,
    Bytes,
}

/// One metric across the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricRow {
    pub metric: Metric,
    /// One value per run; `None` when the run does not have it.
    pub values: Vec<Option<f64>>,
    /// The change of runs 2.. against run 1; `changes[i]` is run `i + 1`.
    pub changes: Vec<Option<Change>>,
}

/// How one run differs from the base in one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Change {
    /// Relative change, `new / base - 1`; infinite when the base is 0 and the new value is not.
    pub fraction: f64,
    pub noise: Noise,
    pub judgement: Judgement,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// Exactly the same value.
    Unchanged,
    /// Changed by no more than the threshold.
    WithinThreshold,
    /// Changed by more than the threshold, but no more than the runs vary on their own.
    WithinNoise,
    /// Worse by more than the threshold and beyond noise (or noise unknown).
    Regressed,
    /// Better by more than the threshold and beyond noise (or noise unknown).
    Improved,
}

/// Per-request-name rows: one metric of one name across the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NameRow {
    pub name: String,
    pub row: MetricRow,
}

/// Everything `herd compare` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// What counts as a regression: 0.10 for 10%.
    pub threshold: f64,
    pub runs: Vec<RunLabel>,
    pub metrics: Vec<MetricRow>,
    pub names: Vec<NameRow>,
    /// Where a run asked something else than the base (rate, users, target, model, length).
    pub warnings: Vec<String>,
}

/// What `herd compare --json` writes (`schema/compare.schema.json`): the comparison with its
/// verdict. Infinite changes (from a base of 0) are written as `null`.
#[derive(Clone, Debug, Serialize)]
pub struct CompareDocument<'a> {
    pub herd_version: &'static str,
    /// [`herd_result::SCHEMA_VERSION`].
    pub schema_version: u32,
    pub kind: &'static str,
    /// No key metric regressed: `herd compare` exits 0.
    pub passed: bool,
    pub regressions: Vec<Regression>,
    #[serde(flatten)]
    pub comparison: &'a Comparison,
}

/// A metric that regressed, for the verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Regression {
    pub run: String,
    pub metric: String,
    pub fraction: f64,
}

impl Comparison {
    /// The comparison as `herd compare --json` writes it.
    pub fn document(&self) -> CompareDocument<'_> {
        let regressions = self.regressions();
        CompareDocument {
            herd_version: herd_result::HERD_VERSION,
            schema_version: herd_result::SCHEMA_VERSION,
            kind: "compare",
            passed: regressions.is_empty(),
            regressions,
            comparison: self,
        }
    }

    /// Key metrics that regressed, in table order; empty means the comparison passed.
    pub fn regressions(&self) -> Vec<Regression> {
        let mut out = Vec::new();
        for row in self.metrics.iter().filter(|r| r.metric.gates) {
            for (i, c) in row.changes.iter().enumerate() {
                if let Some(c) = c.filter(|c| c.judgement == Judgement::Regressed) {
                    out.push(Regression {
                        run: self.runs[i + 1].label.clone(),
                        metric: row.metric.label.to_owned(),
                        fraction: c.fraction,
                    });
                }
            }
        }
        out
    }

    pub fn passed(&self) -> bool {
        self.regressions().is_empty()
    }
}

const fn metric(key: &'static str, label: &'static str, unit: Unit, gates: bool) -> Metric {
    Metric {
        key,
        label,
        unit,
        higher_is_better: matches!(unit, Unit::PerSecond),
        gates,
    }
}

/// The metrics compared, in the order shown.
pub const METRICS: [Metric; 15] = [
    metric("throughput", "throughput", Unit::PerSecond, true),
    metric("error_rate", "error rate", Unit::Share, true),
    metric("p50", "latency p50", Unit::Ms, true),
    metric("p75", "latency p75", Unit::Ms, false),
    metric("p90", "latency p90", Unit::Ms, true),
    metric("p95", "latency p95", Unit::Ms, false),
    metric("p99", "latency p99", Unit::Ms, true),
    metric("p999", "latency p99.9", Unit::Ms, false),
    metric("max", "latency max", Unit::Ms, false),
    metric("mean", "latency mean", Unit::Ms, false),
    metric("bytes", "response size", Unit::Bytes, false),
    // An LLM's streams: what its users wait for. Runs without event streams leave them
    // unrecorded, never judged.
    metric("ttft_p50", "ttft p50", Unit::Ms, true),
    metric("ttft_p99", "ttft p99", Unit::Ms, true),
    metric("itl_p50", "itl p50", Unit::Ms, true),
    metric("itl_p99", "itl p99", Unit::Ms, true),
];

/// Compares runs against the first; `threshold` is a fraction (0.10 for 10%).
pub fn compare(runs: &[(String, &RunResult)], threshold: f64) -> Comparison {
    let labels = runs
        .iter()
        .map(|(label, r)| RunLabel {
            label: label.clone(),
            target: r.target.clone(),
            started_at: r.started_at.clone(),
            duration_s: r.duration_s,
            partial: Partial::of(r),
        })
        .collect();
    let metrics = METRICS
        .iter()
        .map(|m| {
            let values: Vec<_> = runs.iter().map(|(_, r)| value(m.key, r)).collect();
            // A figure one side did not record (a partial result's) is never judged.
            let changes = runs
                .iter()
                .skip(1)
                .map(|(_, r)| {
                    let (base, new) = (value(m.key, runs[0].1)?, value(m.key, r)?);
                    let noise = judge(m.key, runs[0].1, r);
                    Some(change(m, base, new, noise, threshold))
                })
                .collect();
            MetricRow {
                metric: *m,
                values,
                changes,
            }
        })
        // An event stream's figures only where a run read streams: no rows of "not recorded"
        // in every comparison of plain requests.
        .filter(|row| !(is_stream(row.metric.key) && row.values.iter().all(Option::is_none)))
        .collect();
    Comparison {
        threshold,
        runs: labels,
        metrics,
        names: name_rows(runs, threshold),
        warnings: runs
            .iter()
            .skip(1)
            .flat_map(|(label, r)| asked::differences(runs[0].1, r, label))
            .collect(),
    }
}

/// A metric of event streams (`ttft_p50`, `itl_p99`...).
fn is_stream(key: &str) -> bool {
    key.starts_with("ttft") || key.starts_with("itl")
}

/// Judges one change. Public so the rule can be tested as a table.
pub fn change(m: &Metric, base: f64, new: f64, noise: Noise, threshold: f64) -> Change {
    let fraction = if base == new {
        0.0
    } else if base == 0.0 {
        f64::INFINITY * (new - base).signum()
    } else {
        new / base - 1.0
    };
    let worse = if m.higher_is_better {
        fraction < 0.0
    } else {
        fraction > 0.0
    };
    let judgement = if fraction == 0.0 {
        Judgement::Unchanged
    } else if fraction.abs() <= threshold {
        Judgement::WithinThreshold
    } else if noise.beyond() == Some(false) {
        Judgement::WithinNoise
    } else if worse {
        Judgement::Regressed
    } else {
        Judgement::Improved
    };
    Change {
        fraction,
        noise,
        judgement,
    }
}

/// The whole-run value of a metric; `None` where the result did not record it.
fn value(key: &str, r: &RunResult) -> Option<f64> {
    let l = &r.latency_ms;
    Some(match key {
        "throughput" => r.throughput_rps,
        "error_rate" => error_rate(r),
        "p50" => l.p50,
        "p75" => l.p75,
        "p90" => l.p90,
        "p95" => l.p95,
        "p99" => l.p99,
        "p999" => l.p999,
        "max" => l.max,
        "mean" => l.mean,
        "bytes" if !r.recorded("response_bytes") => return None,
        "bytes" => r.response_bytes.mean,
        "ttft_p50" => r.streams.as_ref()?.ttft_ms.p50,
        "ttft_p99" => r.streams.as_ref()?.ttft_ms.p99,
        "itl_p50" => r.streams.as_ref()?.itl_ms.p50,
        "itl_p99" => r.streams.as_ref()?.itl_ms.p99,
        _ => unreachable!("unknown metric {key}"),
    })
}

/// The share of scheduled requests that were not ok (docs/results.md).
pub fn error_rate(r: &RunResult) -> f64 {
    let t = &r.totals;
    if t.scheduled == 0 {
        0.0
    } else {
        t.scheduled.saturating_sub(t.ok) as f64 / t.scheduled as f64
    }
}

/// Rows for every request name any run has (a name missing from a run shows as absent there).
/// Per-name rows never gate: results carry no per-name timeline to judge their noise by.
fn name_rows(runs: &[(String, &RunResult)], threshold: f64) -> Vec<NameRow> {
    let per_run: Vec<Vec<NameStats>> = runs
        .iter()
        .map(|(_, r)| sections::names(&sections::to_value(r), "by_name"))
        .collect();
    let mut order: Vec<String> = Vec::new();
    for n in per_run.iter().flatten() {
        if !order.contains(&n.name) {
            order.push(n.name.clone());
        }
    }
    type Get = fn(&NameStats) -> Option<f64>;
    // The metric, how to read it, and its quantile for the histogram noise test (0: none).
    const NAME_METRICS: [(Metric, Get, f64); 4] = [
        (metric("p50", "p50", Unit::Ms, false), |n| n.p50, 0.5),
        (metric("p95", "p95", Unit::Ms, false), |n| n.p95, 0.95),
        (metric("p99", "p99", Unit::Ms, false), |n| n.p99, 0.99),
        (
            metric("error_rate", "error rate", Unit::Share, false),
            |n| n.error_rate,
            0.0,
        ),
    ];
    let mut rows = Vec::new();
    for name in order {
        let stats: Vec<Option<&NameStats>> = per_run
            .iter()
            .map(|list| list.iter().find(|n| n.name == name))
            .collect();
        for (m, get, quantile) in NAME_METRICS {
            let values: Vec<Option<f64>> = stats.iter().map(|s| s.and_then(get)).collect();
            if values.iter().all(Option::is_none) {
                continue;
            }
            let changes = (1..runs.len())
                .map(|i| {
                    let (base, new) = (values[0]?, values[i]?);
                    let noise = match (
                        stats[0]?.histogram.as_deref(),
                        stats[i]?.histogram.as_deref(),
                    ) {
                        (Some(a), Some(b)) if quantile > 0.0 => histogram_noise(a, b, quantile),
                        _ => Noise::Unknown,
                    };
                    Some(change(&m, base, new, noise, threshold))
                })
                .collect();
            rows.push(NameRow {
                name: name.clone(),
                row: MetricRow {
                    metric: m,
                    values,
                    changes,
                },
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests;
