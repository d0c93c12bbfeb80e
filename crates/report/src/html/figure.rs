//! The HTML back end of the chart model: a [`Figure`] drawn as the report's inline SVG charts,
//! by the same code (look, hover data attributes) as every other chart of the report.

use super::axis::Axis;
use super::chart::{lines_with, Frame, Series};
use super::marks::Rule;
use super::page::esc;
use crate::figure::{Figure, Panel, XAxis};
use crate::format::rate;

/// The figure's title as a heading, then one chart per panel, top to bottom.
pub fn render(fig: &Figure) -> String {
    let mut out = format!("<h3>{}</h3>\n", esc(&fig.title));
    for (i, panel) in fig.panels.iter().enumerate() {
        out.push_str(&panel_svg(panel, &format!("figure-{i}")));
    }
    out
}

/// The HTML axis of the figure's x axis kind, fitted to the panel's points.
fn x_axis(p: &Panel) -> Axis {
    let xs = || p.series.iter().flat_map(|s| s.points.iter()).map(|pt| pt.0);
    let lo = xs().filter(|x| *x > 0.0).fold(f64::INFINITY, f64::min);
    let hi = xs().fold(0.0, f64::max);
    match p.x_axis {
        XAxis::Log10 if lo.is_finite() => Axis::log(&p.x_label, lo, hi),
        XAxis::Percentile => Axis::percentile(hi),
        XAxis::Log10 | XAxis::Linear => Axis::linear(&p.x_label, hi.max(1e-9)),
    }
}

/// The panel's marks as the report's reference lines.
pub fn rules(p: &Panel) -> Vec<Rule> {
    p.marks
        .iter()
        .map(|m| {
            if m.vertical {
                Rule::x(m.at, &m.label, m.color)
            } else {
                Rule::y(m.at, &m.label, m.color)
            }
        })
        .collect()
}

/// The panel's series as the report's chart series: same names, colours, dashes and dots,
/// suspect points flagged (crossed out).
pub fn series(p: &Panel) -> Vec<Series> {
    p.series
        .iter()
        .map(|s| {
            let flagged = s
                .points
                .iter()
                .enumerate()
                .filter(|(_, pt)| s.suspect.contains(pt))
                .map(|(k, _)| k)
                .collect();
            let mut line = Series::new(&s.label, s.color, s.points.clone()).flag(flagged);
            line.dash = s.dashed;
            line.dots = s.markers;
            line
        })
        .collect()
}

fn panel_svg(p: &Panel, id: &str) -> String {
    let series = series(p);
    let (ymin, ymax) =
        crate::figure::span(series.iter().flat_map(|s| s.points.iter().map(|pt| pt.1)));
    let y = match p.y_axis {
        XAxis::Log10 if ymin.is_finite() => Axis::log(&p.y_label, ymin, ymax),
        _ => Axis::linear(&p.y_label, if ymax > 0.0 { ymax * 1.08 } else { 1.0 }),
    };
    let x_label = |v: f64| rate(v);
    let y_label = |v: f64| rate(v);
    lines_with(
        &Frame {
            id,
            title: &p.title,
            x: x_axis(p),
            y,
            height: 240.0,
            x_label: &x_label,
            y_label: &y_label,
        },
        &series,
        &rules(p),
    )
}
