//! What every chart has: an id, a caption, its axes and where they fall on the page
//! ([`Frame`]), and the lines drawn in it ([`Series`]); the chart layer (`chart.rs`) and its
//! marks (`marks.rs`) draw on them.

use super::axis::Axis;

pub(super) const W: f64 = 960.0;
pub(super) const LEFT: f64 = 66.0;
pub(super) const RIGHT: f64 = 18.0;
pub(super) const TOP: f64 = 10.0;
pub(super) const BOTTOM: f64 = 46.0;

/// Formats a value for the hover box.
pub type Label<'a> = &'a dyn Fn(f64) -> String;

/// One line: points in data units, drawn in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: String,
    pub points: Vec<(f64, f64)>,
    pub dash: bool,
    /// A dot on every point: few points, each a measurement of its own (a step of a sweep).
    pub dots: bool,
    /// Joined by a line; `false` draws the points alone.
    pub line: bool,
    /// Indices of points drawn as a cross instead of a dot and said to be suspect in the hover
    /// box: measured while herd itself was the bottleneck.
    pub flagged: Vec<usize>,
    /// Each point's link (`href`), in the order of `points`; empty: none.
    pub links: Vec<String>,
}

impl Series {
    pub fn new(name: &str, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_owned(),
            color: color.to_owned(),
            points,
            dash: false,
            dots: false,
            line: true,
            flagged: Vec::new(),
            links: Vec::new(),
        }
    }

    pub fn flag(mut self, flagged: Vec<usize>) -> Series {
        self.flagged = flagged;
        self
    }
}

/// What every chart has: an id, a caption and its axes.
pub struct Frame<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub x: Axis,
    pub y: Axis,
    /// Plot height in viewBox units (the width is fixed and scales with the page).
    pub height: f64,
    /// Hover heading for an x value, e.g. `t = 3 s`.
    pub x_label: Label<'a>,
    /// Hover text for a y value, e.g. `3.42 ms`.
    pub y_label: Label<'a>,
}

impl Frame<'_> {
    pub(super) fn px(&self, x: f64) -> f64 {
        LEFT + self.x.pos(x) * (W - LEFT - RIGHT)
    }
    pub(super) fn py(&self, y: f64) -> f64 {
        TOP + (1.0 - self.y.pos(y)) * self.height
    }
    /// The plot area: left, top, right, bottom in viewBox units.
    pub(super) fn area(&self) -> (f64, f64, f64, f64) {
        (LEFT, TOP, W - RIGHT, TOP + self.height)
    }
    pub(super) fn total_height(&self) -> f64 {
        TOP + self.height + BOTTOM
    }
}
