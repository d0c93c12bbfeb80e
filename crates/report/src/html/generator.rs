//! The generator's health in a run report: its verdict and totals, how close it came to its
//! limits (file descriptors, local ports), and its per-second self-watch (CPU of each worker
//! thread, send lag and event-loop delay, connections) on the run's time axis, so a stall of
//! herd can be told apart from a stall of the server at the second it happened.

use super::figure;
use super::page::{esc, facts, table};
use crate::figure::{generator_figure, palette};
use crate::format::{count, duration_ms, duration_s, percent};
use crate::{GeneratorVerdict, Model, RunResult};
use std::fmt::Write;

pub fn section(r: &RunResult) -> String {
    let mut out = summary(r);
    out.push_str(&limits(r));
    if r.generator.timeline.is_empty() {
        out.push_str(
            "<p class=\"quiet\">This result has no per-second record of the generator (written by a herd before 0.1.0's self-watch).</p>",
        );
        return out;
    }
    out.push_str(&figure::charts(&generator_figure(r)));
    out
}

fn summary(r: &RunResult) -> String {
    let g = &r.generator;
    let verdict = match g.verdict {
        GeneratorVerdict::Ok => "ok: the numbers describe the target".to_owned(),
        GeneratorVerdict::GeneratorLimited => {
            format!("generator-limited: {}", g.reasons.join("; "))
        }
    };
    let lag = if r.config.model == Model::Open {
        "send lag p99"
    } else {
        "event-loop delay p99"
    };
    let threads = if g.threads > 0 {
        g.threads
    } else {
        r.config.threads
    };
    let mut pairs = vec![
        ("verdict", esc(&verdict)),
        (
            "CPU",
            format!(
                "{} of {} worker thread{}",
                percent(g.cpu_percent),
                count(threads),
                if threads == 1 { "" } else { "s" }
            ),
        ),
        (
            "CPU user / sys",
            format!("{} / {}", duration_s(g.cpu_user_s), duration_s(g.cpu_sys_s)),
        ),
        (lag, duration_ms(g.send_lag_p99_ms)),
    ];
    if g.connections_opened > 0 || g.peak_connections > 0 {
        pairs.push((
            "connections",
            format!(
                "{} opened, at most {} at once",
                count(g.connections_opened),
                count(g.peak_connections)
            ),
        ));
    }
    if let Some(n) = g.naps.filter(|n| n.napping > 0) {
        pairs.push((
            "naps",
            format!(
                "in {} of {} tenths of a second, up to {} µs each (a response read up to that much later)",
                count(n.napping),
                count(n.windows),
                n.longest_us
            ),
        ));
    }
    for w in &g.warnings {
        pairs.push(("warning", esc(w)));
    }
    facts(&pairs)
}

/// Peaks against limits, with a gauge: what runs out first when a run scales up.
fn limits(r: &RunResult) -> String {
    let g = &r.generator;
    let mut rows = Vec::new();
    let mut row = |what: &str, peak: Option<u64>, limit: Option<u64>, note: &str| {
        let (Some(peak), Some(limit)) = (peak, limit) else {
            return;
        };
        let share = if limit > 0 {
            peak as f64 * 100.0 / limit as f64
        } else {
            0.0
        };
        let color = if share >= 80.0 {
            palette::RED
        } else if share >= 50.0 {
            palette::ORANGE
        } else {
            palette::GREEN
        };
        let mut gauge = String::new();
        let _ = write!(
            gauge,
            "<div class=\"bar\"><span style=\"left:0;width:{:.1}%;background:{color}\"></span></div>",
            share.clamp(0.4, 100.0)
        );
        rows.push(vec![
            esc(what),
            count(peak),
            count(limit),
            percent(share),
            gauge,
            esc(note),
        ]);
    };
    row(
        "file descriptors (this process)",
        g.fds_peak,
        g.fd_limit,
        "the open-file limit herd raised itself to",
    );
    row(
        "local ports in use (machine-wide)",
        g.ephemeral_ports_peak,
        g.ephemeral_port_range,
        "sockets in the ephemeral range, TIME_WAIT included",
    );
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h3>Peaks against limits</h3>{}",
        table(
            "bars limits",
            &["", "peak", "limit", "share", "", "what the limit is"],
            &rows
        )
    )
}
