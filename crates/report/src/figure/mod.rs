//! The one chart model: a figure described as plain data — [`Figure`] of [`Panel`]s of
//! [`Series`] — with one palette and one rule for when an axis of load is logarithmic.
//! Two back ends draw it: the HTML report's inline SVG ([`crate::html::figure_svg`]) and
//! plotters' PNG/SVG for `herd plot` (`crate::plot::render`, behind the `png` feature), so
//! both show the same series in the same colours on the same kind of axis.
//!
//! Nothing here depends on a drawing library: crates that only read results do not build one.

mod capacity;
mod distribution;
pub mod palette;
mod run;
mod scale;
mod sweep;

pub use capacity::capacity_figure;
pub use distribution::{percentiles, reach};
pub use run::{mid, run_end, run_figure};
pub use scale::{latency_axis, load_axis, rate_axis, span};
pub use sweep::{sweep_figure, sweep_result_figure};

/// A picture: a title over panels stacked top to bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
}

/// One chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_axis: XAxis,
    /// `Linear` or `Log10` (by [`rate_axis`] or [`latency_axis`]): values, not percentiles.
    pub y_axis: XAxis,
    pub series: Vec<Series>,
    /// Reference lines (a knee, a stop rule) drawn behind the series.
    pub marks: Vec<Mark>,
}

/// A reference line across a panel, labelled.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// `true`: at an x value (a level), top to bottom; `false`: at a y value (a limit).
    pub vertical: bool,
    pub at: f64,
    pub label: String,
    pub color: &'static str,
}

/// How the values of an axis are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    Linear,
    /// Powers of ten equally spaced: levels from 1 to 1,000 users (seed 004).
    Log10,
    /// Percentiles spread as HdrHistogram's plotter does: a value `x` is the percentile
    /// `100 (1 - 10^-x)`, so 90% (x = 1), 99% (2), 99.9% (3) are equally spaced and the tail
    /// gets the room it deserves.
    Percentile,
}

/// A line of points, with optional markers for points that must not be trusted.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    /// A colour of [`palette`], as `#RRGGBB`: both back ends take it from here.
    pub color: &'static str,
    pub dashed: bool,
    /// Each point drawn as a dot too (steps of a sweep), not only the line through them.
    pub markers: bool,
    pub points: Vec<(f64, f64)>,
    /// Points where herd itself was the bottleneck: drawn with a cross.
    pub suspect: Vec<(f64, f64)>,
}

impl Figure {
    /// True when no panel has a point to draw.
    pub fn is_empty(&self) -> bool {
        self.panels
            .iter()
            .all(|p| p.series.iter().all(|s| s.points.is_empty()))
    }
}
