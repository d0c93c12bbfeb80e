//! A capacity search as three charts against the level probed: good replies, the SLO's
//! latency percentiles and errors, with the capacity, where it broke and the knee marked.
//! `herd plot` draws this figure, and `herd report`'s capacity page draws the same series.

use super::{load_axis, max_y, palette, Figure, Mark, Panel, Reading, Series};
use crate::capacity::{
    latency_at, measured, percentile_name, CapacityResult, Objective, ProbeRecord,
};
use crate::{GeneratorVerdict, Model};

/// The capacity search's figure: one point per level probed (the latest probe at a level).
pub fn capacity_figure(c: &CapacityResult) -> Figure {
    let probes = c.by_level();
    let curve = |label: &str, color: &'static str, f: &dyn Fn(&ProbeRecord) -> f64| {
        curve(&probes, label, color, f)
    };
    let levels: Vec<f64> = probes.iter().map(|p| p.level).collect();
    let throughput = throughput(c, &probes, &levels);
    let latency = latency(c, &probes);
    let errors = vec![curve("not ok", palette::BLUE, &|p| {
        measured(&p.result).error_percent
    })];

    let levels_marked = level_marks(c);
    let slo = |latency: bool| slo_marks(c, latency, &levels_marked);
    let good_max = max_y(&throughput[..1], &[]);
    let latency_marks = slo(true);
    let limits: Vec<f64> = latency_marks
        .iter()
        .filter(|m| !m.vertical)
        .map(|m| m.at)
        .collect();
    let error_marks = slo(false);
    let error_limits: Vec<f64> = error_marks
        .iter()
        .filter(|m| !m.vertical)
        .map(|m| m.at)
        .collect();
    let panel = |id: &str, title: &str, caption: &str, series, marks| {
        Panel::new(id, title, caption)
            .x(
                &x_label(c),
                load_axis(c.model, &levels),
                level_reading(c),
                span(&levels),
            )
            .height(260.0)
            .series(series)
            .marks(marks)
    };
    Figure {
        title: format!("herd capacity: {}", c.target),
        panels: vec![
            panel(
                "chart-capacity-throughput",
                "Good replies",
                "Good replies against the level probed",
                throughput,
                levels_marked.clone(),
            )
            .y_rates(good_max),
            panel(
                "chart-capacity-latency",
                "Latency",
                "Latency against the level probed, from the intended send time",
                latency,
                latency_marks,
            )
            .y_latency(&limits),
            panel(
                "chart-capacity-errors",
                "Errors",
                "Requests without an OK answer against the level probed",
                errors,
                error_marks,
            )
            .height(200.0)
            .y_not_ok(&error_limits),
        ],
    }
}

/// A line through each level probed, its points measured while herd itself was the
/// bottleneck marked suspect.
fn curve(
    probes: &[&ProbeRecord],
    label: &str,
    color: &'static str,
    f: &dyn Fn(&ProbeRecord) -> f64,
) -> Series {
    let points: Vec<(f64, f64)> = probes.iter().map(|p| (p.level, f(p))).collect();
    let suspect = probes
        .iter()
        .zip(&points)
        .filter(|(p, _)| p.generator == GeneratorVerdict::GeneratorLimited)
        .map(|(_, pt)| *pt)
        .collect();
    Series {
        markers: true,
        suspect,
        ..Series::line(label, color, points)
    }
}

/// Good replies, all replies, and (for an open search in requests) what was offered.
fn throughput(c: &CapacityResult, probes: &[&ProbeRecord], levels: &[f64]) -> Vec<Series> {
    let curve = |label: &str, color: &'static str, f: &dyn Fn(&ProbeRecord) -> f64| {
        curve(probes, label, color, f)
    };
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
        throughput.push(Series::line("offered", palette::GREY, vec![(lo, lo), (hi, hi)]).dashed());
    }
    throughput
}

/// The SLO's latency percentiles, and the median for scale.
fn latency(c: &CapacityResult, probes: &[&ProbeRecord]) -> Vec<Series> {
    let curve = |label: &str, color: &'static str, f: &dyn Fn(&ProbeRecord) -> f64| {
        curve(probes, label, color, f)
    };
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
    percentiles
        .iter()
        .enumerate()
        .map(|(i, q)| {
            curve(&percentile_name(*q), colors[i % colors.len()], &|p| {
                latency_at(&p.result.latency_ms, *q)
            })
        })
        .collect()
}

/// The SLO's limits (of latency, or of errors) as lines across, and the levels marked.
fn slo_marks(c: &CapacityResult, latency: bool, levels_marked: &[Mark]) -> Vec<Mark> {
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
}

/// The lowest and highest of `levels` (infinity and zero when there is none).
fn span(levels: &[f64]) -> (f64, f64) {
    let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
    (lo, levels.iter().copied().fold(0.0, f64::max))
}

/// The title of an axis of levels probed.
pub(super) fn x_label(c: &CapacityResult) -> String {
    match c.model {
        Model::Open => format!("offered rate ({})", c.open_unit()),
        Model::Closed => "concurrent users".to_owned(),
    }
}

/// How a level reads: `200 req/s`, `10 users`, as [`CapacityResult::level_text`] says it.
pub(super) fn level_reading(c: &CapacityResult) -> Reading {
    match c.model {
        Model::Open => Reading::Rate(format!(" {}", c.open_unit())),
        Model::Closed => Reading::Users,
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
