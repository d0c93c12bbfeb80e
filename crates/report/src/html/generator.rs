//! The generator's health in a run report: its verdict and totals, how close it came to its
//! limits (file descriptors, local ports), and its per-second self-watch (CPU of each worker
//! thread, send lag and event-loop delay, connections) on the run's time axis, so a stall of
//! herd can be told apart from a stall of the server at the second it happened.

use super::axis::Axis;
use super::chart::{lines_with, Frame, Series};
use super::curves::max_y;
use super::marks::Rule;
use super::page::{esc, facts, table};
use super::{palette, second_label, timeline::time_axis};
use crate::format::{count, duration_ms, duration_s, percent};
use crate::{GeneratorSample, GeneratorVerdict, Model, RunResult};
use std::fmt::Write;

/// Above this many worker threads a line each would be a thicket: min, mean and max instead.
const MAX_THREAD_LINES: usize = 8;

pub fn section(r: &RunResult) -> String {
    let mut out = summary(r);
    out.push_str(&limits(r));
    if r.generator.timeline.is_empty() {
        out.push_str(
            "<p class=\"quiet\">This result has no per-second record of the generator (written by a herd before 0.1.0's self-watch).</p>",
        );
        return out;
    }
    out.push_str(&cpu_chart(r));
    out.push_str(&lag_chart(r));
    out.push_str(&connections_chart(r));
    if r.generator
        .timeline
        .iter()
        .any(|s| s.ephemeral_ports.is_some())
    {
        out.push_str(&ports_chart(r));
    }
    out
}

fn summary(r: &RunResult) -> String {
    let g = &r.generator;
    let verdict = match g.verdict {
        GeneratorVerdict::Ok => "ok: the numbers describe the target".to_owned(),
        GeneratorVerdict::GeneratorLimited => {
            format!("generator-limited: {}", g.reasons.join("; "))
        }
    };
    let lag = if r.config.model == Model::Open {
        "send lag p99"
    } else {
        "event-loop delay p99"
    };
    let threads = if g.threads > 0 {
        g.threads
    } else {
        r.config.threads
    };
    let mut pairs = vec![
        ("verdict", esc(&verdict)),
        (
            "CPU",
            format!(
                "{} of {} worker thread{}",
                percent(g.cpu_percent),
                count(threads),
                if threads == 1 { "" } else { "s" }
            ),
        ),
        (
            "CPU user / sys",
            format!("{} / {}", duration_s(g.cpu_user_s), duration_s(g.cpu_sys_s)),
        ),
        (lag, duration_ms(g.send_lag_p99_ms)),
    ];
    if g.connections_opened > 0 || g.peak_connections > 0 {
        pairs.push((
            "connections",
            format!(
                "{} opened, at most {} at once",
                count(g.connections_opened),
                count(g.peak_connections)
            ),
        ));
    }
    for w in &g.warnings {
        pairs.push(("warning", esc(w)));
    }
    facts(&pairs)
}

/// Peaks against limits, with a gauge: what runs out first when a run scales up.
fn limits(r: &RunResult) -> String {
    let g = &r.generator;
    let mut rows = Vec::new();
    let mut row = |what: &str, peak: Option<u64>, limit: Option<u64>, note: &str| {
        let (Some(peak), Some(limit)) = (peak, limit) else {
            return;
        };
        let share = if limit > 0 {
            peak as f64 * 100.0 / limit as f64
        } else {
            0.0
        };
        let color = if share >= 80.0 {
            palette::RED
        } else if share >= 50.0 {
            palette::ORANGE
        } else {
            palette::GREEN
        };
        let mut gauge = String::new();
        let _ = write!(
            gauge,
            "<div class=\"bar\"><span style=\"left:0;width:{:.1}%;background:{color}\"></span></div>",
            share.clamp(0.4, 100.0)
        );
        rows.push(vec![
            esc(what),
            count(peak),
            count(limit),
            percent(share),
            gauge,
            esc(note),
        ]);
    };
    row(
        "file descriptors (this process)",
        g.fds_peak,
        g.fd_limit,
        "the open-file limit herd raised itself to",
    );
    row(
        "local ports in use (machine-wide)",
        g.ephemeral_ports_peak,
        g.ephemeral_port_range,
        "sockets in the ephemeral range, TIME_WAIT included",
    );
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h3>Peaks against limits</h3>{}",
        table(
            "bars limits",
            &["", "peak", "limit", "share", "", "what the limit is"],
            &rows
        )
    )
}

/// The samples of the measurement, each drawn in the middle of the second it covers (sample
/// `t` covers [t, t + 1), as the timeline's entries do).
fn at(r: &RunResult, f: impl Fn(&GeneratorSample) -> Option<f64>) -> Vec<(f64, f64)> {
    r.generator
        .timeline
        .iter()
        .filter_map(|s| Some((s.t as f64 + 0.5, f(s)?)))
        .collect()
}

fn cpu_chart(r: &RunResult) -> String {
    let threads = r
        .generator
        .timeline
        .iter()
        .map(|s| s.cpu_percent.len())
        .max()
        .unwrap_or(0);
    let series: Vec<Series> = if threads <= MAX_THREAD_LINES {
        (0..threads)
            .map(|k| {
                Series::new(
                    &format!("thread {}", k + 1),
                    palette::cycle(k),
                    at(r, |s| s.cpu_percent.get(k).copied()),
                )
            })
            .collect()
    } else {
        let pick = |f: fn(&[f64]) -> f64| {
            at(r, move |s| {
                (!s.cpu_percent.is_empty()).then(|| f(&s.cpu_percent))
            })
        };
        vec![
            Series::new(
                "busiest thread",
                palette::RED,
                pick(|v| v.iter().copied().fold(0.0, f64::max)),
            ),
            Series::new(
                "mean of threads",
                palette::BLUE,
                pick(|v| v.iter().sum::<f64>() / v.len() as f64),
            ),
            Series::new(
                "idlest thread",
                palette::GREEN,
                pick(|v| v.iter().copied().fold(f64::INFINITY, f64::min)),
            )
            .dashed(),
        ]
    };
    let max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(100.0, f64::max);
    let value = |v: f64| percent(v);
    lines_with(
        &Frame {
            id: "chart-generator-cpu",
            title: "herd's CPU per worker thread",
            x: time_axis(r),
            y: Axis::linear("CPU (% of one core)", max * 1.05),
            height: 180.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
        &[Rule::y(100.0, "one core", palette::GREY)],
    )
}

fn lag_chart(r: &RunResult) -> String {
    let ms = |d: f64| Some(d);
    let mut series = Vec::new();
    if r.config.model == Model::Open {
        series.push(Series::new(
            "send lag p99 (late against the schedule)",
            palette::ORANGE,
            at(r, |s| ms(s.send_lag_p99_ms)),
        ));
    }
    series.push(Series::new(
        "event-loop delay, max (late 10 ms ticks)",
        palette::PURPLE,
        at(r, |s| ms(s.loop_delay_max_ms)),
    ));
    let max = max_y(&series, &[]);
    let value = |v: f64| duration_ms(v);
    lines_with(
        &Frame {
            id: "chart-generator-lag",
            title: "How late herd was, per second",
            x: time_axis(r),
            y: Axis::duration("delay", (max * 1.1).max(1.0)),
            height: 160.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
        &[],
    )
}

fn connections_chart(r: &RunResult) -> String {
    let mut series = vec![Series::new(
        "open connections",
        palette::BLUE,
        at(r, |s| Some(s.connections as f64)),
    )];
    let fds = at(r, |s| s.fds.map(|n| n as f64));
    if !fds.is_empty() {
        series.push(Series::new("open file descriptors", palette::SKY, fds).dashed());
    }
    let max = max_y(&series, &[]);
    let value = |v: f64| count(v.round() as u64);
    lines_with(
        &Frame {
            id: "chart-generator-connections",
            title: "herd's connections and file descriptors",
            x: time_axis(r),
            y: Axis::linear("count", (max * 1.1).max(1.0)),
            height: 160.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
        &[],
    )
}

fn ports_chart(r: &RunResult) -> String {
    let series = vec![Series::new(
        "local ports in use",
        palette::GREEN,
        at(r, |s| s.ephemeral_ports.map(|n| n as f64)),
    )];
    let max = series[0].points.iter().map(|p| p.1).fold(0.0, f64::max);
    // The range is drawn only when the run came near it; otherwise it would flatten the line.
    let range = r.generator.ephemeral_port_range.map(|n| n as f64);
    let rules: Vec<Rule> = range
        .filter(|n| max >= 0.5 * n)
        .map(|n| Rule::y(n, "the ephemeral port range", palette::RED))
        .into_iter()
        .collect();
    let top = rules.first().map_or(max, |r| r.at.max(max));
    let value = |v: f64| count(v.round() as u64);
    lines_with(
        &Frame {
            id: "chart-generator-ports",
            title: "Local ports in use on this machine (any process, TIME_WAIT included)",
            x: time_axis(r),
            y: Axis::linear("ports", (top * 1.1).max(1.0)),
            height: 140.0,
            x_label: &second_label,
            y_label: &value,
        },
        &series,
        &rules,
    )
}
