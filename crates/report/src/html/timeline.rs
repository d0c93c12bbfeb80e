//! The charts of a run over its time axis (throughput, latency percentiles, status codes and
//! errors per second) and its latency distribution.

use super::axis::Axis;
use super::chart::{lines, stacked_bars, Frame, Stack};
use super::{distribution, figure, palette, second_label};
use crate::figure::run_figure;
use crate::format::{duration_ms, rate};
use crate::RunResult;
use std::collections::BTreeSet;

pub(super) use crate::figure::run_end;

/// The run's time axis, shared by every chart over time in its report so they line up.
pub(super) fn time_axis(r: &RunResult) -> Axis {
    Axis::time(run_end(r))
}

pub fn throughput_chart(r: &RunResult) -> String {
    let series = figure::series(&run_figure(r).panels[0]);
    let max = r.timeline.iter().map(|e| e.rps).fold(0.0, f64::max);
    let value = |v: f64| format!("{} req/s", rate(v));
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
    let series = figure::series(&run_figure(r).panels[1]);
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
    let series = figure::series(&run_figure(r).panels[2]);
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
