//! The text summary of `herd logs`.

use crate::summary::{LogsReport, Times};
use herd_result::format::{count, decimal};
use std::fmt::Write;

fn ms(t: &Times) -> String {
    format!(
        "p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        t.p50, t.p95, t.max
    )
}

fn bytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// Renders the summary; `top` request types are listed.
pub fn render(r: &LogsReport, top: usize) -> String {
    let mut o = String::new();
    let i = &r.input;
    let _ = writeln!(
        o,
        "{} ({}): {} requests from {} lines, {} bad",
        i.files.join(", "),
        i.formats.join(", "),
        count(i.records),
        count(i.lines),
        count(i.bad_lines)
    );
    for b in &i.bad_samples {
        let _ = writeln!(
            o,
            "  bad line {}:{}: {}: {}",
            b.file, b.line, b.reason, b.text
        );
    }
    let _ = writeln!(
        o,
        "span        {} .. {} ({:.0} s)",
        r.span.first, r.span.last, r.span.duration_s
    );
    let q = &r.rate;
    let _ = writeln!(
        o,
        "rate        mean {} req/s, p50 second {}, p99 second {}, peak second {} at {}, peak minute {} req/s at {}",
        decimal(q.mean_rps, 1), count(q.p50_second_rps), count(q.p99_second_rps), count(q.peak_second.requests), q.peak_second.at, decimal(q.peak_minute.rps, 1), q.peak_minute.at
    );
    if q.reordered_lines > 0 {
        let _ = writeln!(
            o,
            "            {} lines were more than 2 minutes out of time order (logs of several servers in one file?): counted in their own seconds",
            count(q.reordered_lines)
        );
    }
    if q.late_lines > 0 {
        let _ = writeln!(
            o,
            "            {} lines were more than 2 minutes out of time order and could not be placed: left out of the per-second rate (not of the counts)",
            count(q.late_lines)
        );
    }
    let max_h = q.by_hour.iter().copied().max().unwrap_or(0).max(1);
    let bars: String = q
        .by_hour
        .iter()
        .map(|h| [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'][(h * 8 / max_h) as usize])
        .collect();
    let _ = writeln!(o, "by hour     |{bars}| (00..23, the log's time zone)");
    let m: Vec<String> = r.methods.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(o, "methods     {}", m.join(", "));
    let s: Vec<String> = r
        .status_classes
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(o, "status      {}", s.join(", "));
    let b = &r.response_bytes;
    let _ = writeln!(
        o,
        "page weight mean {}, p50 {}, p95 {}, max {}, total {}",
        bytes(b.mean),
        bytes(b.p50 as f64),
        bytes(b.p95 as f64),
        bytes(b.max as f64),
        bytes(b.total as f64)
    );
    match &r.time_taken_ms {
        Some(t) => {
            let _ = writeln!(o, "time taken  {}", ms(t));
        }
        None => {
            let _ = writeln!(
                o,
                "time taken  not in the log (Apache %D, nginx $request_time)"
            );
        }
    }
    let c = &r.clients;
    let _ = writeln!(
        o,
        "clients     {} (address + user agent), {} sessions ({} s idle ends one), {} pages per session (p95 {}), think time p50 {:.1} s, mean {:.1} s; {} static-file requests left out",
        c.distinct, c.sessions, c.session_idle_s, counted(c.requests_per_session.mean, 1), counted(c.requests_per_session.p95, 0), c.think_time_s.p50, c.think_time_s.mean, c.asset_requests
    );
    render_types(&mut o, r, top);
    o
}

/// The `top` request types, each with its share, size and time, and its ids.
fn render_types(o: &mut String, r: &LogsReport, top: usize) {
    let _ = writeln!(
        o,
        "\nrequest types ({} in all, top {}):",
        r.types.len(),
        top.min(r.types.len())
    );
    let _ = writeln!(
        o,
        "  {:>7} {:>9}  {:<44} {:>9}  time taken",
        "share", "requests", "type", "mean size"
    );
    for t in r.types.iter().take(top) {
        let tt = t.time_taken_ms.as_ref().map(ms).unwrap_or_default();
        let _ = writeln!(
            o,
            "  {:>6.2}% {:>9}  {:<44} {:>9}  {}",
            t.share,
            t.requests,
            t.name,
            bytes(t.mean_bytes),
            tt
        );
        if let Some(ids) = &t.ids {
            let z = ids.zipf.as_ref().map_or(String::new(), |z| {
                format!(", Zipf s = {:.2} ({} fit, KS {:.3})", z.s, z.fit, z.ks)
            });
            let top: Vec<String> = ids
                .top
                .iter()
                .take(3)
                .map(|(k, v)| format!("{k} ({v})"))
                .collect();
            let _ = writeln!(
                o,
                "  {:>17}  ids: {} distinct{z}; top {}",
                "",
                ids.distinct,
                top.join(", ")
            );
        }
    }
}

/// A count read from a histogram of 3 significant digits: exact below 2,048, where its buckets
/// are one wide; above, said as the three digits it has (`~7,130`, never `7126.0` for 7,125).
pub(crate) fn counted(v: f64, decimals: usize) -> String {
    if v < 2048.0 {
        return format!("{v:.decimals$}");
    }
    let step = 10f64.powi(v.log10().floor() as i32 - 2);
    let n = ((v / step).round() * step) as u64;
    format!("~{}", count(n))
}

#[cfg(test)]
mod counted_tests {
    #[test]
    fn a_bucketed_count_is_not_printed_as_exact() {
        assert_eq!(super::counted(7126.0, 1), "~7,130");
        assert_eq!(super::counted(7124.0, 0), "~7,120");
        assert_eq!(super::counted(3.5, 1), "3.5");
        assert_eq!(super::counted(2047.0, 0), "2047");
    }
}
