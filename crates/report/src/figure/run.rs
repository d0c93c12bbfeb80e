//! One run over time, and its latency distribution (HdrHistogram's plotter, in pure Rust):
//! the figure `herd plot` draws and `herd report`'s run page draws.

use super::{
    distribution_panel, max_y, palette, percentiles, Band, Figure, Panel, Reading, Series,
};
use crate::{decode_histogram, Model, RunResult, TimelineEntry};

/// Where a second of the timeline is drawn on a time axis: in its middle, so lines and the
/// bars that span the second agree.
pub fn mid(e: &TimelineEntry) -> f64 {
    e.t as f64 + 0.5
}

/// The end of the run's time axis, in seconds since the measurement started: its length, or
/// the end of its last second.
pub fn run_end(r: &RunResult) -> f64 {
    let last = r.timeline.last().map_or(0.0, |e| e.t as f64 + 1.0);
    last.max(r.duration_s)
}

/// Requests per second (and the not-ok share of them, and the target rate of an open run),
/// latency percentiles second by second, and the percentile distribution of latency and
/// service time.
pub fn run_figure(r: &RunResult) -> Figure {
    Figure {
        title: format!("herd run: {}", r.target),
        panels: vec![
            throughput_panel(r),
            latency_panel(r),
            distribution_panel(
                "chart-distribution",
                "Latency by percentile (whole run, from the histograms)",
                distribution(r),
            ),
        ],
    }
}

fn throughput_panel(r: &RunResult) -> Panel {
    let series = throughput(r);
    let max = r.samples().map(|e| e.rps).fold(0.0, f64::max);
    let max = max.max(r.config.rate.unwrap_or(0.0));
    // A WebSocket run's are messages: "Messages per second (msg/s)".
    let x = r.config.exchange();
    let (noun, short) = (x.noun(), x.short());
    let mut title = format!("{noun}s per second");
    title[..1].make_ascii_uppercase();
    Panel::new("chart-throughput", "Throughput", &title)
        .over_time(run_end(r), Reading::Second)
        .y_to(
            &format!("{noun}s per second ({short}/s)"),
            Reading::Rate(format!(" {short}/s")),
            max * 1.05,
        )
        .height(220.0)
        .series(series)
        .bands(fault_bands(r))
}

/// Each fault window of the run (a workload's `faults:`), shaded on its time charts.
pub fn fault_bands(r: &RunResult) -> Vec<Band> {
    r.faults
        .iter()
        .enumerate()
        .map(|(i, w)| Band {
            from: w.start_s,
            to: w.end_s,
            label: format!("fault {}: {}", i + 1, w.description),
            color: palette::RED,
        })
        .collect()
}

fn latency_panel(r: &RunResult) -> Panel {
    let series = over_time(r);
    Panel::new(
        "chart-latency",
        "Latency over time",
        "Latency percentiles per second (from the intended send time)",
    )
    .over_time(run_end(r), Reading::Second)
    .y_to("latency", Reading::Duration, max_y(&series, &[]) * 1.05)
    .height(240.0)
    .series(series)
    .bands(fault_bands(r))
}

fn throughput(r: &RunResult) -> Vec<Series> {
    // Only whole seconds: the drain's few answers are not a rate that happened.
    let all = r.samples().map(|e| (mid(e), e.rps)).collect();
    let not_ok: Vec<(f64, f64)> = r
        .samples()
        .map(|e| {
            let share = if e.requests > 0 {
                (e.failed + e.errors) as f64 / e.requests as f64
            } else {
                0.0
            };
            (mid(e), e.rps * share)
        })
        .collect();
    let mut series = vec![Series::line(
        &format!("{}s ended per second", r.config.exchange().noun()),
        palette::BLUE,
        all,
    )];
    if not_ok.iter().any(|p| p.1 > 0.0) {
        series.push(Series::line("of which not ok", palette::RED, not_ok));
    }
    if let (Model::Open, Some(rps)) = (r.config.model, r.config.rate) {
        let end = run_end(r);
        series.push(
            Series::line("target rate", palette::GREY, vec![(0.0, rps), (end, rps)]).dashed(),
        );
    }
    series
}

fn over_time(r: &RunResult) -> Vec<Series> {
    // Seconds without a request have no percentiles: they are left out, not drawn as zero.
    let pick = |f: fn(&TimelineEntry) -> f64| {
        r.samples()
            .filter(|e| e.requests > 0)
            .map(|e| (mid(e), f(e)))
            .collect::<Vec<_>>()
    };
    vec![
        Series::line("p50", palette::BLUE, pick(|e| e.p50_ms)),
        Series::line("p90", palette::GREEN, pick(|e| e.p90_ms)),
        Series::line("p99", palette::ORANGE, pick(|e| e.p99_ms)),
        Series::line("max", palette::RED, pick(|e| e.max_ms)).dashed(),
    ]
}

fn distribution(r: &RunResult) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
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
            let s = Series::line(name, color, percentiles(&h));
            series.push(if series.is_empty() { s } else { s.dashed() });
        }
    }
    if series.len() == 2 && series[0].points == series[1].points {
        // Closed model: latency and service time coincide; one line says it.
        series.truncate(1);
        series[0].label = "latency = service time".to_owned();
    }
    series
}
