//! What is drawn on a chart besides its lines: a dot per measured point, a cross where the
//! measurement is not to be trusted (herd itself was the bottleneck), and reference lines
//! (an SLO's limit, a knee, a capacity found) with their labels.

use super::frame::{Frame, Series};
use super::page::esc;
use std::fmt::Write;

/// What a cross means, in the legend and the hover box.
pub const FLAGGED: &str = "limited by herd, not the target";

/// The ink of crosses: dark, so they read on any series colour and in greyscale print.
pub const CROSS_INK: &str = "#1d2330";

/// A reference line across the plot at a value of one axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// `true`: at an x value (a level, a time), top to bottom; `false`: at a y value.
    pub vertical: bool,
    pub at: f64,
    pub label: String,
    pub color: String,
}

impl Rule {
    pub fn x(at: f64, label: &str, color: &str) -> Rule {
        Rule {
            vertical: true,
            at,
            label: label.to_owned(),
            color: color.to_owned(),
        }
    }

    pub fn y(at: f64, label: &str, color: &str) -> Rule {
        Rule {
            vertical: false,
            ..Rule::x(at, label, color)
        }
    }
}

/// Dots and crosses of one series, each inside its link when it has one.
pub fn points(f: &Frame, s: &Series, svg: &mut String) {
    if !s.dots && s.flagged.is_empty() {
        return;
    }
    let _ = write!(svg, "<g class=\"marks\" fill=\"{}\">", esc(&s.color));
    for (i, (x, y)) in s.points.iter().enumerate() {
        let link = s.links.get(i);
        if let Some(href) = link {
            let _ = write!(svg, "<a href=\"{}\">", esc(href));
        }
        mark(f.px(*x), f.py(*y), s, i, svg);
        if link.is_some() {
            svg.push_str("</a>");
        }
    }
    svg.push_str("</g>");
}

/// Point `i` of `s` at (`cx`, `cy`): a cross when flagged, else a dot when dots are drawn.
fn mark(cx: f64, cy: f64, s: &Series, i: usize, svg: &mut String) {
    if s.flagged.contains(&i) {
        // White under the cross so it stands out from the line it sits on.
        let _ = write!(
            svg,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"6\" fill=\"#fff\" stroke=\"{}\"/>\
             <path class=\"cross\" stroke=\"{CROSS_INK}\" d=\"M{:.1},{:.1}l7,7m0,-7l-7,7\"/>",
            esc(&s.color),
            cx - 3.5,
            cy - 3.5
        );
    } else if s.dots {
        let _ = write!(svg, "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3.5\"/>");
    }
}

/// A dashed reference line with its label inside the plot. Labels of the `nth` rule of its
/// direction step aside (down for vertical rules, left for horizontal ones), so rules close
/// together stay legible.
pub fn rule(f: &Frame, r: &Rule, nth: usize, svg: &mut String) {
    let (left, top, right, bottom) = f.area();
    let color = esc(&r.color);
    if r.vertical {
        let x = f.px(r.at);
        // Labels of lines near the right edge go on their left.
        let (tx, anchor) = if x > (left + right) / 2.0 + 200.0 {
            (x - 5.0, "end")
        } else {
            (x + 5.0, "start")
        };
        let _ = write!(
            svg,
            "<line class=\"rule\" stroke=\"{color}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{bottom}\"/>\
             <text class=\"rule\" style=\"fill:{color}\" x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            top + 13.0 + 14.0 * nth as f64,
            esc(&r.label)
        );
    } else {
        let y = f.py(r.at);
        let _ = write!(
            svg,
            "<line class=\"rule\" stroke=\"{color}\" x1=\"{left}\" x2=\"{right}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"rule\" style=\"fill:{color}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            right - 5.0 - 230.0 * nth as f64,
            y - 5.0,
            esc(&r.label)
        );
    }
}

/// A shaded span of the x axis, top to bottom, its label at the top: a fault window. The
/// `nth` band's label steps down so neighbours stay legible.
pub fn band(f: &Frame, b: &crate::figure::Band, nth: usize, svg: &mut String) {
    let (left, top, right, bottom) = f.area();
    let x0 = f.px(b.from).clamp(left, right);
    let x1 = f.px(b.to).clamp(left, right);
    let color = esc(b.color);
    let _ = write!(
        svg,
        "<g class=\"fault-window\" data-from=\"{:.3}\" data-to=\"{:.3}\">\
         <rect x=\"{x0:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" fill-opacity=\"0.10\"><title>{}</title></rect>\
         <text class=\"rule\" style=\"fill:{color}\" x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
        b.from,
        b.to,
        (x1 - x0).max(1.0),
        bottom - top,
        esc(&b.label),
        x0 + 4.0,
        bottom - 6.0 - 14.0 * nth as f64,
        esc(&b.label)
    );
}
