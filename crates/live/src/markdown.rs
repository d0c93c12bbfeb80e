//! `--summary-md FILE`: the run in Markdown for a CI job page (GitHub's `$GITHUB_STEP_SUMMARY`,
//! GitLab's job artifacts): the verdict, the load, latency, errors, thresholds and checks.

use crate::{Sink, SinkError};
use herd_result::format::{count, decimal};
use herd_result::RunResult;
use std::fmt::Write;
use std::path::{Path, PathBuf};

const FLAG: &str = "--summary-md";

pub struct Markdown {
    path: PathBuf,
}

impl Markdown {
    pub fn create(path: &Path) -> Self {
        Markdown {
            path: path.to_owned(),
        }
    }
}

impl Sink for Markdown {
    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        std::fs::write(&self.path, render(result)).map_err(|e| SinkError::new(FLAG, &self.path, e))
    }
}

/// The Markdown summary of `result`.
pub fn render(r: &RunResult) -> String {
    use herd_run::Conclusion;
    let verdict = match herd_run::conclude(r) {
        Conclusion::Ok => "✅ completed".to_owned(),
        Conclusion::ThresholdsFailed => "❌ thresholds failed".to_owned(),
        Conclusion::GeneratorLimited => format!(
            "⚠️ generator-limited: herd, not the server, was the limit ({})",
            r.generator.reasons.join("; ")
        ),
        Conclusion::NothingAnswered => "❌ no request got a response".to_owned(),
        Conclusion::Interrupted => "⚠️ interrupted: the numbers cover the part that ran".to_owned(),
        Conclusion::NoShare => "➖ this shard had no share of the run: it sent nothing".to_owned(),
        // A series' or a merge's ends: never a run's.
        Conclusion::Partial | Conclusion::Undecided | Conclusion::SloUnmet => {
            "✅ completed".to_owned()
        }
    };
    let mut m = String::new();
    let _ = writeln!(m, "## herd: {}\n", cell(&r.target));
    let _ = writeln!(m, "**{verdict}**\n");
    for w in &r.warnings {
        let _ = writeln!(m, "> {}\n", cell(w));
    }
    let load = match r.config.rate {
        Some(rate) => format!("open model, {} req/s", decimal(rate, 1)),
        None => format!("closed model, {} connections", count(r.config.connections)),
    };
    let _ = writeln!(m, "| | |\n|---|---|");
    let rows = [
        ("Load", load),
        ("Duration", format!("{} s", decimal(r.duration_s, 1))),
        ("Requests", count(r.totals.completed + r.totals.errors)),
        (
            "Throughput",
            format!("{} req/s", decimal(r.throughput_rps, 1)),
        ),
        (
            "OK / failed / errors",
            format!(
                "{} / {} / {}",
                count(r.totals.ok),
                count(r.totals.failed),
                count(r.totals.errors)
            ),
        ),
        ("Dropped", count(r.totals.dropped)),
    ];
    for (k, v) in rows {
        let _ = writeln!(m, "| {k} | {v} |");
    }
    let l = &r.latency_ms;
    let s = &r.service_time_ms;
    let _ = writeln!(
        m,
        "\n| ms | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|"
    );
    for (name, d) in [("latency", l), ("service time", s)] {
        let cells = [d.p50, d.p90, d.p99, d.p999, d.max].map(|v| decimal(v, 2));
        let _ = writeln!(m, "| {name} | {} |", cells.join(" | "));
    }
    if !r.errors.is_empty() {
        let _ = writeln!(m, "\n| error | count | first message |\n|---|---|---|");
        for (k, n) in &r.errors {
            let sample = r.error_samples.get(k).map_or("", String::as_str);
            let _ = writeln!(m, "| {k} | {} | {} |", count(*n), cell(sample));
        }
    }
    if !r.thresholds.is_empty() {
        let _ = writeln!(m, "\n| threshold | measured | |\n|---|---|---|");
        for t in &r.thresholds {
            let mark = if t.pass { "✅" } else { "❌" };
            let _ = writeln!(
                m,
                "| `{}` | {} {} | {mark} |",
                t.expression.replace('`', "'"),
                decimal(t.value, 2),
                t.unit
            );
        }
    }
    if !r.checks.is_empty() {
        let _ = writeln!(m, "\n| check | passes | fails |\n|---|---|---|");
        for c in &r.checks {
            if c.passes + c.fails == 0 {
                let _ = writeln!(m, "| {} | never ran | - |", cell(&c.name));
                continue;
            }
            let _ = writeln!(
                m,
                "| {} | {} | {} |",
                cell(&c.name),
                count(c.passes),
                count(c.fails)
            );
        }
    }
    m
}

/// Text safe inside a table cell: no pipes or line breaks to break the row.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_keep_their_thousands_separators_and_checks_that_never_ran_say_so() {
        let json = include_str!("../../result/tests/fixtures/run-open.json");
        let mut r = herd_result::parse_json(json, "run-open.json").unwrap();
        r.throughput_rps = 67_767.43;
        r.latency_ms.max = 1_234.5;
        r.checks = vec![herd_result::CheckResult {
            name: "has a token".into(),
            passes: 0,
            fails: 0,
            sample: None,
        }];
        let m = super::render(&r);
        assert!(m.contains("| Throughput | 67,767.4 req/s |"), "{m}");
        assert!(m.contains("| 1,234.50 |"), "{m}");
        assert!(m.contains("| has a token | never ran | - |"), "{m}");
    }
}
