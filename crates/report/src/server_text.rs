//! The summary lines about the watched server: CPU mean and peak, RSS from start to end (the
//! soak test's leak signal), threads, descriptors, context switches; min, mean and max of each
//! Prometheus series.

use crate::format::{bytes, count, duration_s, percent, rate, sig3};
use crate::lines::{line, plural};
use crate::{Exporter, PromSeries, Server, WatchedProcess};
use std::fmt::{self, Write};

/// Series listed per endpoint; the JSON keeps them all.
const MAX_SERIES_LINES: usize = 12;
/// Notes listed per process.
const MAX_NOTE_LINES: usize = 5;

/// Writes the server's lines; nothing when nothing was watched.
pub(crate) fn render(server: Option<&Server>, out: &mut impl Write) -> fmt::Result {
    let Some(server) = server else {
        return Ok(());
    };
    for p in &server.processes {
        process(p, out)?;
    }
    for e in &server.prometheus {
        exporter(e, out)?;
    }
    Ok(())
}

fn process(p: &WatchedProcess, out: &mut impl Write) -> fmt::Result {
    let who = match &p.name {
        Some(name) => {
            let pids: Vec<String> = p.pids.iter().map(u32::to_string).collect();
            format!("{name} (pids {})", pids.join(", "))
        }
        None => format!("pid {}", p.pid),
    };
    let who = match p.parent {
        Some(parent) => format!("{who} in the tree of pid {parent}"),
        None => who,
    };
    let n = p.samples.iter().filter(|s| s.t > 0.0).count() as u64;
    line(out, "server", &format!("{who}, {}", plural(n, "sample")))?;
    if let (Some(name), true) = (&p.name, p.trees.len() > 1) {
        let roots: Vec<String> = p.trees.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "  WARNING: {name} matched {} separate process trees (root pids {}), summed as one \
             server; to watch one, add --watch-parent PID (its root, e.g. {})",
            p.trees.len(),
            roots.join(", "),
            roots[0]
        )?;
    }
    let (Some(mean), Some(peak)) = (p.cpu_mean(), p.cpu_peak()) else {
        line(out, "", "no whole second measured")?;
        return notes(p, out);
    };
    let mut body = format!("cpu mean {}  peak {}", percent(mean), percent(peak));
    if let (Some(start), Some(end)) = (p.at_start(), p.at_end()) {
        let growth = end.rss_bytes as i64 - start.rss_bytes as i64;
        write!(
            body,
            "   rss {} -> {} ({})",
            bytes(start.rss_bytes as f64),
            bytes(end.rss_bytes as f64),
            signed_bytes(growth)
        )?;
        if let Some(threads) = p.threads_peak() {
            write!(body, "   threads {}", count(threads))?;
        }
        if let (Some(a), Some(b)) = (start.fds, end.fds) {
            write!(body, "   fds {} -> {}", count(a), count(b))?;
            if let Some(peak) = p.fds_peak().filter(|&peak| peak > a.max(b)) {
                write!(body, " (peak {})", count(peak))?;
            }
        }
    }
    line(out, "", &body)?;
    if let Some((vol, invol)) = p.ctx_switches_per_s() {
        let body = format!(
            "context switches {}/s voluntary, {}/s involuntary",
            rate(vol),
            rate(invol)
        );
        line(out, "", &body)?;
    }
    notes(p, out)
}

fn notes(p: &WatchedProcess, out: &mut impl Write) -> fmt::Result {
    for n in p.notes.iter().take(MAX_NOTE_LINES) {
        line(out, "", &format!("at {}: {}", at(n.t), n.text))?;
    }
    if p.notes.len() > MAX_NOTE_LINES {
        let more = (p.notes.len() - MAX_NOTE_LINES) as u64;
        line(
            out,
            "",
            &format!("{} in the JSON", plural(more, "more note")),
        )?;
    }
    Ok(())
}

fn exporter(e: &Exporter, out: &mut impl Write) -> fmt::Result {
    let mut body = format!(
        "{}  {}, {} failed",
        e.url,
        plural(e.scrapes, "scrape"),
        count(e.gaps.len() as u64)
    );
    if let Some(g) = e.gaps.first() {
        write!(body, " (first at {}: {})", at(g.t), g.error)?;
    }
    line(out, "prometheus", &body)?;
    let width = e
        .series
        .iter()
        .take(MAX_SERIES_LINES)
        .map(|s| s.display_name().chars().count())
        .max()
        .unwrap_or(0);
    for s in e.series.iter().take(MAX_SERIES_LINES) {
        series(s, width, out)?;
    }
    if e.series.len() > MAX_SERIES_LINES {
        let more = (e.series.len() - MAX_SERIES_LINES) as u64;
        line(
            out,
            "",
            &format!("{} in the JSON", plural(more, "more series")),
        )?;
    }
    if e.series_dropped > 0 {
        line(
            out,
            "",
            "more series matched than herd keeps: narrow --watch-metric with labels",
        )?;
    }
    Ok(())
}

fn series(s: &PromSeries, width: usize, out: &mut impl Write) -> fmt::Result {
    let name = s.display_name();
    let what = if s.rate { "rate/s" } else { "value " };
    let body = match s.stats() {
        Some(st) => format!(
            "{name:<width$}  {what}  min {}  mean {}  max {}",
            number(st.min),
            number(st.mean),
            number(st.max)
        ),
        None => format!("{name:<width$}  {what}  no samples"),
    };
    line(out, "", &body)
}

/// A Prometheus value: three significant digits, with k, M, G, T for large ones (bytes of
/// memory, counts of packets) so the columns stay short.
fn number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let units = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, unit) in units {
        if v.abs() >= scale * 0.9995 {
            return format!("{}{unit}", sig3(v / scale));
        }
    }
    sig3(v)
}

fn signed_bytes(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "+" };
    format!("{sign}{}", bytes(n.unsigned_abs() as f64))
}

/// A time on the run's axis: "12.0 s", or "-1.00 s" during a warm-up.
fn at(t: f64) -> String {
    if t < 0.0 {
        format!("-{}", duration_s(-t))
    } else {
        duration_s(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_values_stay_short() {
        let table = [
            (0.0, "0"),
            (0.0123, "0.0123"),
            (1.5, "1.50"),
            (999.4, "999"),
            (999.6, "1.00k"),
            (12_345.0, "12.3k"),
            (2.5e10, "25.0G"),
            (-3_000_000.0, "-3.00M"),
        ];
        for (v, want) in table {
            assert_eq!(number(v), want, "{v}");
        }
        assert_eq!(signed_bytes(-2_000_000), "-2.00 MB");
        assert_eq!(signed_bytes(0), "+0 B");
        assert_eq!(at(-1.0), "-1.00 s");
    }
}
