//! What a plot is: its file format, its size, the plotters chart a panel is drawn on, and why
//! it could not be drawn.

use super::Figure;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
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

/// A panel's chart: plain numbers on both axes (positions on a log axis are exponents).
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
