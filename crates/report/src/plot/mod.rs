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
mod file;
mod format;

pub use crate::figure::{run_figure, sweep_figure, Figure, Panel, Series, XAxis};
pub use draw::render;
pub use file::{figure, plot_file};
pub use format::{size, Format, PlotError, PANEL_SIZE};

#[cfg(test)]
mod tests;
