//! bench2graph's successor: a sweep as three charts, one line per target.

use super::{load_axis, palette, Figure, Panel, Series};
use crate::sweep::{Row, Table};
use crate::{GeneratorVerdict, Model};

/// Demanded vs achieved rate, response time and errors against the level, one line per target;
/// steps where herd itself was the bottleneck are crossed out. `name` heads the figure.
pub fn sweep_figure(t: &Table, name: &str) -> Figure {
    let levels: Vec<f64> = t.steps.iter().map(|s| s.level).collect();
    let x_axis = load_axis(t.model, &levels);
    let x_label = match t.model {
        Model::Open => "demanded rate (req/s)",
        Model::Closed => "concurrent users",
    };
    let per_target = |f: &dyn Fn(&Row) -> Option<f64>, suffix: &str, dashed: bool| {
        t.targets
            .iter()
            .enumerate()
            .filter_map(|(i, target)| {
                let mut points = Vec::new();
                let mut suspect = Vec::new();
                for s in &t.steps {
                    let Some(row) = s.rows.get(i) else { continue };
                    let Some(y) = f(row).filter(|y| y.is_finite()) else {
                        continue;
                    };
                    points.push((s.level, y));
                    let limited = row
                        .extra
                        .as_ref()
                        .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited);
                    if limited {
                        suspect.push((s.level, y));
                    }
                }
                (!points.is_empty()).then(|| Series {
                    label: format!("{target}{suffix}"),
                    color: palette::cycle(i),
                    dashed,
                    points,
                    suspect,
                })
            })
            .collect::<Vec<_>>()
    };
    let mut rate_series = per_target(&|r| Some(r.avg_rep_rate), " replies/s", false);
    if t.model == Model::Open {
        rate_series.push(Series {
            label: "demanded (dashed)".into(),
            color: palette::GREY,
            dashed: true,
            points: levels.iter().map(|&l| (l, l)).collect(),
            suspect: Vec::new(),
        });
    }
    let mut time_series = per_target(&|r| Some(r.resp_time), " mean", false);
    time_series.extend(per_target(
        &|r| r.extra.as_ref().map(|x| x.p99),
        " p99 (dashed)",
        true,
    ));
    let panel = |title: &str, y_label: &str, series: Vec<Series>| Panel {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        x_axis,
        series,
    };
    let limited = t.steps.iter().flat_map(|s| &s.rows).any(|r| {
        r.extra
            .as_ref()
            .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited)
    });
    let mut title = format!("herd sweep: {name}");
    if limited {
        title.push_str("  (x = herd was the bottleneck)");
    }
    Figure {
        title,
        panels: vec![
            panel(
                match t.model {
                    Model::Open => "Achieved vs demanded rate",
                    Model::Closed => "Throughput",
                },
                "replies/s",
                rate_series,
            ),
            panel("Response time", "ms", time_series),
            panel(
                "Errors",
                "% without an OK answer",
                per_target(&|r| Some(r.errors), " errors", false),
            ),
        ],
    }
}
