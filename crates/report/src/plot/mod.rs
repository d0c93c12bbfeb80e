//! Plots in pure Rust (plotters): PNG or SVG, text drawn with a bundled DejaVu Sans, so nothing
//! is needed from the system (no gnuplot, fontconfig or freetype; bench2graph needed gnuplot).
//!
//! A plot is first described as plain data — a [`crate::figure::Figure`] — by
//! [`sweep_figure`] or [`run_figure`], which tests can inspect; [`render`] then draws it. The
//! HTML report draws the same figures with its own SVG ([`crate::html::figure_svg`]).
//!
//! ```
//! use herd_report::plot::{render, sweep_figure, Format};
//! use herd_result::sweep::read_table;
//! let tsv = "dem_req_rate req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate \
//!            stddev_rep_rate resp_time net_io errors\n100 100 10 98 100 102 1 2.5 120 0\n";
//! let table = read_table(tsv, "inline", "site").unwrap();
//! let svg = render(&sweep_figure(&table, "site"), Format::Svg).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("site"));
//! ```

mod bars;
mod draw;

pub use crate::figure::{run_figure, sweep_figure, Figure, Panel, Series, XAxis};

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

/// Width and height of one panel, in pixels: a figure is as tall as its panels.
pub const PANEL_SIZE: (u32, u32) = (1000, 400);

/// Width and height of the picture of `fig`, in pixels.
pub fn size(fig: &Figure) -> (u32, u32) {
    let (w, h) = PANEL_SIZE;
    (w, h * fig.panels.len().max(1) as u32)
}

/// Draws the figure as PNG or SVG bytes.
pub fn render(fig: &Figure, format: Format) -> Result<Vec<u8>, PlotError> {
    if fig.is_empty() {
        return Err(PlotError::Empty(format!("{} has no points", fig.title)));
    }
    draw::render(fig, format)
}

#[cfg(test)]
mod tests;
