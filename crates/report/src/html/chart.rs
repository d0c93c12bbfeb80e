//! The chart layer: line charts (stacked bar charts in `bars.rs`) as inline SVG, with axes, ticks, axis
//! titles with units, an HTML legend, and the data the hover script shows. Points can be
//! marked (dots, crosses for values that are not to be trusted) and reference lines drawn
//! ([`Rule`]); see `marks.rs`.

use super::frame::{Frame, Series, LEFT, RIGHT, TOP, W};
use super::marks::{self, Rule};
use super::page::esc;
use std::collections::HashMap;
use std::fmt::Write;

/// A line chart with reference lines (a limit, a knee) drawn behind the series, and spans of
/// the x axis (fault windows) shaded behind everything.
pub fn lines_with(
    f: &Frame,
    series: &[Series],
    rules: &[Rule],
    bands: &[crate::figure::Band],
) -> String {
    let mut svg = String::new();
    axes(f, &mut svg);
    for (i, b) in bands.iter().enumerate() {
        marks::band(f, b, i, &mut svg);
    }
    let (mut across, mut down) = (0, 0);
    for r in rules {
        let nth = if r.vertical { &mut down } else { &mut across };
        marks::rule(f, r, *nth, &mut svg);
        *nth += 1;
    }
    let mut any = false;
    for s in series.iter().filter(|s| !s.points.is_empty()) {
        any = true;
        marks::points(f, s, &mut svg);
        if !s.line {
            continue;
        }
        let mut d = String::new();
        for (i, (x, y)) in s.points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                f.px(*x),
                f.py(*y)
            );
        }
        if s.points.len() == 1 {
            // A lone point still shows: a short flat stroke.
            let _ = write!(d, "h1");
        }
        let _ = write!(
            svg,
            "<path class=\"series{}\" stroke=\"{}\" d=\"{d}\"><title>{}</title></path>",
            if s.dash { " dash" } else { "" },
            esc(&s.color),
            esc(&s.name)
        );
    }
    if !any {
        empty(f, &mut svg);
    }
    // Hover positions: every x any series has, with each series' value there.
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let columns: Vec<Vec<Option<String>>> = series
        .iter()
        .map(|s| {
            let at: HashMap<u64, (usize, f64)> = s
                .points
                .iter()
                .enumerate()
                .map(|(i, (x, y))| (x.to_bits(), (i, *y)))
                .collect();
            xs.iter()
                .map(|x| {
                    at.get(&x.to_bits()).map(|(i, y)| {
                        let v = (f.y_label)(*y);
                        if s.flagged.contains(i) {
                            format!("{v} ({})", marks::FLAGGED)
                        } else {
                            v
                        }
                    })
                })
                .collect()
        })
        .collect();
    let mut keys: Vec<(&str, &str, &str)> = series
        .iter()
        .map(|s| {
            let style = match (s.line, s.dash) {
                (false, _) => "dot",
                (true, true) => "dash",
                (true, false) => "",
            };
            (s.name.as_str(), s.color.as_str(), style)
        })
        .collect();
    let mut columns = columns;
    if series.iter().any(|s| !s.flagged.is_empty()) {
        // A legend entry for the crosses; it has no values of its own.
        keys.push((marks::FLAGGED, marks::CROSS_INK, "cross"));
        columns.push(vec![None; xs.len()]);
    }
    figure(f, &keys, &svg, &xs, &columns)
}

pub(super) fn axes(f: &Frame, svg: &mut String) {
    let (x0, x1) = (LEFT, W - RIGHT);
    let (y0, y1) = (TOP, TOP + f.height);
    for (v, label) in &f.y.ticks {
        let y = f.py(*v);
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x0 - 8.0,
            y + 4.0,
            esc(label)
        );
    }
    for (v, label) in &f.x.ticks {
        let x = f.px(*v);
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0}\" y2=\"{y1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y1 + 17.0,
            esc(label)
        );
    }
    let _ = write!(
        svg,
        "<rect class=\"frame\" x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\"/>\
         <text class=\"title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text class=\"title\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        x1 - x0,
        f.height,
        (x0 + x1) / 2.0,
        y1 + 38.0,
        esc(&f.x.title),
        (y0 + y1) / 2.0,
        esc(&f.y.title)
    );
}

pub(super) fn empty(f: &Frame, svg: &mut String) {
    let _ = write!(
        svg,
        "<text class=\"empty\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">no data</text>",
        (LEFT + W - RIGHT) / 2.0,
        TOP + f.height / 2.0
    );
}

fn figure(
    f: &Frame,
    keys: &[(&str, &str, &str)],
    svg: &str,
    xs: &[f64],
    columns: &[Vec<Option<String>>],
) -> String {
    figure_at(f, keys, svg, xs, xs, columns)
}

/// The `<figure>`: caption, legend, the SVG with its hover cursor, and the hover data.
pub(super) fn figure_at(
    f: &Frame,
    keys: &[(&str, &str, &str)],
    svg: &str,
    xs: &[f64],
    heads: &[f64],
    columns: &[Vec<Option<String>>],
) -> String {
    let mut legend = String::from("<div class=\"legend\">");
    for (name, color, style) in keys {
        if *style == "cross" {
            let _ = write!(
                legend,
                "<span class=\"key\"><i class=\"cross\" style=\"color:{}\">&#215;</i>{}</span>",
                esc(color),
                esc(name)
            );
            continue;
        }
        let _ = write!(
            legend,
            "<span class=\"key\"><i class=\"{style}\" style=\"background:{}\"></i>{}</span>",
            esc(color),
            esc(name)
        );
    }
    legend.push_str("</div>");
    let hover = hover_json(f, keys, xs, heads, columns);
    let h = f.total_height();
    format!(
        "<figure class=\"chart\" id=\"{id}\" data-hover=\"{}\"><figcaption>{}</figcaption>{legend}\
         <div class=\"plot\"><svg class=\"chart\" viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"{}\">\
         {svg}<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"{TOP}\" y2=\"{:.1}\"/></svg>\
         <div class=\"tip\" hidden></div></div></figure>\n",
        esc(&hover),
        esc(f.title),
        esc(f.title),
        TOP + f.height,
        id = esc(f.id),
    )
}

fn hover_json(
    f: &Frame,
    keys: &[(&str, &str, &str)],
    xs: &[f64],
    heads: &[f64],
    columns: &[Vec<Option<String>>],
) -> String {
    let px: Vec<serde_json::Value> = xs
        .iter()
        .map(|x| serde_json::json!((f.px(*x) * 10.0).round() / 10.0))
        .collect();
    let t: Vec<String> = heads.iter().map(|x| (f.x_label)(*x)).collect();
    let s: Vec<serde_json::Value> = keys
        .iter()
        .zip(columns)
        .map(|((n, c, _), v)| serde_json::json!({"n": n, "c": c, "v": v}))
        .collect();
    serde_json::json!({"x": px, "t": t, "l": LEFT, "r": W - RIGHT, "s": s}).to_string()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::html::axis::Axis;

    pub(in crate::html) fn frame<'a>(x: &'a dyn Fn(f64) -> String) -> Frame<'a> {
        Frame {
            id: "c",
            title: "Latency <over> time",
            x: Axis::linear("time since start (s)", 3.0),
            y: Axis::duration("latency", 20.0),
            height: 200.0,
            x_label: x,
            y_label: x,
        }
    }

    #[test]
    fn lines_draw_every_point_and_carry_hover_values() {
        let label = |v: f64| format!("{v}");
        let f = frame(&label);
        let mut p99 = Series::new("p99", "#E69F00", vec![(1.0, 15.0)]);
        p99.dash = true;
        let html = lines_with(
            &f,
            &[
                Series::new("p50", "#0072B2", vec![(0.0, 5.0), (1.0, 6.0), (2.0, 7.0)]),
                p99,
            ],
            &[],
            &[],
        );
        assert_eq!(html.matches("<path class=\"series").count(), 2);
        assert!(html.contains("class=\"series dash\""));
        assert!(html.contains("M66.0,"), "{html}");
        assert!(html.contains("Latency &lt;over&gt; time"));
        assert!(html.contains("latency (ms)") && html.contains("time since start (s)"));
        // p99 has no value at t = 0: null in its column.
        assert!(
            html.contains("&quot;v&quot;:[null,&quot;15&quot;,null]"),
            "{html}"
        );
        assert!(!html.contains("no data"));
    }

    #[test]
    fn no_points_says_so() {
        let label = |v: f64| format!("{v}");
        let html = lines_with(
            &frame(&label),
            &[Series::new("p50", "#000", vec![])],
            &[],
            &[],
        );
        assert!(html.contains("no data"));
    }
}
