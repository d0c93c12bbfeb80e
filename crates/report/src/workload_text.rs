//! The workload part of the text summary: a table per request name (seed 003: average, min,
//! max and 95th percentile per request type, page weight, response codes), then scenarios,
//! checks and thresholds.

use crate::format::{bytes, count, duration_ms, threshold_value};
use crate::RunResult;
use std::fmt::{self, Write};

/// Longest request name shown in the table; the JSON keeps the whole name.
const NAME_CHARS: usize = 40;

pub fn render_workload(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    if !r.by_name.is_empty() {
        let width = r
            .by_name
            .iter()
            .map(|n| n.name.chars().count().min(NAME_CHARS))
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(out)?;
        writeln!(
            out,
            "  {:<width$}  {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}  status",
            "name", "requests", "not ok", "mean", "min", "p95", "max", "weight"
        )?;
        for n in &r.by_name {
            let t = &n.totals;
            let l = &n.latency_ms;
            let mut status = String::new();
            for (code, k) in &n.status {
                write!(status, " {code}: {}", count(*k))?;
            }
            for (class, k) in &n.errors {
                write!(status, " {class}: {}", count(*k))?;
            }
            let time = |ms: f64| {
                if l.count == 0 {
                    "-".to_owned()
                } else {
                    duration_ms(ms)
                }
            };
            writeln!(
                out,
                "  {:<width$}  {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {}",
                shorten(&n.name),
                count(t.completed + t.errors),
                count(t.failed + t.errors),
                time(l.mean),
                time(l.min),
                time(l.p95),
                time(l.max),
                bytes(n.response_bytes.mean.round()),
                status.trim_start()
            )?;
        }
    }
    if !r.by_scenario.is_empty() {
        writeln!(out)?;
        for s in &r.by_scenario {
            let d = &s.duration_ms;
            let body = if s.iterations == 0 {
                "no iterations measured".to_owned()
            } else {
                format!(
                    "{} iterations, mean {}, p95 {}, max {}",
                    count(s.iterations),
                    duration_ms(d.mean),
                    duration_ms(d.p95),
                    duration_ms(d.max)
                )
            };
            writeln!(out, "  scenario   {} (weight {}): {body}", s.name, s.weight)?;
        }
    }
    if !r.checks.is_empty() {
        writeln!(out)?;
        for c in &r.checks {
            if c.passes + c.fails == 0 {
                // "ok ... 0 passed" would pass a check that judged nothing.
                writeln!(
                    out,
                    "  check --   {}: never ran (no response reached it)",
                    c.name
                )?;
                continue;
            }
            let mark = if c.fails == 0 { "ok  " } else { "FAIL" };
            write!(
                out,
                "  check {mark} {}: {} passed, {} failed",
                c.name,
                count(c.passes),
                count(c.fails)
            )?;
            match &c.sample {
                Some(s) if c.fails > 0 => writeln!(out, " ({s})")?,
                _ => writeln!(out)?,
            }
        }
    }
    if !r.thresholds.is_empty() {
        writeln!(out)?;
        for t in &r.thresholds {
            let mark = if t.pass { "ok  " } else { "FAIL" };
            let value = threshold_value(t.value, &t.unit);
            write!(
                out,
                "  threshold {mark} {}  (measured {value})",
                t.expression
            )?;
            match &t.note {
                Some(n) => writeln!(out, ": {n}")?,
                None => writeln!(out)?,
            }
        }
    }
    faults(r, out)
}

/// Each fault window: when it was in force, p50 inside it, its thresholds and the recovery.
fn faults(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    if r.faults.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    for (i, w) in r.faults.iter().enumerate() {
        let inside = herd_result::fault::seconds_inside(r, w.start_s, w.end_s);
        let (_, _, lat) = herd_result::fault::figures(&inside);
        let p50 = if lat.count > 0 {
            format!("p50 {} inside", duration_ms(lat.p50))
        } else {
            "no whole second inside".to_owned()
        };
        writeln!(
            out,
            "  fault {}  {:.1}-{:.1} s  {} ({p50})",
            i + 1,
            w.start_s,
            w.end_s,
            w.description
        )?;
        let rec = &w.recovery;
        match (rec.seconds, rec.second, &rec.note) {
            (Some(s), Some(t), _) => writeln!(
                out,
                "    recovery {} after its end (second {t} back: {})",
                crate::format::duration_s(s),
                rec.rule
            )?,
            (_, _, note) => writeln!(
                out,
                "    recovery: {} ({})",
                note.as_deref().unwrap_or("no second back"),
                rec.rule
            )?,
        }
        for t in &w.thresholds {
            let mark = if t.pass { "ok  " } else { "FAIL" };
            let value = threshold_value(t.value, &t.unit);
            write!(
                out,
                "    threshold {mark} {}  (measured {value} inside)",
                t.expression
            )?;
            match &t.note {
                Some(n) => writeln!(out, ": {n}")?,
                None => writeln!(out)?,
            }
        }
    }
    Ok(())
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(NAME_CHARS - 1) {
        Some((cut, _)) if s.chars().count() > NAME_CHARS => format!("{}…", &s[..cut]),
        _ => s.to_owned(),
    }
}
