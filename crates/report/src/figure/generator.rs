//! herd's own health second by second, on the run's time axis: CPU of each worker thread,
//! how late it was (send lag, event-loop delay), its connections and descriptors, and the
//! machine's local ports, so a stall of herd can be told apart from a stall of the server at
//! the second it happened.

use super::{max_y, palette, run_end, Figure, Mark, Panel, Reading, Series};
use crate::{GeneratorSample, Model, RunResult};

/// Above this many worker threads a line each would be a thicket: min, mean and max instead.
const MAX_THREAD_LINES: usize = 8;

/// CPU, lateness and connections; local ports when the machine's count was read. Empty when
/// the result has no per-second record of the generator.
pub fn generator_figure(r: &RunResult) -> Figure {
    let mut panels = Vec::new();
    if !r.generator.timeline.is_empty() {
        panels.extend([cpu(r), lag(r), connections(r)]);
        if r.generator
            .timeline
            .iter()
            .any(|s| s.ephemeral_ports.is_some())
        {
            panels.push(ports(r));
        }
    }
    Figure {
        title: format!("herd run: {}, the generator", r.target),
        panels,
    }
}

/// The samples of the measurement, each drawn in the middle of the second it covers (sample
/// `t` covers [t, t + 1), as the timeline's entries do), over the seconds the throughput chart
/// draws: its whole seconds, so both end at the same second (a cut-short last second's CPU
/// would read as a dip).
fn at(r: &RunResult, f: impl Fn(&GeneratorSample) -> Option<f64>) -> Vec<(f64, f64)> {
    let last = r.samples().map(|e| e.t).max();
    r.generator
        .timeline
        .iter()
        .filter(|s| last.is_none_or(|l| s.t <= l))
        .filter_map(|s| Some((s.t as f64 + 0.5, f(s)?)))
        .collect()
}

fn panel(r: &RunResult, id: &str, title: &str) -> Panel {
    Panel::new(id, title, title).over_time(run_end(r), Reading::Second)
}

fn cpu(r: &RunResult) -> Panel {
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
                Series::line(
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
            Series::line(
                "busiest thread",
                palette::RED,
                pick(|v| v.iter().copied().fold(0.0, f64::max)),
            ),
            Series::line(
                "mean of threads",
                palette::BLUE,
                pick(|v| v.iter().sum::<f64>() / v.len() as f64),
            ),
            Series::line(
                "idlest thread",
                palette::GREEN,
                pick(|v| v.iter().copied().fold(f64::INFINITY, f64::min)),
            )
            .dashed(),
        ]
    };
    // The axis reaches one whole core at least: the rule drawn there must show.
    let max = max_y(&series, &[100.0]);
    panel(r, "chart-generator-cpu", "herd's CPU per worker thread")
        .y_to("CPU (% of one core)", Reading::Percent, max * 1.05)
        .height(180.0)
        .series(series)
        .marks(vec![Mark {
            vertical: false,
            at: 100.0,
            label: "one core".into(),
            color: palette::GREY,
        }])
}

fn lag(r: &RunResult) -> Panel {
    let mut series = Vec::new();
    if r.config.model == Model::Open {
        series.push(Series::line(
            "send lag p99 (late against the schedule)",
            palette::ORANGE,
            at(r, |s| Some(s.send_lag_p99_ms)),
        ));
    }
    series.push(Series::line(
        "event-loop delay, max (late 10 ms ticks)",
        palette::PURPLE,
        at(r, |s| Some(s.loop_delay_max_ms)),
    ));
    let top = (max_y(&series, &[]) * 1.1).max(1.0);
    panel(r, "chart-generator-lag", "How late herd was, per second")
        .y_to("delay", Reading::Duration, top)
        .height(160.0)
        .series(series)
}

fn connections(r: &RunResult) -> Panel {
    let mut series = vec![Series::line(
        "open connections",
        palette::BLUE,
        at(r, |s| Some(s.connections as f64)),
    )];
    let fds = at(r, |s| s.fds.map(|n| n as f64));
    if !fds.is_empty() {
        series.push(Series::line("open file descriptors", palette::SKY, fds).dashed());
    }
    let top = (max_y(&series, &[]) * 1.1).max(1.0);
    panel(
        r,
        "chart-generator-connections",
        "herd's connections and file descriptors",
    )
    .y_to("count", Reading::Count, top)
    .height(160.0)
    .series(series)
}

fn ports(r: &RunResult) -> Panel {
    let series = vec![Series::line(
        "local ports in use",
        palette::GREEN,
        at(r, |s| s.ephemeral_ports.map(|n| n as f64)),
    )];
    let max = max_y(&series, &[]);
    // The range is drawn only when the run came near it; otherwise it would flatten the line.
    let marks: Vec<Mark> = r
        .generator
        .ephemeral_port_range
        .map(|n| n as f64)
        .filter(|n| max >= 0.5 * n)
        .map(|n| Mark {
            vertical: false,
            at: n,
            label: "the ephemeral port range".into(),
            color: palette::RED,
        })
        .into_iter()
        .collect();
    let top = marks.first().map_or(max, |m| m.at.max(max));
    panel(
        r,
        "chart-generator-ports",
        "Local ports in use on this machine (any process, TIME_WAIT included)",
    )
    .y_to("ports", Reading::Count, (top * 1.1).max(1.0))
    .height(140.0)
    .series(series)
    .marks(marks)
}
