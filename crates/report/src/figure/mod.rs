//! The one chart model: a figure described as plain data — [`Figure`] of [`Panel`]s of
//! [`Series`] and [`Mark`]s — with one palette and one rule for when an axis is logarithmic.
//! A panel carries everything needed to frame it: its id on the page, title and caption,
//! kind (lines, stacked bars, a percentile distribution), axis titles, scales, extents and
//! how values read in the hover box. Every chart of every report page is built here, one file
//! per figure: a run (`run`, `statuses`, `server`, `generator`), runs compared (`compare`), a
//! sweep, a capacity search (`capacity`, `search`).
//! Two back ends draw it: the HTML report's inline SVG ([`crate::html::figure_svg`]) and
//! plotters' PNG/SVG for `herd plot` (`crate::plot::render`, behind the `png` feature), so
//! both show the same series in the same colours on the same kind of axis.
//!
//! Nothing here depends on a drawing library: crates that only read results do not build one.

mod capacity;
mod compare;
mod distribution;
mod generator;
pub mod palette;
mod panel;
mod phases;
mod reading;
mod run;
mod scale;
mod search;
mod server;
mod sockets;
mod statuses;
mod streams;
mod sweep;
mod trend;

pub use capacity::capacity_figure;
pub use compare::compare_figure;
pub use distribution::{distribution_panel, percentiles, reach, PERCENTILE_AXIS};
pub use generator::generator_figure;
pub use panel::TIME_AXIS;
pub use phases::phases_figure;
pub(crate) use reading::trim;
pub use reading::{short_duration, time_unit};
pub use run::{fault_bands, mid, run_end, run_figure};
pub use scale::{latency_axis, load_axis, rate_axis, span};
pub use search::{purpose, search_figure};
pub use server::{
    instant_points, interval_points, metrics_not_drawn, server_figure, MAX_METRIC_CHARTS,
};
pub use sockets::sockets_figure;
pub use statuses::statuses_figure;
pub use streams::streams_figure;
pub use sweep::{sweep_figure, sweep_result_figure};
pub use trend::{trend_figure, TrendLine};

/// A picture: a title over panels stacked top to bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
}

/// One chart, with everything a back end needs to frame it: what it is called, what kind of
/// chart it is, its axes (titles, scales, extents, how their values read) and its height.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Names the chart on the HTML page (`chart-latency`): links, the report's tests and the
    /// hover script's `#hover=` address use it.
    pub id: String,
    /// A short heading (`Throughput`): what a plot prints over the panel.
    pub title: String,
    /// What the chart shows, in a sentence: the HTML figure's caption.
    pub caption: String,
    pub kind: Kind,
    /// The x axis' title. A [`Reading::Duration`] axis gets its unit from the back end, which
    /// picks it (`latency (ms)`, `latency (us)`).
    pub x_label: String,
    /// The y axis' title, as `x_label`.
    pub y_label: String,
    pub x_axis: XAxis,
    /// `Linear` or `Log10` (by [`rate_axis`] or [`latency_axis`]): values, not percentiles.
    pub y_axis: XAxis,
    /// How values of each axis read: the hover box's heading (x) and values (y), and the unit
    /// of a duration or byte axis.
    pub x_reads: Reading,
    pub y_reads: Reading,
    /// The lowest (above zero, for a log axis) and the highest value each axis must show.
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    /// The plot's height in the HTML's viewBox units (its width is 960); a plot gives every
    /// panel the same share of the picture.
    pub height: f64,
    pub series: Vec<Series>,
    /// Reference lines (a knee, a stop rule) drawn behind the series.
    pub marks: Vec<Mark>,
    /// Spans of the x axis shaded behind everything (a fault window of the run).
    pub bands: Vec<Band>,
}

/// A span of the x axis shaded across a panel, labelled: a fault in force from `from` to `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub color: &'static str,
}

/// What kind of chart a panel is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Series drawn as lines (or points) over the x axis.
    Lines,
    /// Stacked bars: bar `i` spans `starts[i] .. starts[i] + width`; each series is a layer,
    /// its point at `starts[i]` the layer's height in that bar (status classes per second).
    StackedBars { starts: Vec<f64>, width: f64 },
    /// Horizontal stacked bars, one per name, top to bottom: each series is a layer, its
    /// point `(i, v)` the layer's length in bar `i` along the x axis (phases by request name).
    Breakdown { names: Vec<String> },
}

/// How the values of an axis read, in the hover box and on a unit-bearing axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading {
    /// A number (`1,234`, `3.42`).
    Number,
    /// A count, rounded (`1,234`).
    Count,
    /// Three significant digits, for values of unknown unit (a Prometheus gauge).
    Sig3,
    /// A rate with its unit after it: `rate` then the text (` req/s`, `/s`, or nothing).
    Rate(String),
    /// Milliseconds, read in the unit that suits them (`850 us`, `3.42 ms`).
    Duration,
    Percent,
    Bytes,
    /// A second of the run's timeline (`3–4 s`).
    Second,
    /// Buckets of this many seconds (`t = 10 .. 15 s`).
    Seconds(u64),
    /// A moment since the measurement began (`at 3.2 s`).
    Instant,
    /// A position on the percentile axis, read as the percentile (`p99.9`).
    Percentile,
    /// A level of a sweep, then its unit (`200 req/s asked`, `10 users`).
    Level(String),
    /// A number of users (`1 user`, `20 users`).
    Users,
    /// The whole numbers 1..=n, each with its own heading (probe `i` is `names[i - 1]`).
    Ordinal(Vec<String>),
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
    /// Points joined by a line; `false` draws the points alone (with `markers`).
    pub joined: bool,
    pub points: Vec<(f64, f64)>,
    /// Points where herd itself was the bottleneck: drawn with a cross.
    pub suspect: Vec<(f64, f64)>,
    /// Where each point leads when clicked (a stored run's report), in the order of `points`;
    /// empty: nowhere. The HTML charts only.
    pub links: Vec<String>,
}

impl Series {
    /// A solid line through `points`, no markers.
    pub fn line(label: &str, color: &'static str, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.to_owned(),
            color,
            dashed: false,
            markers: false,
            joined: true,
            points,
            suspect: Vec::new(),
            links: Vec::new(),
        }
    }

    pub fn dashed(self) -> Series {
        Series {
            dashed: true,
            ..self
        }
    }

    /// The points alone, each a dot, no line between them.
    pub fn scatter(self) -> Series {
        Series {
            markers: true,
            joined: false,
            ..self
        }
    }
}

impl Figure {
    /// True when no panel has a point to draw.
    pub fn is_empty(&self) -> bool {
        self.panels
            .iter()
            .all(|p| p.series.iter().all(|s| s.points.is_empty()))
    }
}

/// The highest y of `series`, and of `also` (limits drawn as marks must fit too); 0 if none.
pub fn max_y(series: &[Series], also: &[f64]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(also.iter().copied())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests;
