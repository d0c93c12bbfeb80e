//! Self-contained HTML reports: one file with its charts drawn as inline SVG, its stylesheet
//! (with a print stylesheet for PDF) and a small hover script inline. Nothing is fetched when
//! the page is viewed or printed.
//!
//! Pure functions from results to a `String`: [`render_run`] for a run, [`render_sweep`] and
//! [`render_capacity`] for series of runs (saturation curves), [`render_compare`] for runs side
//! by side, and [`render_document`] for whatever [`crate::read_document`] read.
//!
//! ```
//! # let json = include_str!("../../tests/fixtures/run-open.json");
//! let run = herd_report::parse_json(json, "run-open.json").unwrap();
//! let html = herd_report::html::render_run(&run);
//! assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
//! ```

mod axis;
mod capacity;
mod chart;
mod compare;
mod curves;
mod distribution;
mod generator;
mod marks;
mod optional;
mod page;
mod run;
mod server;
mod sweep;
mod timeline;

use crate::capacity::CapacityResult;
use crate::sweep::SweepResult;
use crate::{Comparison, Document, RunResult};

/// The report of one run.
pub fn render_run(r: &RunResult) -> String {
    run::render(r)
}

/// The report of a sweep: saturation curves, one line per target.
pub fn render_sweep(s: &SweepResult) -> String {
    sweep::render(s)
}

/// The report of a capacity search: the answer, the curves against the level, the probes.
pub fn render_capacity(c: &CapacityResult) -> String {
    capacity::render(c)
}

/// Runs overlaid in one report; `runs` are the results `c` was made from, in the same order.
pub fn render_compare(c: &Comparison, runs: &[&RunResult]) -> String {
    compare::render(c, runs)
}

/// The report of any result `herd report` reads.
pub fn render_document(d: &Document) -> String {
    match d {
        Document::Run(r) => render_run(r),
        Document::Sweep(s) => render_sweep(s),
        Document::Capacity(c) => render_capacity(c),
    }
}

/// Where a second of the timeline is drawn on a time axis: in its middle, so lines and the
/// bars that span the second agree.
fn mid(e: &crate::TimelineEntry) -> f64 {
    e.t as f64 + 0.5
}

/// The hover heading of a second of the timeline: `3–4 s`.
fn second_label(t: f64) -> String {
    let start = t.floor().max(0.0) as u64;
    format!("{start}–{} s", start + 1)
}

/// Colours that stay distinct for colour-blind readers (Okabe and Ito) and in greyscale print.
mod palette {
    pub const BLUE: &str = "#0072B2";
    pub const ORANGE: &str = "#E69F00";
    pub const GREEN: &str = "#009E73";
    pub const RED: &str = "#D55E00";
    pub const PURPLE: &str = "#CC79A7";
    pub const SKY: &str = "#56B4E9";
    pub const GREY: &str = "#7A8290";
    const CYCLE: [&str; 7] = [BLUE, ORANGE, GREEN, RED, PURPLE, SKY, "#3B3B3B"];
    const ERRORS: [&str; 6] = [
        "#7B2D8E", "#B2182B", "#3B3B3B", "#CC79A7", "#8C510A", "#5E3C99",
    ];

    /// The n-th colour of a set of series.
    pub fn cycle(n: usize) -> &'static str {
        CYCLE[n % CYCLE.len()]
    }

    /// Status classes in the colours people expect: success green, client errors orange,
    /// server errors red.
    pub fn status(class: &str) -> &'static str {
        match class {
            "1xx" => SKY,
            "2xx" => GREEN,
            "3xx" => BLUE,
            "4xx" => ORANGE,
            "5xx" => RED,
            _ => GREY,
        }
    }

    /// Error classes: darker tones, apart from the status colours.
    pub fn error(n: usize) -> &'static str {
        ERRORS[n % ERRORS.len()]
    }
}
