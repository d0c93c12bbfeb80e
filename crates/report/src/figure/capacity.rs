//! A capacity search as three charts against the level probed: good replies, the SLO's
//! latency percentiles and errors, with the capacity, where it broke and the knee marked.
//! `herd plot` draws this figure, and `herd report`'s capacity page draws the same series.

use super::XAxis;
use super::{latency_axis, load_axis, palette, rate_axis, span, Figure, Mark, Panel, Series};
use crate::capacity::{
    latency_at, measured, percentile_name, CapacityResult, Objective, ProbeRecord,
};
use crate::{GeneratorVerdict, Model};

/// The capacity search's figure: one point per level probed (the latest probe at a level).
pub fn capacity_figure(c: &CapacityResult) -> Figure {
    let probes = c.by_level();
    let curve = |label: &str, color: &'static str, f: &dyn Fn(&ProbeRecord) -> f64| {
        let points: Vec<(f64, f64)> = probes.iter().map(|p| (p.level, f(p))).collect();
        let suspect = probes
            .iter()
            .zip(&points)
            .filter(|(p, _)| p.generator == GeneratorVerdict::GeneratorLimited)
            .map(|(_, pt)| *pt)
            .collect();
        Series {
            label: label.to_owned(),
            color,
            dashed: false,
            markers: true,
            points,
            suspect,
        }
    };
    let levels: Vec<f64> = probes.iter().map(|p| p.level).collect();
    let per_s = |p: &ProbeRecord, n: u64| {
        if p.result.duration_s > 0.0 {
            n as f64 / p.result.duration_s
        } else {
            0.0
        }
    };
    let mut throughput = vec![
        curve("good replies/s", palette::BLUE, &|p| {
            measured(&p.result).goodput
        }),
        Series {
            dashed: true,
            ..curve("replies/s (any status)", palette::BLUE, &|p| {
                per_s(p, p.result.totals.completed)
            })
        },
    ];
    // Offered iterations and replied requests are different units: no "offered" line then.
    if c.model == Model::Open && c.open_unit() == "req/s" && !levels.is_empty() {
        let (lo, hi) = (levels[0], levels[levels.len() - 1]);
        throughput.push(Series {
            label: "offered".into(),
            color: palette::GREY,
            dashed: true,
            markers: false,
            points: vec![(lo, lo), (hi, hi)],
            suspect: Vec::new(),
        });
    }
    // The SLO's percentiles, and the median for scale.
    let mut percentiles: Vec<f64> = c
        .slo
        .objectives
        .iter()
        .filter_map(|o| match *o {
            Objective::Latency { percentile, .. } => Some(percentile),
            Objective::Errors { .. } => None,
        })
        .collect();
    if !percentiles.contains(&50.0) {
        percentiles.insert(0, 50.0);
    }
    if percentiles.len() == 1 {
        percentiles.push(99.0);
    }
    let colors = [
        palette::BLUE,
        palette::ORANGE,
        palette::PURPLE,
        palette::SKY,
    ];
    let latency: Vec<Series> = percentiles
        .iter()
        .enumerate()
        .map(|(i, q)| {
            curve(&percentile_name(*q), colors[i % colors.len()], &|p| {
                latency_at(&p.result.latency_ms, *q)
            })
        })
        .collect();
    let errors = vec![curve("not ok", palette::BLUE, &|p| {
        measured(&p.result).error_percent
    })];

    let levels_marked = level_marks(c);
    let slo = |latency: bool| -> Vec<Mark> {
        let mut marks: Vec<Mark> = c
            .slo
            .objectives
            .iter()
            .filter_map(|o| {
                let at = match *o {
                    Objective::Latency { max_ms, .. } if latency => max_ms,
                    Objective::Errors { max_percent, .. } if !latency => max_percent,
                    _ => return None,
                };
                Some(Mark {
                    vertical: false,
                    at,
                    label: format!("SLO: {}", o.phrase()),
                    color: palette::RED,
                })
            })
            .collect();
        marks.extend(levels_marked.iter().cloned());
        marks
    };
    let ys = |series: &[Series]| span(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let (min, max) = ys(&throughput);
    let rate_y = rate_axis(min, max, ys(&throughput[..1]).1);
    let latency_marks = slo(true);
    let (min, max) = ys(&latency);
    let limit = latency_marks
        .iter()
        .filter(|m| !m.vertical)
        .fold(max, |a, m| a.max(m.at));
    let latency_y = latency_axis(min, limit);
    let x_axis = load_axis(c.model, &levels);
    let x_label = match c.model {
        Model::Open => format!("offered rate ({})", c.open_unit()),
        Model::Closed => "concurrent users".to_owned(),
    };
    let panel = |title: &str, y_label: &str, y_axis, series, marks| Panel {
        title: title.to_owned(),
        x_label: x_label.clone(),
        y_label: y_label.to_owned(),
        x_axis,
        y_axis,
        series,
        marks,
    };
    Figure {
        title: format!("herd capacity: {}", c.target),
        panels: vec![
            panel(
                "Good replies",
                "replies/s",
                rate_y,
                throughput,
                levels_marked.clone(),
            ),
            panel("Latency", "ms", latency_y, latency, latency_marks),
            panel(
                "Errors",
                "% without an OK answer",
                XAxis::Linear,
                errors,
                slo(false),
            ),
        ],
    }
}

/// The capacity, where it broke and the knee, as vertical lines.
fn level_marks(c: &CapacityResult) -> Vec<Mark> {
    let mark = |at: f64, label: String, color: &'static str| Mark {
        vertical: true,
        at,
        label,
        color,
    };
    let mut marks = Vec::new();
    let found = c.capacity_rps.or(c.capacity_users.map(|u| u as f64));
    if let Some(x) = found.filter(|x| *x > 0.0) {
        marks.push(mark(
            x,
            format!("capacity: {}", c.level_text(x)),
            palette::GREEN,
        ));
    }
    if let Some(x) = c.ceiling {
        marks.push(mark(
            x,
            format!("breaks: ~{}", c.level_text(x)),
            palette::RED,
        ));
    }
    if let Some(k) = c.knee {
        marks.push(mark(
            k.level,
            format!("knee: ~{}", c.level_text(k.level)),
            palette::GREY,
        ));
    }
    marks
}
