//! Runs overlaid: throughput, latency and the share not ok second by second, and the latency
//! distribution, one colour per run (the base first) in every panel.

use super::{distribution_panel, max_y, mid, palette, percentiles, Figure, Panel, Reading, Series};
use crate::{decode_histogram, RunResult};

/// The figure of `runs`, named `labels` in the same order. The panel of requests not ok is
/// there only when some run had any.
pub fn compare_figure(labels: &[&str], runs: &[&RunResult]) -> Figure {
    let end = runs.iter().map(|r| super::run_end(r)).fold(1.0, f64::max);
    let named = || runs.iter().zip(labels).enumerate();
    let throughput: Vec<Series> = named()
        .map(|(i, (r, label))| {
            let pts = r.samples().map(|e| (mid(e), e.rps)).collect();
            Series::line(label, palette::cycle(i), pts)
        })
        .collect();
    let mut latency = Vec::new();
    for (i, (r, label)) in named() {
        let busy = || r.samples().filter(|e| e.requests > 0);
        latency.push(Series::line(
            &format!("{label} p99"),
            palette::cycle(i),
            busy().map(|e| (mid(e), e.p99_ms)).collect(),
        ));
        latency.push(
            Series::line(
                &format!("{label} p50"),
                palette::cycle(i),
                busy().map(|e| (mid(e), e.p50_ms)).collect(),
            )
            .dashed(),
        );
    }
    let distribution = named()
        .filter_map(|(i, (r, label))| {
            let h = decode_histogram(&r.histograms.latency).ok()?;
            Some(Series::line(label, palette::cycle(i), percentiles(&h)))
        })
        .collect();
    let mut panels = vec![
        Panel::new("chart-throughput", "Throughput", "Requests per second")
            .over_time(end, Reading::Second)
            .y_to(
                "requests per second (req/s)",
                Reading::Rate(" req/s".into()),
                max_y(&throughput, &[]) * 1.05,
            )
            .height(220.0)
            .series(throughput),
        Panel::new(
            "chart-latency",
            "Latency over time",
            "Latency p99 (solid) and p50 (dashed) per second",
        )
        .over_time(end, Reading::Second)
        .y_to("latency", Reading::Duration, max_y(&latency, &[]) * 1.05)
        .height(240.0)
        .series(latency),
        distribution_panel(
            "chart-distribution",
            "Latency by percentile (whole run, from the histograms)",
            distribution,
        ),
    ];
    if runs.iter().any(|r| r.totals.scheduled > r.totals.ok) {
        let not_ok: Vec<Series> = named()
            .map(|(i, (r, label))| {
                let pts = r
                    .samples()
                    .filter(|e| e.requests > 0)
                    .map(|e| {
                        let share = (e.failed + e.errors) as f64 * 100.0 / e.requests as f64;
                        (mid(e), share)
                    })
                    .collect();
                Series::line(label, palette::cycle(i), pts)
            })
            .collect();
        panels.push(
            Panel::new(
                "chart-errors",
                "Requests not ok",
                "Share of requests not ok, per second",
            )
            .over_time(end, Reading::Second)
            .y_to("not ok (%)", Reading::Percent, max_y(&not_ok, &[]) * 1.05)
            .height(200.0)
            .series(not_ok),
        );
    }
    Figure {
        title: format!("herd compare: {}", labels.join(" vs ")),
        panels,
    }
}
