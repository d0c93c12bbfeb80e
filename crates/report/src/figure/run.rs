//! One run over time, and its latency distribution (HdrHistogram's plotter, in pure Rust).

use super::{palette, Figure, Panel, Series, XAxis};
use crate::{decode_histogram, RunResult};

/// Throughput and latency percentiles second by second, and the percentile distribution of
/// latency and service time on a log scale.
pub fn run_figure(r: &RunResult) -> Figure {
    let t = |e: &crate::TimelineEntry| e.t as f64;
    let line = |label: &str, color: &'static str, dashed: bool, points: Vec<(f64, f64)>| Series {
        label: label.to_owned(),
        color,
        dashed,
        markers: false,
        points,
        suspect: Vec::new(),
    };
    let tl = &r.timeline;
    let throughput = vec![
        line(
            "ok/s",
            palette::GREEN,
            false,
            tl.iter().map(|e| (t(e), e.ok as f64)).collect(),
        ),
        line(
            "failed + errors/s",
            palette::RED,
            false,
            tl.iter()
                .map(|e| (t(e), (e.failed + e.errors) as f64))
                .collect(),
        ),
    ];
    let over_time = vec![
        line(
            "p50",
            palette::BLUE,
            false,
            tl.iter().map(|e| (t(e), e.p50_ms)).collect(),
        ),
        line(
            "p90",
            palette::ORANGE,
            false,
            tl.iter().map(|e| (t(e), e.p90_ms)).collect(),
        ),
        line(
            "p99",
            palette::RED,
            false,
            tl.iter().map(|e| (t(e), e.p99_ms)).collect(),
        ),
        line(
            "max (dashed)",
            palette::GREY,
            true,
            tl.iter().map(|e| (t(e), e.max_ms)).collect(),
        ),
    ];
    let mut distribution = Vec::new();
    for (i, (label, encoded)) in [
        ("latency (from intended send)", &r.histograms.latency),
        (
            "service time (from actual send, dashed)",
            &r.histograms.service_time,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(points) = percentiles(encoded) {
            distribution.push(line(label, palette::cycle(i), i == 1, points));
        }
    }
    let panel = |title: &str, x_label: &str, y_label: &str, x_axis, series| Panel {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        x_axis,
        y_axis: XAxis::Linear,
        series,
    };
    Figure {
        title: format!("herd run: {}", r.target),
        panels: vec![
            panel(
                "Throughput",
                "seconds",
                "responses/s",
                XAxis::Linear,
                throughput,
            ),
            panel(
                "Latency over time",
                "seconds",
                "ms",
                XAxis::Linear,
                over_time,
            ),
            panel(
                "Latency by percentile",
                "percentile",
                "ms",
                XAxis::Percentile,
                distribution,
            ),
        ],
    }
}

/// (percentile, ms) from 0% to as far into the tail as the samples reach, evenly spaced on
/// the percentile axis (1/(1-p)): 20 points per nine.
fn percentiles(encoded: &str) -> Option<Vec<(f64, f64)>> {
    let h = decode_histogram(encoded).ok()?;
    if h.is_empty() {
        return None;
    }
    let nines = (h.len() as f64).log10().clamp(1.0, 6.0);
    let steps = (nines * 20.0).ceil() as u32;
    Some(
        (0..=steps)
            .map(|k| {
                let v = nines * k as f64 / steps as f64;
                let q = 1.0 - 10f64.powf(-v);
                (100.0 * q, h.value_at_quantile(q) as f64 / 1e3)
            })
            .collect(),
    )
}
