//! The charts of a run over its time axis (throughput, latency percentiles, status codes and
//! errors per second) and its latency distribution.

use super::axis::Axis;
use super::chart::{lines, stacked_bars, Frame, Series, Stack};
use super::{distribution, mid, palette, second_label};
use crate::format::{duration_ms, rate};
use crate::{decode_histogram, Model, RunResult};
use std::collections::BTreeSet;

/// The end of the run's time axis, in seconds since the measurement started: its length, or
/// the end of its last second.
pub(super) fn run_end(r: &RunResult) -> f64 {
    let last = r.timeline.last().map_or(0.0, |e| e.t as f64 + 1.0);
    last.max(r.duration_s)
}

/// The run's time axis, shared by every chart over time in its report so they line up.
pub(super) fn time_axis(r: &RunResult) -> Axis {
    Axis::time(run_end(r))
}

pub fn throughput_chart(r: &RunResult) -> String {
    let all: Vec<(f64, f64)> = r.timeline.iter().map(|e| (mid(e), e.rps)).collect();
    let not_ok: Vec<(f64, f64)> = r
        .timeline
        .iter()
        .map(|e| {
            let share = if e.requests > 0 {
                (e.failed + e.errors) as f64 / e.requests as f64
            } else {
                0.0
            };
            (mid(e), e.rps * share)
        })
        .collect();
    let max = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let value = |v: f64| format!("{} req/s", rate(v));
    let mut series = vec![Series::new("requests ended per second", palette::BLUE, all)];
    if not_ok.iter().any(|p| p.1 > 0.0) {
        series.push(Series::new("of which not ok", palette::RED, not_ok));
    }
    if let (Model::Open, Some(rps)) = (r.config.model, r.config.rate) {
        let end = time_axis(r).hi;
        series
            .push(Series::new("target rate", palette::GREY, vec![(0.0, rps), (end, rps)]).dashed());
    }
    let max = max.max(r.config.rate.unwrap_or(0.0));
    lines(
        &Frame {
            id: "chart-throughput",
            title: "Requests per second",
            x: time_axis(r),
            y: Axis::linear("requests per second (req/s)", max * 1.05),
            height: 220.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
    )
}

pub fn latency_chart(r: &RunResult) -> String {
    let busy = || r.timeline.iter().filter(|e| e.requests > 0);
    let pick =
        |f: fn(&crate::TimelineEntry) -> f64| busy().map(|e| (mid(e), f(e))).collect::<Vec<_>>();
    let series = vec![
        Series::new("p50", palette::BLUE, pick(|e| e.p50_ms)),
        Series::new("p90", palette::GREEN, pick(|e| e.p90_ms)),
        Series::new("p99", palette::ORANGE, pick(|e| e.p99_ms)),
        Series::new("max", palette::RED, pick(|e| e.max_ms)).dashed(),
    ];
    let max = busy().map(|e| e.max_ms).fold(0.0, f64::max);
    let value = |ms: f64| duration_ms(ms);
    lines(
        &Frame {
            id: "chart-latency",
            title: "Latency percentiles per second (from the intended send time)",
            x: time_axis(r),
            y: Axis::duration("latency", max * 1.05),
            height: 240.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
    )
}

pub fn distribution_chart(r: &RunResult) -> String {
    let mut series = Vec::new();
    for (name, encoded, color) in [
        (
            "latency (from the intended send)",
            &r.histograms.latency,
            palette::BLUE,
        ),
        (
            "service time (from the actual send)",
            &r.histograms.service_time,
            palette::ORANGE,
        ),
    ] {
        if let Ok(h) = decode_histogram(encoded) {
            let s = Series::new(name, color, distribution::points(&h));
            series.push(if series.is_empty() { s } else { s.dashed() });
        }
    }
    if series.len() == 2 && series[0].points == series[1].points {
        // Closed model: latency and service time coincide; one line says it.
        series.truncate(1);
        series[0].name = "latency = service time".to_owned();
    }
    distribution::chart(
        "chart-distribution",
        "Latency by percentile (whole run, from the histograms)",
        series,
    )
}

pub fn status_chart(r: &RunResult) -> String {
    let n = r.timeline.len();
    // At most ~240 bars: longer runs are summed into buckets of whole seconds.
    let bucket = n.div_ceil(240).max(1);
    let starts: Vec<f64> = (0..n.div_ceil(bucket))
        .map(|i| (i * bucket) as f64)
        .collect();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut errors: BTreeSet<String> = BTreeSet::new();
    for e in &r.timeline {
        keys.extend(e.status_class.keys().cloned());
        errors.extend(e.error_kinds.keys().cloned());
    }
    let sum = |get: &dyn Fn(&crate::TimelineEntry) -> u64| -> Vec<f64> {
        r.timeline
            .chunks(bucket)
            .map(|c| c.iter().map(get).sum::<u64>() as f64 / c.len() as f64)
            .collect()
    };
    let mut stacks = Vec::new();
    for k in &keys {
        stacks.push(Stack {
            name: k.clone(),
            color: palette::status(k).to_owned(),
            values: sum(&|e| *e.status_class.get(k).unwrap_or(&0)),
        });
    }
    for (i, k) in errors.iter().enumerate() {
        stacks.push(Stack {
            name: format!("error: {k}"),
            color: palette::error(i).to_owned(),
            values: sum(&|e| *e.error_kinds.get(k).unwrap_or(&0)),
        });
    }
    let max = (0..starts.len())
        .map(|i| stacks.iter().map(|s| s.values[i]).sum::<f64>())
        .fold(0.0, f64::max);
    let value = |v: f64| format!("{}/s", rate(v));
    let head = move |t: f64| {
        if bucket == 1 {
            second_label(t)
        } else {
            format!("t = {} .. {} s", t as u64, t as u64 + bucket as u64)
        }
    };
    let title = if bucket == 1 {
        "Responses and errors per second, by class".to_owned()
    } else {
        format!("Responses and errors per second, by class ({bucket} s buckets)")
    };
    stacked_bars(
        &Frame {
            id: "chart-statuses",
            title: &title,
            x: time_axis(r),
            y: Axis::linear("per second (1/s)", max * 1.05),
            height: 200.0,
            x_label: &head,
            y_label: &value,
        },
        &starts,
        bucket as f64,
        &stacks,
    )
}
