//! Sections shown only when the result carries them: per-request-name and per-scenario tables
//! and charts, thresholds and checks. (The server's resources are drawn with the charts over
//! time: `server.rs`.)

use super::page::{esc, table, Page};
use crate::figure::palette;
use crate::format::{bytes, count, duration_ms, percent};
use crate::sections::{self, NameStats};
use serde_json::Value;
use std::fmt::Write;

/// Adds every optional section `doc` has, in reading order.
pub fn all(page: &mut Page, doc: &Value) {
    let names = sections::names(doc, "by_name");
    if !names.is_empty() {
        page.section(
            "by_name",
            "Requests by name",
            &names_section("by_name", &names),
        );
    }
    if let Some(rows) = doc["replay"]["production_vs_now"].as_array() {
        page.section(
            "replay",
            "Production against now",
            &production_against_now(rows),
        );
    }
    let scenarios = sections::names(doc, "by_scenario");
    if !scenarios.is_empty() {
        page.section("by_scenario", "Scenarios", &scenarios_section(&scenarios));
    }
    let thresholds = sections::thresholds(doc);
    if !thresholds.is_empty() {
        let rows: Vec<Vec<String>> = thresholds
            .iter()
            .map(|t| {
                let (class, word) = if t.passed {
                    ("improved", "passed")
                } else {
                    ("regressed", "FAILED")
                };
                vec![
                    format!("<code>{}</code>", esc(&t.what)),
                    esc(t.actual.as_deref().unwrap_or("-")),
                    format!("<span class=\"{class}\">{word}</span>"),
                ]
            })
            .collect();
        page.section(
            "thresholds",
            "Thresholds",
            &table("thresholds", &["threshold", "measured", "verdict"], &rows),
        );
    }
    let checks = sections::checks(doc);
    if !checks.is_empty() {
        let rows: Vec<Vec<String>> = checks
            .iter()
            .map(|c| {
                let total = c.passes + c.fails;
                let rate = if total == 0 {
                    "never ran".to_owned()
                } else {
                    percent(c.passes as f64 * 100.0 / total as f64)
                };
                let class = if c.fails > 0 { "regressed" } else { "" };
                vec![
                    esc(&c.name),
                    count(c.passes),
                    format!("<span class=\"{class}\">{}</span>", count(c.fails)),
                    rate,
                ]
            })
            .collect();
        page.section(
            "checks",
            "Checks",
            &table("checks", &["check", "passed", "failed", "pass rate"], &rows),
        );
    }
}

fn names_section(key: &str, names: &[NameStats]) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), duration_ms);
    let rows: Vec<Vec<String>> = names
        .iter()
        .map(|n| {
            let codes = n
                .status
                .iter()
                .map(|(code, k)| format!("{}: {}", esc(code), count(*k)))
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                esc(&n.name),
                n.requests.map_or("-".to_owned(), count),
                ms(n.min),
                ms(n.mean),
                ms(n.p95),
                ms(n.p99),
                ms(n.max),
                n.error_rate.map_or("-".to_owned(), |e| percent(e * 100.0)),
                n.bytes_mean.map_or("-".to_owned(), bytes),
                if codes.is_empty() {
                    "-".to_owned()
                } else {
                    codes
                },
            ]
        })
        .collect();
    let mut out = table(
        key,
        &[
            "name",
            "requests",
            "min",
            "mean",
            "p95",
            "p99",
            "max",
            "not ok",
            "page weight",
            "codes",
        ],
        &rows,
    );
    out.push_str(&ranges(names));
    out
}

/// A scenario counts iterations, not requests, and its times are whole iterations (think
/// times included): its own columns, not the per-name ones (which showed only dashes).
fn scenarios_section(scenarios: &[NameStats]) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), duration_ms);
    let rows: Vec<Vec<String>> = scenarios
        .iter()
        .map(|s| {
            vec![
                esc(&s.name),
                s.weight.map_or("-".to_owned(), count),
                s.requests.map_or("-".to_owned(), count),
                ms(s.min),
                ms(s.mean),
                ms(s.p50),
                ms(s.p95),
                ms(s.p99),
                ms(s.max),
            ]
        })
        .collect();
    let mut out = String::from(
        "<p class=\"sub\">times are whole iterations of the scenario, think times included</p>",
    );
    out.push_str(&table(
        "by_scenario",
        &[
            "scenario",
            "weight",
            "iterations",
            "min",
            "mean",
            "p50",
            "p95",
            "p99",
            "max",
        ],
        &rows,
    ));
    out
}

/// One bar per name from p50 to p99 on a shared scale, the mean and max marked: which
/// requests are slow, and how widely they vary, at a glance.
fn ranges(names: &[NameStats]) -> String {
    let top = names
        .iter()
        .filter_map(|n| n.max.or(n.p99))
        .fold(0.0, f64::max);
    if top <= 0.0 {
        return String::new();
    }
    let pct = |v: f64| (v / top * 100.0).clamp(0.0, 100.0);
    let mut out = String::from(
        "<h3>Latency by name</h3><p class=\"sub\">bar: p50 to p99 (blue), p95 (orange mark), max at the right end of the grey line; all on one scale, 0 to ",
    );
    let _ = write!(out, "{}</p><table class=\"bars\"><tbody>", duration_ms(top));
    for n in names {
        let lo = n.p50.or(n.min).unwrap_or(0.0);
        let hi = n.p99.or(n.max).unwrap_or(lo);
        let mut bar = String::new();
        if let Some(max) = n.max {
            let _ = write!(
                bar,
                "<span style=\"left:0;width:{:.1}%;height:2px;top:6px;background:#c3c8d2\"></span>",
                pct(max)
            );
        }
        let _ = write!(
            bar,
            "<span style=\"left:{:.1}%;width:{:.1}%;background:{}\" title=\"p50 {} .. p99 {}\"></span>",
            pct(lo),
            (pct(hi) - pct(lo)).max(0.4),
            palette::BLUE,
            duration_ms(lo),
            duration_ms(hi)
        );
        if let Some(p95) = n.p95 {
            let _ = write!(
                bar,
                "<span style=\"left:{:.1}%;width:3px;background:{}\" title=\"p95 {}\"></span>",
                pct(p95),
                palette::ORANGE,
                duration_ms(p95)
            );
        }
        let _ = write!(
            out,
            "<tr><td>{}</td><td style=\"width:70%\"><div class=\"bar\">{bar}</div></td><td>{}</td></tr>",
            esc(&n.name),
            n.p99.map_or("-".to_owned(), duration_ms)
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// `herd replay` of a log that had the time taken: per request type, production's time beside
/// this run's service time.
fn production_against_now(rows: &[Value]) -> String {
    let ms = |v: &Value| v.as_f64().map_or("-".to_owned(), duration_ms);
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let change = r["p95_change"].as_f64().map(|c| c * 100.0);
            // From a production p95 of 0 no percentage says how much slower: marked, not "+0%".
            let class = match change {
                None => "regressed",
                Some(c) if c > 10.0 => "regressed",
                Some(c) if c < -10.0 => "improved",
                Some(_) => "",
            };
            let change = change.map_or("from 0".to_owned(), |c| format!("{c:+.0}%"));
            vec![
                format!("<code>{}</code>", esc(r["name"].as_str().unwrap_or(""))),
                ms(&r["production_ms"]["p50"]),
                ms(&r["production_ms"]["p95"]),
                ms(&r["production_ms"]["max"]),
                ms(&r["now_ms"]["p50"]),
                ms(&r["now_ms"]["p95"]),
                ms(&r["now_ms"]["max"]),
                format!("<span class=\"{class}\">{change}</span>"),
            ]
        })
        .collect();
    let mut out = String::from(
        "<p>The log's own time taken (production) beside this replay's service time, per request type.</p>",
    );
    out.push_str(&table(
        "replay",
        &[
            "type",
            "production p50",
            "p95",
            "max",
            "now p50",
            "p95",
            "max",
            "p95 change",
        ],
        &body,
    ));
    out
}
