//! The watched server on the run's time axis: its processes' CPU, memory, threads,
//! descriptors and context switches, and every Prometheus series, each drawn where it belongs
//! on the run's clock so saturation shows in the same second as the throughput and latency
//! it explains.
//!
//! Readings carry `t`, the moment they were taken. What covers an interval (CPU %, context
//! switches, a counter's rate) is drawn in the middle of the interval that ends at `t`: the
//! reading at `t = 3` covers [2, 3) and sits at 2.5 s, over the timeline's second 2, which
//! counts the requests that ended in [2, 3). What is read at an instant (memory, threads,
//! descriptors, a gauge) is drawn at `t`. Readings of the warm-up (negative `t`) and after the
//! measurement are left out.

use super::{max_y, palette, run_end, Figure, Panel, Reading, Series};
use crate::{Exporter, PromSeries, WatchedProcess};
use crate::{ProcessSample, ProcessState, RunResult};

/// Prometheus charts drawn at most (one per metric name); the JSON keeps every series.
pub const MAX_METRIC_CHARTS: usize = 12;

/// Readings this close to where the timeline draws a second (its middle, or a whole second
/// for instants) are drawn exactly there: a reading a few milliseconds late is the same second,
/// and the hover box then shows every series of that second together.
const SNAP_S: f64 = 0.05;

fn snap(x: f64, to: f64) -> f64 {
    let grid = (x - to).round() + to;
    if (x - grid).abs() < SNAP_S {
        grid
    } else {
        x
    }
}

/// `(t, value)` readings of something that covers the interval since the previous reading,
/// placed in the middle of that interval; `before` is when the interval of the first began
/// (the watch's start reading), else it is taken to be a second.
pub fn interval_points(readings: &[(f64, Option<f64>)], before: Option<f64>) -> Vec<(f64, f64)> {
    let mut prev = before;
    let mut out = Vec::new();
    for &(t, v) in readings {
        let from = prev.unwrap_or(t - 1.0);
        if let Some(v) = v.filter(|v| v.is_finite()) {
            out.push((snap((from + t) / 2.0, 0.5), v));
        }
        prev = Some(t);
    }
    out
}

/// Readings of something read at an instant, drawn there.
pub fn instant_points(readings: &[(f64, Option<f64>)]) -> Vec<(f64, f64)> {
    readings
        .iter()
        .filter_map(|&(t, v)| Some((snap(t, 0.0), v.filter(|v| v.is_finite())?)))
        .collect()
}

/// Points inside the measurement, `0..=end` seconds.
fn within(points: Vec<(f64, f64)>, end: f64) -> Vec<(f64, f64)> {
    points
        .into_iter()
        .filter(|(x, _)| *x >= 0.0 && *x <= end + 1e-9)
        .collect()
}

/// The server's figure: four panels of its processes (when any was watched), then one per
/// Prometheus metric name (up to [`MAX_METRIC_CHARTS`]); `None` when nothing was watched.
pub fn server_figure(r: &RunResult) -> Option<Figure> {
    let server = r.server.as_ref()?;
    let mut panels = Vec::new();
    if !server.processes.is_empty() {
        panels.extend(processes(r, &server.processes));
    }
    panels.extend(prometheus(r, &server.prometheus));
    Some(Figure {
        title: format!("herd run: {}, the server", r.target),
        panels,
    })
}

/// Prometheus metrics (names) the run watched beyond those drawn: they are in the JSON only.
pub fn metrics_not_drawn(r: &RunResult) -> usize {
    r.server.as_ref().map_or(0, |s| {
        groups(&s.prometheus)
            .len()
            .saturating_sub(MAX_METRIC_CHARTS)
    })
}

fn who(p: &WatchedProcess) -> String {
    match &p.name {
        Some(name) => name.clone(),
        None => format!("pid {}", p.pid),
    }
}

/// A panel over the run's time; `interval` heads positions as seconds, else as moments.
fn panel(r: &RunResult, id: &str, title: &str, interval: bool) -> Panel {
    let reads = if interval {
        Reading::Second
    } else {
        Reading::Instant
    };
    Panel::new(id, title, title)
        .over_time(run_end(r), reads)
        .height(170.0)
}

fn processes(r: &RunResult, ps: &[WatchedProcess]) -> Vec<Panel> {
    let end = run_end(r);
    let many = ps.len() > 1;
    let label = |p: &WatchedProcess, what: &str| {
        if many {
            format!("{} {what}", who(p))
        } else {
            what.to_owned()
        }
    };
    let before = |p: &WatchedProcess| p.start.as_ref().map(|s| s.t);
    let readings = |p: &WatchedProcess, f: &dyn Fn(&ProcessSample) -> Option<f64>| {
        p.samples.iter().map(|s| (s.t, f(s))).collect::<Vec<_>>()
    };
    // Instant readings include the watch's first one, taken as the measurement began.
    let instants = |p: &WatchedProcess,
                    f: &dyn Fn(&ProcessSample) -> Option<f64>,
                    g: &dyn Fn(&ProcessState) -> Option<f64>| {
        let mut v: Vec<(f64, Option<f64>)> = p.start.iter().map(|s| (s.t, g(s))).collect();
        v.extend(readings(p, f));
        within(instant_points(&v), end)
    };
    let mut cpu = Vec::new();
    let mut rss = Vec::new();
    let mut counts = Vec::new();
    let mut ctx = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        let color = palette::cycle(i);
        cpu.push(Series::line(
            &label(p, "CPU"),
            color,
            within(
                interval_points(&readings(p, &|s| Some(s.cpu_percent)), before(p)),
                end,
            ),
        ));
        rss.push(Series::line(
            &label(p, "resident memory (RSS)"),
            color,
            instants(p, &|s| Some(s.rss_bytes as f64), &|s| {
                Some(s.rss_bytes as f64)
            }),
        ));
        counts.push(Series::line(
            &label(p, "threads"),
            color,
            instants(p, &|s| Some(s.threads as f64), &|s| Some(s.threads as f64)),
        ));
        let fds = instants(p, &|s| s.fds.map(|n| n as f64), &|s| {
            s.fds.map(|n| n as f64)
        });
        if !fds.is_empty() {
            counts.push(Series::line(&label(p, "open file descriptors"), color, fds).dashed());
        }
        // Counts within each interval, as per-second rates (intervals are about a second).
        let per_s = |f: fn(&ProcessSample) -> u64| {
            let mut prev = before(p);
            let v: Vec<(f64, Option<f64>)> = p
                .samples
                .iter()
                .map(|s| {
                    let dt = s.t - prev.unwrap_or(s.t - 1.0);
                    prev = Some(s.t);
                    (s.t, (dt > 0.0).then(|| f(s) as f64 / dt))
                })
                .collect();
            within(interval_points(&v, before(p)), end)
        };
        ctx.push(Series::line(
            &label(p, "voluntary (waits)"),
            color,
            per_s(|s| s.ctx_switches_voluntary),
        ));
        ctx.push(
            Series::line(
                &label(p, "involuntary (preempted)"),
                color,
                per_s(|s| s.ctx_switches_involuntary),
            )
            .dashed(),
        );
    }
    vec![
        panel(r, "chart-server-cpu", "Server CPU (user + system)", true)
            .y_to(
                "CPU (% of one core)",
                Reading::Percent,
                (max_y(&cpu, &[]) * 1.1).max(10.0),
            )
            .series(cpu),
        panel(r, "chart-server-memory", "Server memory", false)
            .y_to("memory", Reading::Bytes, max_y(&rss, &[]) * 1.1)
            .series(rss),
        panel(
            r,
            "chart-server-counts",
            "Server threads and open file descriptors",
            false,
        )
        .y_to(
            "count",
            Reading::Count,
            (max_y(&counts, &[]) * 1.1).max(1.0),
        )
        .series(counts),
        panel(
            r,
            "chart-server-ctx",
            "Server context switches per second",
            true,
        )
        .y_to(
            "context switches (1/s)",
            Reading::Rate(String::new()),
            (max_y(&ctx, &[]) * 1.1).max(1.0),
        )
        .series(ctx),
    ]
}

/// One group per metric name (and endpoint, when there are several): its label sets share a
/// unit. Each is its title, whether it is a counter's rate, and its series.
fn groups(exporters: &[Exporter]) -> Vec<(String, bool, Vec<&PromSeries>)> {
    let mut groups: Vec<(String, bool, Vec<&PromSeries>)> = Vec::new();
    for e in exporters {
        let from = if exporters.len() > 1 {
            format!(" ({})", e.url)
        } else {
            String::new()
        };
        for s in &e.series {
            let title = format!("{}{from}", s.name);
            match groups.iter_mut().find(|(t, _, _)| *t == title) {
                Some((_, _, v)) => v.push(s),
                None => groups.push((title, s.rate, vec![s])),
            }
        }
    }
    groups
}

fn prometheus(r: &RunResult, exporters: &[Exporter]) -> Vec<Panel> {
    let end = run_end(r);
    let mut panels = Vec::new();
    let groups = groups(exporters);
    for (i, (title, is_rate, members)) in groups.iter().enumerate().take(MAX_METRIC_CHARTS) {
        let series: Vec<Series> = members
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let pts = if s.rate {
                    interval_points(&s.samples, None)
                } else {
                    instant_points(&s.samples)
                };
                let name = if s.labels.is_empty() {
                    s.name.clone()
                } else {
                    s.display_name()[s.name.len()..].to_owned()
                };
                Series::line(&name, palette::cycle(k), within(pts, end))
            })
            .collect();
        let top = max_y(&series, &[]) * 1.1;
        let byte_valued = title.contains("_bytes") && !is_rate;
        let caption = if *is_rate {
            format!("{title}, per second")
        } else {
            title.clone()
        };
        let id = format!("chart-server-metric-{}", i + 1);
        let p = panel(r, &id, &caption, *is_rate);
        panels.push(
            if byte_valued {
                p.y_to("bytes", Reading::Bytes, top)
            } else if *is_rate {
                p.y_to(
                    "per second (rate of a counter)",
                    Reading::Sig3,
                    top.max(1e-9),
                )
            } else {
                p.y_to("value", Reading::Sig3, top.max(1e-9))
            }
            .series(series),
        );
    }
    panels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_readings_sit_in_the_middle_of_the_second_they_cover() {
        // The watch began at -0.002 s; readings at 1, 2, 3.005 s and a last one at 3.4 s.
        let cpu = [
            (1.0, Some(20.0)),
            (2.0, Some(30.0)),
            (3.005, None),
            (3.4, Some(50.0)),
        ];
        let pts = interval_points(&cpu, Some(-0.002));
        // [-0.002, 1.0] is the timeline's second 0, drawn at its middle.
        assert_eq!(pts[0], (0.5, 20.0));
        assert_eq!(pts[1], (1.5, 30.0));
        // A gap (NaN, null) is left out, and the interval after it starts where it ended:
        // [3.005, 3.4] is no whole second and stays where it is.
        assert!((pts[2].0 - 3.2025).abs() < 1e-9, "{pts:?}");
        // Without a start reading the first interval is taken to be a second.
        assert_eq!(interval_points(&[(3.0, Some(1.0))], None), [(2.5, 1.0)]);
    }

    #[test]
    fn instants_stay_where_they_were_read() {
        let rss = [
            (-1.0, Some(5.0)),
            (0.017, Some(6.0)),
            (1.0, Some(f64::NAN)),
            (1.3, Some(7.0)),
        ];
        assert_eq!(instant_points(&rss), [(-1.0, 5.0), (0.0, 6.0), (1.3, 7.0)]);
        // The warm-up and what came after the measurement are not on the run's axis.
        assert_eq!(
            within(vec![(-0.5, 1.0), (0.0, 2.0), (8.0, 3.0), (8.116, 4.0)], 8.0),
            [(0.0, 2.0), (8.0, 3.0)]
        );
    }
}
