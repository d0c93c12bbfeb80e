//! A capacity search probe by probe: the level of each probe in the order run (the ramp, the
//! bisection, the confirmation), whether it held, and the capacity and ceiling found.

use super::capacity::level_reading;
use super::{palette, Figure, Mark, Panel, Reading, Series};
use crate::capacity::{CapacityResult, ProbeRecord, Purpose};
use crate::format::duration_s;
use crate::{GeneratorVerdict, Model};

fn limited(p: &ProbeRecord) -> bool {
    p.generator == GeneratorVerdict::GeneratorLimited
}

/// What a probe was for, in a word.
pub fn purpose(p: Purpose) -> &'static str {
    match p {
        Purpose::Ramp => "ramp",
        Purpose::Narrow => "narrow",
        Purpose::Confirm => "confirm",
    }
}

/// One panel: probe number against level, a point per probe coloured by its verdict, with
/// the capacity and where it broke as limits across.
pub fn search_figure(c: &CapacityResult) -> Figure {
    let at = |keep: &dyn Fn(&ProbeRecord) -> bool| -> Vec<(f64, f64)> {
        c.probes
            .iter()
            .enumerate()
            .filter(|(_, p)| keep(p))
            .map(|(i, p)| ((i + 1) as f64, p.level))
            .collect()
    };
    let limited_points = at(&limited);
    let series = vec![
        Series::line("level probed", palette::GREY, at(&|_| true)),
        Series::line("held", palette::GREEN, at(&|p| !limited(p) && p.held)).scatter(),
        Series::line(
            "broke the SLO",
            palette::RED,
            at(&|p| !limited(p) && !p.broke.is_empty()),
        )
        .scatter(),
        Series {
            suspect: limited_points.clone(),
            ..Series::line("limited by herd", palette::GREY, limited_points).scatter()
        },
    ];
    let mut marks = Vec::new();
    let across = |at: f64, label: String, color: &'static str| Mark {
        vertical: false,
        at,
        label,
        color,
    };
    let found = c.capacity_rps.or(c.capacity_users.map(|u| u as f64));
    if let Some(x) = found.filter(|x| *x > 0.0) {
        marks.push(across(
            x,
            format!("capacity: {}", c.level_text(x)),
            palette::GREEN,
        ));
    }
    if let Some(x) = c.ceiling {
        marks.push(across(
            x,
            format!("breaks: ~{}", c.level_text(x)),
            palette::RED,
        ));
    }
    let heads = c
        .probes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "probe {}: {}, {}",
                i + 1,
                purpose(p.purpose),
                duration_s(p.duration_s)
            )
        })
        .collect();
    let n = c.probes.len() as f64;
    let max = c.probes.iter().map(|p| p.level).fold(0.0, f64::max);
    let y_label = match c.model {
        Model::Open => format!("level ({})", c.open_unit()),
        Model::Closed => "level (users)".to_owned(),
    };
    let panel = Panel::new(
        "chart-capacity-search",
        "The search, probe by probe",
        "Level of each probe: ramp up until the SLO breaks, bisect, confirm",
    )
    .x(
        "probe, in the order run",
        super::XAxis::Linear,
        Reading::Ordinal(heads),
        (1.0, n),
    )
    .y_to(&y_label, level_reading(c), max * 1.1)
    .height(200.0)
    .series(series)
    .marks(marks);
    Figure {
        title: format!("herd capacity: {}, the search", c.target),
        panels: vec![panel],
    }
}
