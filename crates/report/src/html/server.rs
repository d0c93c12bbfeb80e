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

use super::axis::Axis;
use super::chart::{lines, Frame, Series};
use super::curves::max_y;
use super::page::esc;
use super::palette;
use super::timeline::{run_end, time_axis};
use crate::format::{bytes, count, duration_s, percent, rate};
use crate::server::{Exporter, PromSeries, Server, WatchedProcess};
use crate::RunResult;
use std::fmt::Write;

/// Prometheus charts drawn at most (one per metric name); the JSON keeps every series.
const MAX_METRIC_CHARTS: usize = 12;

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

/// How a chart's hover box heads a position: an interval's second, or an instant.
#[derive(Clone, Copy, PartialEq)]
enum Placed {
    Interval,
    Instant,
}

fn head(placed: Placed) -> impl Fn(f64) -> String {
    move |x: f64| match placed {
        Placed::Interval => super::second_label(x),
        Placed::Instant => format!("at {}", duration_s(x)),
    }
}

/// The server's section of a run report; `None` when nothing was watched.
pub fn section(r: &RunResult) -> Option<String> {
    let server = r.server.as_ref()?;
    let mut out = String::from(
        "<p class=\"sub\">On the run's time axis. CPU %, context switches and rates are drawn in the middle of the second they cover, under the throughput of that second; memory, threads and descriptors where they were read.</p>",
    );
    if !server.processes.is_empty() {
        out.push_str(&processes(r, &server.processes));
    }
    out.push_str(&prometheus(r, &server.prometheus));
    out.push_str(&notes(server));
    Some(out)
}

fn who(p: &WatchedProcess) -> String {
    match &p.name {
        Some(name) => name.clone(),
        None => format!("pid {}", p.pid),
    }
}

fn processes(r: &RunResult, ps: &[WatchedProcess]) -> String {
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
    let readings = |p: &WatchedProcess, f: &dyn Fn(&crate::ProcessSample) -> Option<f64>| {
        p.samples.iter().map(|s| (s.t, f(s))).collect::<Vec<_>>()
    };
    // Instant readings include the watch's first one, taken as the measurement began.
    let instants = |p: &WatchedProcess,
                    f: &dyn Fn(&crate::ProcessSample) -> Option<f64>,
                    g: &dyn Fn(&crate::ProcessState) -> Option<f64>| {
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
        cpu.push(Series::new(
            &label(p, "CPU"),
            color,
            within(
                interval_points(&readings(p, &|s| Some(s.cpu_percent)), before(p)),
                end,
            ),
        ));
        rss.push(Series::new(
            &label(p, "resident memory (RSS)"),
            color,
            instants(p, &|s| Some(s.rss_bytes as f64), &|s| {
                Some(s.rss_bytes as f64)
            }),
        ));
        counts.push(Series::new(
            &label(p, "threads"),
            color,
            instants(p, &|s| Some(s.threads as f64), &|s| Some(s.threads as f64)),
        ));
        let fds = instants(p, &|s| s.fds.map(|n| n as f64), &|s| {
            s.fds.map(|n| n as f64)
        });
        if !fds.is_empty() {
            counts.push(Series::new(&label(p, "open file descriptors"), color, fds).dashed());
        }
        // Counts within each interval, as per-second rates (intervals are about a second).
        let per_s = |f: fn(&crate::ProcessSample) -> u64| {
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
        ctx.push(Series::new(
            &label(p, "voluntary (waits)"),
            color,
            per_s(|s| s.ctx_switches_voluntary),
        ));
        ctx.push(
            Series::new(
                &label(p, "involuntary (preempted)"),
                color,
                per_s(|s| s.ctx_switches_involuntary),
            )
            .dashed(),
        );
    }
    let mut out = chart(
        r,
        "chart-server-cpu",
        "Server CPU (user + system)",
        Axis::linear("CPU (% of one core)", (max_y(&cpu, &[]) * 1.1).max(10.0)),
        Placed::Interval,
        &|v| percent(v),
        &cpu,
    );
    out += &chart(
        r,
        "chart-server-memory",
        "Server memory",
        bytes_axis("memory", max_y(&rss, &[]) * 1.1),
        Placed::Instant,
        &|v| bytes(v),
        &rss,
    );
    out += &chart(
        r,
        "chart-server-counts",
        "Server threads and open file descriptors",
        Axis::linear("count", (max_y(&counts, &[]) * 1.1).max(1.0)),
        Placed::Instant,
        &|v| count(v.round() as u64),
        &counts,
    );
    out += &chart(
        r,
        "chart-server-ctx",
        "Server context switches per second",
        Axis::linear("context switches (1/s)", (max_y(&ctx, &[]) * 1.1).max(1.0)),
        Placed::Interval,
        &|v| rate(v),
        &ctx,
    );
    out
}

fn prometheus(r: &RunResult, exporters: &[Exporter]) -> String {
    let end = run_end(r);
    // One chart per metric name (and endpoint): its label sets share a unit.
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
    let mut out = String::new();
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
                Series::new(&name, palette::cycle(k), within(pts, end))
            })
            .collect();
        let top = max_y(&series, &[]) * 1.1;
        let byte_valued = title.contains("_bytes") && !is_rate;
        let y = if byte_valued {
            bytes_axis("bytes", top)
        } else if *is_rate {
            Axis::linear("per second (rate of a counter)", top.max(1e-9))
        } else {
            Axis::linear("value", top.max(1e-9))
        };
        let value: Box<dyn Fn(f64) -> String> = if byte_valued {
            Box::new(bytes)
        } else {
            Box::new(crate::format::sig3)
        };
        let caption = if *is_rate {
            format!("{title}, per second")
        } else {
            title.clone()
        };
        out += &chart(
            r,
            &format!("chart-server-metric-{}", i + 1),
            &caption,
            y,
            if *is_rate {
                Placed::Interval
            } else {
                Placed::Instant
            },
            value.as_ref(),
            &series,
        );
    }
    if groups.len() > MAX_METRIC_CHARTS {
        let _ = write!(
            out,
            "<p class=\"quiet\">{} more metrics are in the JSON result, not drawn here.</p>",
            groups.len() - MAX_METRIC_CHARTS
        );
    }
    out
}

fn notes(server: &Server) -> String {
    let mut items = Vec::new();
    for p in &server.processes {
        for n in &p.notes {
            items.push(format!("at {}: {}", duration_s(n.t), n.text));
        }
    }
    for e in &server.prometheus {
        for g in &e.gaps {
            items.push(format!(
                "at {}: scraping {} failed: {}",
                duration_s(g.t),
                e.url,
                g.error
            ));
        }
        if e.series_dropped > 0 {
            items.push(format!(
                "{}: more series matched than herd keeps ({} dropped)",
                e.url,
                count(e.series_dropped)
            ));
        }
    }
    if items.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Notes</h3><ul class=\"notes\">");
    for i in items {
        let _ = write!(out, "<li>{}</li>", esc(&i));
    }
    out + "</ul>"
}

fn chart(
    r: &RunResult,
    id: &str,
    title: &str,
    y: Axis,
    placed: Placed,
    value: &dyn Fn(f64) -> String,
    series: &[Series],
) -> String {
    let head = head(placed);
    lines(
        &Frame {
            id,
            title,
            x: time_axis(r),
            y,
            height: 170.0,
            x_label: &head,
            y_label: value,
        },
        series,
    )
}

/// A linear axis for byte counts in KB, MB or GB.
fn bytes_axis(what: &str, max: f64) -> Axis {
    let (div, unit) = [(1e9, "GB"), (1e6, "MB"), (1e3, "KB")]
        .into_iter()
        .find(|(d, _)| max >= *d)
        .unwrap_or((1.0, "B"));
    let mut a = Axis::linear(&format!("{what} ({unit})"), max / div);
    a.hi *= div;
    for t in &mut a.ticks {
        t.0 *= div;
    }
    a
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
