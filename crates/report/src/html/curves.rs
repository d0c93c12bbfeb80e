//! What the pages of series of runs share (a sweep, a capacity search): axes of offered load,
//! the latency axis, and the verdict box with its answer in words.

use super::axis::Axis;
use super::chart::Series;
use super::page::esc;
use crate::figure::{self, XAxis};
use crate::Model;
use std::fmt::Write;

/// The x axis of curves against load: requests per second (open model), or users (closed),
/// logarithmic by the chart model's one rule ([`figure::load_axis`]), as `herd plot` draws it.
pub fn load_axis(model: Model, title: &str, levels: &[f64]) -> Axis {
    let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = levels.iter().copied().fold(0.0, f64::max);
    if figure::load_axis(model, levels) == XAxis::Log10 {
        Axis::log(title, lo, hi)
    } else {
        // Up to the highest level, rounded up to a tick: the last step sits at or near the edge.
        Axis::linear(title, hi)
    }
}

/// An axis of whole numbers 1..=n (probes in order), with at most about a dozen ticks.
pub fn ordinal_axis(title: &str, n: usize) -> Axis {
    let mut x = Axis::linear(title, n as f64 + 0.5);
    x.hi = n as f64 + 0.5;
    let step = n.div_ceil(12).max(1);
    x.ticks = (1..=n)
        .filter(|i| (i - 1) % step == 0)
        .map(|i| (i as f64, crate::format::count(i as u64)))
        .collect();
    x
}

/// The largest y of any series, and of `also` (limits drawn as rules must fit too).
pub fn max_y(series: &[Series], also: &[f64]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(also.iter().copied())
        .fold(0.0, f64::max)
}

/// A y axis of replies per second for `series`, of which `good` are the good replies,
/// logarithmic by the chart model's rule ([`figure::rate_axis`]).
pub fn rate_axis(series: &[Series], good: &[Series]) -> Axis {
    let (min, max) = figure::span(ys(series));
    let good_max = max_y(good, &[]);
    if figure::rate_axis(min, max, good_max) == XAxis::Log10 {
        Axis::log("replies per second (req/s, log scale)", min, max)
    } else {
        Axis::linear("replies per second (req/s)", max * 1.08)
    }
}

/// A latency axis for `series` (in ms) and limits `also`, logarithmic by the chart model's
/// rule ([`figure::latency_axis`]).
pub fn latency_axis(series: &[Series], also: &[f64]) -> Axis {
    let max = max_y(series, also);
    let (min, _) = figure::span(ys(series));
    if figure::latency_axis(min, max) == XAxis::Log10 {
        Axis::duration_log("latency", min, max * 1.1)
    } else {
        Axis::duration("latency", max * 1.1)
    }
}

/// Every y value of `series`.
fn ys(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.points.iter().map(|p| p.1))
}

/// A chip under the verdict: `class` is `ok`, `warn`, `bad` or empty.
pub struct Chip {
    pub class: &'static str,
    pub text: String,
}

pub fn chip(class: &'static str, text: impl Into<String>) -> Chip {
    Chip {
        class,
        text: text.into(),
    }
}

/// The verdict box: a word, the answer in sentences, chips, and details.
pub fn verdict(
    class: &str,
    word: &str,
    answer: &[String],
    chips: &[Chip],
    details: &[String],
) -> String {
    let mut out = format!(
        "<section id=\"verdict\" class=\"verdict {class}\"><div class=\"word\">{}</div>",
        esc(word)
    );
    for line in answer {
        let _ = write!(out, "<p class=\"answer\">{}</p>", esc(line));
    }
    out.push_str("<div class=\"chips\">");
    for c in chips {
        let _ = write!(
            out,
            "<span class=\"chip {}\">{}</span>",
            c.class,
            esc(&c.text)
        );
    }
    out.push_str("</div>");
    if !details.is_empty() {
        out.push_str("<ul>");
        for d in details {
            let _ = write!(out, "<li>{}</li>", esc(d));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
    out
}

/// How a step's generator verdict reads in a table cell: `ok`, or a warning with the reasons
/// on hover.
pub fn generator_cell(limited: bool, reasons: &[String], what: &str) -> String {
    if limited {
        format!(
            "<span class=\"limited\" title=\"{}\">LIMITED: herd, not the {what}</span>",
            esc(&reasons.join("; "))
        )
    } else {
        "ok".to_owned()
    }
}
