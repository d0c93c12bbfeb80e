//! The HTML back end of the chart model: each [`Panel`] of a [`Figure`] drawn as one of the
//! report's inline SVG charts (`chart.rs`: axes, legend, hover data; `marks.rs`: dots, crosses,
//! reference lines). Pages build figures and hand their panels here; nothing else frames a
//! chart.

use super::axis::Axis;
use super::bars::{breakdown, stacked_bars, Stack};
use super::chart::lines_with;
use super::frame::{Frame, Series};
use super::marks::Rule;
use super::page::esc;
use crate::figure::{Figure, Kind, Panel, Reading, XAxis};

/// The figure's title as a heading, then one chart per panel, top to bottom.
pub fn render(fig: &Figure) -> String {
    let mut out = format!("<h3>{}</h3>\n", esc(&fig.title));
    for panel in &fig.panels {
        out.push_str(&chart(panel));
    }
    out
}

/// Every panel of the figure, top to bottom, without a heading (the page's section has one).
pub fn charts(fig: &Figure) -> String {
    fig.panels.iter().map(chart).collect()
}

/// One panel as a `<figure>` of the page: its id, caption, legend, SVG and hover data.
pub fn chart(p: &Panel) -> String {
    let x_text = |v: f64| p.x_reads.text(v);
    let y_text = |v: f64| p.y_reads.text(v);
    let y = match &p.kind {
        // The names are written on their bars: the axis carries neither ticks nor numbers.
        Kind::Breakdown { names } => {
            let mut y = Axis::linear("", names.len() as f64);
            y.hi = names.len() as f64;
            y.ticks.clear();
            y
        }
        _ => axis(&p.y_label, p.y_axis, &p.y_reads, p.y_range),
    };
    let frame = Frame {
        id: &p.id,
        title: &p.caption,
        x: axis(&p.x_label, p.x_axis, &p.x_reads, p.x_range),
        y,
        height: p.height,
        x_label: &x_text,
        y_label: &y_text,
    };
    match &p.kind {
        Kind::Lines => lines_with(&frame, &series(p), &rules(p), &p.bands),
        Kind::StackedBars { starts, width } => {
            stacked_bars(&frame, starts, *width, &stacks(p, starts))
        }
        Kind::Breakdown { names } => {
            let bars: Vec<f64> = (0..names.len()).map(|i| i as f64).collect();
            breakdown(&frame, names, &stacks(p, &bars))
        }
    }
}

/// The HTML axis of a model axis: its scale, the unit its values read in, its extent.
fn axis(title: &str, scale: XAxis, reads: &Reading, (lo, hi): (f64, f64)) -> Axis {
    let log = scale == XAxis::Log10 && lo.is_finite() && lo > 0.0;
    match reads {
        _ if scale == XAxis::Percentile => Axis::percentile(hi),
        Reading::Ordinal(names) => ordinal_axis(title, names.len()),
        Reading::Duration if log => Axis::duration_log(title, lo, hi),
        _ if log => Axis::log(title, lo, hi),
        Reading::Duration => Axis::duration(title, hi),
        Reading::Bytes => bytes_axis(title, hi),
        _ => Axis::linear(title, hi),
    }
}

/// An axis of whole numbers 1..=n (probes in order), with at most about a dozen ticks.
fn ordinal_axis(title: &str, n: usize) -> Axis {
    let mut x = Axis::linear(title, n as f64 + 0.5);
    x.hi = n as f64 + 0.5;
    let step = n.div_ceil(12).max(1);
    x.ticks = (1..=n)
        .filter(|i| (i - 1) % step == 0)
        .map(|i| (i as f64, crate::format::count(i as u64)))
        .collect();
    x
}

/// A linear axis for byte counts in KB, MB or GB.
fn bytes_axis(title: &str, max: f64) -> Axis {
    let (div, unit) = [(1e9, "GB"), (1e6, "MB"), (1e3, "KB")]
        .into_iter()
        .find(|(d, _)| max >= *d)
        .unwrap_or((1.0, "B"));
    let mut a = Axis::linear(&format!("{title} ({unit})"), max / div);
    a.hi *= div;
    for t in &mut a.ticks {
        t.0 *= div;
    }
    a
}

/// The panel's marks as the report's reference lines.
fn rules(p: &Panel) -> Vec<Rule> {
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
fn series(p: &Panel) -> Vec<Series> {
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
            line.line = s.joined;
            line.links = s.links.clone();
            line
        })
        .collect()
}

/// The layers of a stacked bar chart: each series' value at each bar's start (0 if none).
fn stacks(p: &Panel, starts: &[f64]) -> Vec<Stack> {
    p.series
        .iter()
        .map(|s| Stack {
            name: s.label.clone(),
            color: s.color.to_owned(),
            values: starts
                .iter()
                .map(|x| s.points.iter().find(|pt| pt.0 == *x).map_or(0.0, |pt| pt.1))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_follow_the_model_scale_and_unit() {
        let log = axis("latency", XAxis::Log10, &Reading::Duration, (0.3, 25.0));
        assert_eq!(
            (log.lo, log.hi, log.title.as_str()),
            (0.1, 100.0, "latency (log scale)")
        );
        let ms = axis("latency", XAxis::Linear, &Reading::Duration, (0.0, 23.9));
        assert_eq!(ms.title, "latency (ms)");
        let mb = axis("memory", XAxis::Linear, &Reading::Bytes, (0.0, 5e6));
        assert_eq!((mb.title.as_str(), mb.hi), ("memory (MB)", 5e6));
        let probes = axis(
            "probe",
            XAxis::Linear,
            &Reading::Ordinal(vec![String::new(); 3]),
            (1.0, 3.0),
        );
        assert_eq!(probes.hi, 3.5);
        assert_eq!(probes.ticks.len(), 3);
        // A log axis with nothing above zero to start from falls back to linear.
        let none = axis(
            "users",
            XAxis::Log10,
            &Reading::Users,
            (f64::INFINITY, 10.0),
        );
        assert_eq!(none.lo, 0.0);
        assert_eq!(
            axis("p", XAxis::Percentile, &Reading::Percentile, (0.0, 3.2)).hi,
            3.2
        );
    }
}
