//! Plots in pure Rust (plotters): PNG or SVG, text drawn with a bundled DejaVu Sans, so nothing
//! is needed from the system (no gnuplot, fontconfig or freetype; bench2graph needed gnuplot).
//!
//! A plot is first described as plain data — [`Figure`] of [`Panel`]s of [`Series`] — by
//! [`sweep_figure`] or [`run_figure`], which tests can inspect; [`render`] then draws it.
//!
//! ```
//! use herd_report::plot::{render, sweep_figure, Format};
//! use herd_report::sweep::read_table;
//! let tsv = "dem_req_rate req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate \
//!            stddev_rep_rate resp_time net_io errors\n100 100 10 98 100 102 1 2.5 120 0\n";
//! let table = read_table(tsv, "inline", "site").unwrap();
//! let svg = render(&sweep_figure(&table, "site"), Format::Svg).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("site"));
//! ```

mod draw;
mod run;
mod sweep;

pub use run::run_figure;
pub use sweep::sweep_figure;

use plotters::style::RGBColor;
use std::path::Path;

/// What to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// From a file name: `.png` or `.svg` (any case).
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" => Some(Format::Png),
            "svg" => Some(Format::Svg),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("nothing to plot: {0}")]
    Empty(String),
    #[error("cannot draw the plot: {0}")]
    Draw(String),
    #[error("cannot encode the PNG: {0}")]
    Encode(String),
}

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
    pub series: Vec<Series>,
}

/// How x values are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    Linear,
    /// Powers of ten equally spaced: levels from 1 to 1,000 users (seed 004).
    Log10,
    /// Percentiles (0..100) spread as HdrHistogram's plotter does: 90%, 99%, 99.9% equally
    /// spaced, so the tail gets the room it deserves.
    Percentile,
}

/// A line of points, with optional markers for points that must not be trusted.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
    /// Points where herd itself was the bottleneck: drawn with a cross.
    pub suspect: Vec<(f64, f64)>,
}

/// Colours that stay apart on screen and in print, one per target.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Width and height of every figure, in pixels.
pub const SIZE: (u32, u32) = (1000, 1200);

/// Draws the figure as PNG or SVG bytes.
pub fn render(fig: &Figure, format: Format) -> Result<Vec<u8>, PlotError> {
    if fig
        .panels
        .iter()
        .all(|p| p.series.iter().all(|s| s.points.is_empty()))
    {
        return Err(PlotError::Empty(format!("{} has no points", fig.title)));
    }
    draw::render(fig, format)
}
