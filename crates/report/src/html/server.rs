//! The watched server's section of a run report: the server figure's charts on the run's
//! time axis (`crate::figure::server_figure`), then what went wrong while watching.

use super::figure;
use super::page::esc;
use crate::figure::{metrics_not_drawn, server_figure};
use crate::format::{count, duration_s};
use crate::{RunResult, Server};
use std::fmt::Write;

/// The server's section of a run report; `None` when nothing was watched.
pub fn section(r: &RunResult) -> Option<String> {
    let server = r.server.as_ref()?;
    let mut out = String::from(
        "<p class=\"sub\">On the run's time axis. CPU %, context switches and rates are drawn in the middle of the second they cover, under the throughput of that second; memory, threads and descriptors where they were read.</p>",
    );
    out.push_str(&figure::charts(&server_figure(r)?));
    let hidden = metrics_not_drawn(r);
    if hidden > 0 {
        let _ = write!(
            out,
            "<p class=\"quiet\">{hidden} more metrics are in the JSON result, not drawn here.</p>"
        );
    }
    out.push_str(&notes(server));
    Some(out)
}

fn notes(server: &Server) -> String {
    let mut items = Vec::new();
    for p in &server.processes {
        for n in &p.notes {
            items.push(format!("at {}: {}", duration_s(n.t), n.text));
        }
    }
    for e in &server.prometheus {
        for g in &e.gaps {
            items.push(format!(
                "at {}: scraping {} failed: {}",
                duration_s(g.t),
                e.url,
                g.error
            ));
        }
        if e.series_dropped > 0 {
            items.push(format!(
                "{}: more series matched than herd keeps ({} dropped)",
                e.url,
                count(e.series_dropped)
            ));
        }
    }
    if items.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Notes</h3><ul class=\"notes\">");
    for i in items {
        let _ = write!(out, "<li>{}</li>", esc(&i));
    }
    out + "</ul>"
}
