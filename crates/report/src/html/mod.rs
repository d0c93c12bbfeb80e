//! Self-contained HTML reports: one file with its charts drawn as inline SVG, its stylesheet
//! (with a print stylesheet for PDF) and a small hover script inline. Nothing is fetched when
//! the page is viewed or printed.
//!
//! Pure functions from results to a `String`: [`render_run`] for a run, [`render_sweep`] and
//! [`render_capacity`] for series of runs (saturation curves), [`render_compare`] for runs side
//! by side, and [`render_document`] for whatever [`herd_result::read_document`] read.
//!
//! ```
//! # let json = include_str!("../../../result/tests/fixtures/run-open.json");
//! let run = herd_result::parse_json(json, "run-open.json").unwrap();
//! let html = herd_report::html::render_run(&run);
//! assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
//! ```

mod axis;
mod bars;
mod capacity;
mod chart;
mod compare;
mod curves;
mod figure;
mod frame;
mod generator;
mod marks;
mod optional;
mod page;
mod run;
mod server;
mod sockets;
mod streams;
mod sweep;
mod wire;

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

/// A figure of the chart model (the one `herd plot` draws) as the report's inline SVG charts.
pub fn figure_svg(f: &crate::figure::Figure) -> String {
    figure::render(f)
}

pub use page::esc;

/// A page of metrics over stored runs: the trend figure, then a table of the runs (`rows`,
/// under `header`), each row anchored `run-ID` (its first cell is the id) so a link reaches it,
/// its id linking to `links[i]` (the run's own report) when given.
pub fn render_trend(
    fig: &crate::figure::Figure,
    header: &[&str],
    rows: &[Vec<String>],
    links: &[String],
) -> String {
    let mut page = page::Page::new(&fig.title);
    page.push(&format!("<h1>{}</h1>\n", esc(&fig.title)));
    page.section("trend", "Over the runs", &figure::charts(fig));
    let mut table = String::from("<table class=\"runs\"><thead><tr>");
    for h in header {
        table.push_str(&format!("<th>{}</th>", esc(h)));
    }
    table.push_str("</tr></thead><tbody>\n");
    for (i, row) in rows.iter().enumerate() {
        let id = row.first().cloned().unwrap_or_default();
        table.push_str(&format!("<tr id=\"run-{}\">", esc(&id)));
        for (c, cell) in row.iter().enumerate() {
            match links.get(i).filter(|_| c == 0) {
                Some(href) => table.push_str(&format!(
                    "<td><a href=\"{}\">{}</a></td>",
                    esc(href),
                    esc(cell)
                )),
                None => table.push_str(&format!("<td>{}</td>", esc(cell))),
            }
        }
        table.push_str("</tr>\n");
    }
    table.push_str("</tbody></table>\n");
    page.section("runs", "The runs", &table);
    page.finish(&page::footer("a store of runs (herd history trend); each point and run id opens the run's own report (herd history show ID -o run.html)"))
}

/// The reports' stylesheet, for pages that draw the same charts (the live dashboard).
pub fn stylesheet() -> &'static str {
    page::STYLE
}

/// The reports' hover script (each chart's value at the hovered position), for pages that draw
/// the same charts. It wires the charts on the page when it runs: a page that swaps its charts
/// runs it again.
pub fn hover_script() -> &'static str {
    page::SCRIPT
}

/// The report of any result `herd report` reads.
pub fn render_document(d: &Document) -> String {
    match d {
        Document::Run(r) => render_run(r),
        Document::Sweep(s) => render_sweep(s),
        Document::Capacity(c) => render_capacity(c),
    }
}
