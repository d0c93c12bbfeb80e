//! The comparison as text: one block per run against the base, then the verdict a CI log shows.

use crate::compare::{Change, Comparison, Judgement, MetricRow, Noise, Unit, ALPHA};
use crate::format::{bytes, change, duration_ms, duration_s, percent, rate};
use std::fmt::{self, Write};

/// Writes the comparison for people: every metric, its change, and the verdict last.
pub fn render_compare_text(c: &Comparison, out: &mut impl Write) -> fmt::Result {
    let base = &c.runs[0];
    writeln!(
        out,
        "herd compare: {} against base {}, regression threshold {}",
        plural_runs(c.runs.len() - 1),
        base.label,
        threshold(c.threshold)
    )?;
    for (i, r) in c.runs.iter().enumerate() {
        writeln!(
            out,
            "  {:<5}{}  {}  {} from {}{}",
            if i == 0 { "base" } else { "run" },
            r.label,
            r.target,
            duration_s(r.duration_s),
            r.started_at,
            r.partial.map(|p| format!("  {p}")).unwrap_or_default()
        )?;
    }
    for w in &c.warnings {
        writeln!(out, "  WARNING: {w}")?;
    }
    for i in 1..c.runs.len() {
        writeln!(out, "\n  {} against {}", c.runs[i].label, base.label)?;
        writeln!(
            out,
            "    {:<16} {:>12} {:>12} {:>9}   judgement",
            "metric", "base", "new", "change"
        )?;
        for row in &c.metrics {
            let key = if row.metric.gates { "*" } else { "" };
            metric_line(
                out,
                &format!("{}{key}", row.metric.label),
                row,
                i,
                "not recorded",
            )?;
        }
        let names: Vec<_> = c
            .names
            .iter()
            .filter(|n| n.row.changes[i - 1].is_some())
            .collect();
        if !names.is_empty() {
            writeln!(out, "    per request name (shown, not gating):")?;
            for n in names {
                metric_line(
                    out,
                    &format!("{} {}", n.name, n.row.metric.label),
                    &n.row,
                    i,
                    "-",
                )?;
            }
        }
    }
    writeln!(
        out,
        "  * key metric: worse by more than {} and beyond noise fails the comparison",
        threshold(c.threshold)
    )?;
    verdict(c, out)
}

/// One metric's row; `missing` stands for a value the run does not have.
fn metric_line(
    out: &mut impl Write,
    label: &str,
    row: &MetricRow,
    run: usize,
    missing: &str,
) -> fmt::Result {
    let show = |v: Option<f64>| v.map_or(missing.to_owned(), |v| value(row.metric.unit, v));
    let Some(c) = row.changes[run - 1] else {
        return writeln!(
            out,
            "    {label:<16} {:>12} {:>12}",
            show(row.values[0]),
            show(row.values[run])
        );
    };
    writeln!(
        out,
        "    {label:<16} {:>12} {:>12} {:>9}   {}",
        show(row.values[0]),
        show(row.values[run]),
        change(c.fraction),
        judgement(c, row.metric.gates)
    )
}

/// A value in its unit, three significant digits.
pub fn value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::PerSecond => format!("{} req/s", rate(v)),
        Unit::Ms => duration_ms(v),
        Unit::Share => percent(v * 100.0),
        Unit::Bytes => bytes(v),
    }
}

/// What the judgement means, with the noise evidence behind it.
pub fn judgement(c: Change, gates: bool) -> String {
    let word = match (c.judgement, gates) {
        (Judgement::Unchanged, _) => return "unchanged".to_owned(),
        (Judgement::WithinThreshold, _) => "within threshold",
        (Judgement::WithinNoise, _) => "within noise",
        (Judgement::Regressed, true) => "REGRESSED",
        (Judgement::Regressed, false) => "worse",
        (Judgement::Improved, _) => "improved",
    };
    format!("{word} ({})", noise(c.noise))
}

/// The noise evidence in a few words.
pub fn noise(n: Noise) -> String {
    match n {
        Noise::PerSecond { p } if p < 0.001 => "beyond noise, p < 0.001".to_owned(),
        Noise::PerSecond { p } if p < ALPHA => format!("beyond noise, p = {p:.3}"),
        Noise::PerSecond { p } => format!("not beyond noise, p = {p:.2}"),
        Noise::Histogram { overlap: false } => "beyond noise, 95% intervals apart".to_owned(),
        Noise::Histogram { overlap: true } => "not beyond noise, 95% intervals overlap".to_owned(),
        Noise::Unknown => "noise not judged".to_owned(),
    }
}

fn verdict(c: &Comparison, out: &mut impl Write) -> fmt::Result {
    let regressions = c.regressions();
    if regressions.is_empty() {
        return writeln!(
            out,
            "\nPASSED: no key metric got worse by more than {} beyond noise",
            threshold(c.threshold)
        );
    }
    let mut by_run: Vec<(String, Vec<String>)> = Vec::new();
    for r in &regressions {
        let item = format!("{} {}", r.metric, change(r.fraction));
        match by_run.iter_mut().find(|(run, _)| *run == r.run) {
            Some((_, items)) => items.push(item),
            None => by_run.push((r.run.clone(), vec![item])),
        }
    }
    let list: Vec<String> = by_run
        .into_iter()
        .map(|(run, items)| format!("{run}: {}", items.join(", ")))
        .collect();
    writeln!(out, "\nREGRESSED: {}", list.join("; "))
}

/// A threshold as people wrote it: `10%`, `2.5%`.
pub fn threshold(fraction: f64) -> String {
    let pct = fraction * 100.0;
    let s = format!("{pct:.3}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

fn plural_runs(n: usize) -> String {
    if n == 1 {
        "1 run".to_owned()
    } else {
        format!("{n} runs")
    }
}
