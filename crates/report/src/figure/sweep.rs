//! bench2graph's successor: a sweep as three charts against the level, one colour per target.
//! `herd plot` draws this figure, and `herd report`'s sweep page draws the same series.

use super::{load_axis, max_y, palette, Figure, Mark, Panel, Reading, Series};
use crate::sweep::{good_rate, level_text, level_unit, Row, SweepResult, Table};
use crate::{GeneratorVerdict, Model};

/// Good and all replies per second against the level (and the demanded rate in the open
/// model), latency p50 and p99 (the mean when the table has only autobench's columns) and
/// errors, one colour per target; steps where herd itself was the bottleneck are suspect
/// (crossed out). `name` heads the figure.
pub fn sweep_figure(t: &Table, name: &str) -> Figure {
    let levels: Vec<f64> = t.steps.iter().map(|s| s.level).collect();
    let x_axis = load_axis(t.model, &levels);
    let x_label = match t.model {
        Model::Open => "demanded rate (req/s)",
        Model::Closed => "concurrent users",
    };
    let curve = |i: usize, what: &str, dashed: bool, f: &dyn Fn(&Row) -> Option<f64>| {
        curve(t, i, what, dashed, f)
    };
    let extra = |f: fn(&crate::sweep::Extra) -> f64| move |r: &Row| r.extra.as_ref().map(f);
    let targets = 0..t.targets.len();
    let mut rates = Vec::new();
    let mut latency = Vec::new();
    for i in targets.clone() {
        rates.push(curve(i, "good replies/s", false, &|r| Some(good_rate(r))));
        rates.push(curve(i, "replies/s (any status)", true, &|r| {
            Some(r.avg_rep_rate)
        }));
        if t.steps
            .iter()
            .any(|s| s.rows.get(i).is_some_and(|r| r.extra.is_some()))
        {
            latency.push(curve(i, "p50", false, &extra(|x| x.p50)));
            latency.push(curve(i, "p99", true, &extra(|x| x.p99)));
        } else {
            latency.push(curve(i, "mean", false, &|r| Some(r.resp_time)));
        }
    }
    if t.model == Model::Open {
        let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = levels.iter().copied().fold(0.0, f64::max);
        // The diagonal: achieved equals demanded.
        let points = if lo <= hi {
            vec![(lo, lo), (hi, hi)]
        } else {
            Vec::new()
        };
        rates.push(Series::line("demanded", palette::GREY, points).dashed());
    }
    let errors = targets
        .map(|i| curve(i, "not ok", false, &|r| Some(r.errors)))
        .collect();
    let good_max = max_y(
        &rates
            .iter()
            .filter(|s| !s.dashed)
            .cloned()
            .collect::<Vec<_>>(),
        &[],
    );
    let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = levels.iter().copied().fold(0.0, f64::max);
    let reads = Reading::Level(level_unit(t.model).to_owned());
    let panel = |id: &str, title: &str, caption: &str, series: Vec<Series>| {
        Panel::new(id, title, caption)
            .x(x_label, x_axis, reads.clone(), (lo, hi))
            .height(260.0)
            .series(
                series
                    .into_iter()
                    .filter(|s| !s.points.is_empty())
                    .collect(),
            )
    };
    let (title, caption) = match t.model {
        Model::Open => (
            "Achieved vs demanded rate",
            "Achieved against demanded rate",
        ),
        Model::Closed => ("Throughput", "Throughput against concurrent users"),
    };
    let mut name_line = format!("herd sweep: {name}");
    if t.steps.iter().flat_map(|s| &s.rows).any(limited) {
        name_line.push_str("  (x = herd was the bottleneck)");
    }
    Figure {
        title: name_line,
        panels: vec![
            panel("chart-sweep-throughput", title, caption, rates).y_rates(good_max),
            panel(
                "chart-sweep-latency",
                "Response time",
                "Latency against load: p50 (solid) and p99 (dashed), from the intended send time",
                latency,
            )
            .y_latency(&[]),
            panel(
                "chart-sweep-errors",
                "Errors",
                "Requests without an OK answer (errors, 4xx/5xx, never sent)",
                errors,
            )
            .height(200.0)
            .y_not_ok(&[]),
        ],
    }
}

/// The curve of target `i` for one measure: its colour is the target's in every panel.
fn curve(t: &Table, i: usize, what: &str, dashed: bool, f: &dyn Fn(&Row) -> Option<f64>) -> Series {
    let one = t.targets.len() == 1;
    let mut points = Vec::new();
    let mut suspect = Vec::new();
    for s in &t.steps {
        let Some(row) = s.rows.get(i) else { continue };
        let Some(y) = f(row).filter(|y| y.is_finite()) else {
            continue;
        };
        points.push((s.level, y));
        if limited(row) {
            suspect.push((s.level, y));
        }
    }
    let label = if one {
        what.to_owned()
    } else {
        format!("{} {what}", t.targets[i])
    };
    Series {
        dashed,
        markers: true,
        suspect,
        ..Series::line(&label, palette::cycle(i), points)
    }
}

fn limited(row: &Row) -> bool {
    row.extra
        .as_ref()
        .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited)
}

/// A sweep result's figure: [`sweep_figure`] of its table, with each target's knee on every
/// panel and the stop rule's limits on theirs, as the HTML page draws them.
pub fn sweep_result_figure(s: &SweepResult, name: &str) -> Figure {
    let mut fig = sweep_figure(&s.table(), name);
    let one = s.targets.len() == 1;
    let knees: Vec<Mark> = s
        .knees()
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let knee = k.knee?;
            let who = if one {
                String::new()
            } else {
                format!(" {}", k.name)
            };
            Some(Mark {
                vertical: true,
                at: knee.level,
                label: format!("knee{who}: ~{}", level_text(knee.level)),
                color: palette::cycle(i),
            })
        })
        .collect();
    let limit = |at: f64, label: String| Mark {
        vertical: false,
        at,
        label,
        color: palette::RED,
    };
    let stop = &s.config.stop;
    let limits = [
        Vec::new(),
        stop.max_p99_ms
            .iter()
            .map(|ms| {
                limit(
                    *ms,
                    format!("stop rule: p99 > {}", super::short_duration(*ms)),
                )
            })
            .collect(),
        stop.max_error_percent
            .iter()
            .map(|p| limit(*p, format!("stop rule: errors > {p}%")))
            .collect(),
    ];
    let stop_p99: Vec<f64> = stop.max_p99_ms.into_iter().collect();
    let stop_errors: Vec<f64> = stop.max_error_percent.into_iter().collect();
    let panels = std::mem::take(&mut fig.panels);
    for (i, (mut panel, limits)) in panels.into_iter().zip(limits).enumerate() {
        panel.marks = limits;
        panel.marks.extend(knees.iter().cloned());
        // The axes reach the stop rule's limits, and heads name the sweep's own unit.
        panel.x_reads = Reading::Level(s.level_unit());
        fig.panels.push(match i {
            1 => panel.y_latency(&stop_p99),
            2 => panel.y_not_ok(&stop_errors),
            _ => panel,
        });
    }
    fig
}
