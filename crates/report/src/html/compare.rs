//! Runs overlaid in one report: the verdict, the table of changes, and each chart with one
//! line per run.

use super::page::{esc, footer, table, Page};
use super::{figure, run};
use crate::compare::{Comparison, Judgement, MetricRow};
use crate::compare_text::{judgement, threshold, value};
use crate::figure::{compare_figure, palette};
use crate::format::{change, duration_s};
use crate::RunResult;
use std::fmt::Write;

pub fn render(c: &Comparison, runs: &[&RunResult]) -> String {
    let mut page = Page::new(&format!(
        "herd compare: {}",
        c.runs
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(" vs ")
    ));
    page.push(&format!(
        "<header><h1>herd compare</h1><p class=\"sub\">{} against base <b>{}</b>, regression threshold {}</p></header>",
        esc(&c.runs[1..].iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(", ")),
        esc(&c.runs[0].label),
        threshold(c.threshold)
    ));
    page.push(&verdict(c));
    if !c.warnings.is_empty() {
        let items: String = c
            .warnings
            .iter()
            .map(|w| format!("<li>WARNING: {}</li>", esc(w)))
            .collect();
        page.push(&format!("<ul id=\"warnings\">{items}</ul>\n"));
    }
    page.section("runs", "Runs", &runs_table(c, runs));
    for i in 1..c.runs.len() {
        let heading = format!("{} against {}", c.runs[i].label, c.runs[0].label);
        page.section(&format!("changes-{i}"), &heading, &changes(c, i));
    }
    let labels: Vec<&str> = c.runs.iter().map(|r| r.label.as_str()).collect();
    let fig = compare_figure(&labels, runs);
    // The panel of requests not ok is in the figure only when some run had any.
    for (panel, (id, heading)) in fig.panels.iter().zip([
        ("throughput", "Throughput over time"),
        ("latency", "Latency over time"),
        ("distribution", "Latency distribution"),
        ("errors", "Requests not ok over time"),
    ]) {
        page.section(id, heading, &figure::chart(panel));
    }
    let sources = c
        .runs
        .iter()
        .map(|r| r.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    page.finish(&footer(&sources))
}

fn verdict(c: &Comparison) -> String {
    let regressions = c.regressions();
    if regressions.is_empty() {
        return format!(
            "<section id=\"verdict\" class=\"verdict\"><div class=\"word\">PASSED</div><div>no key metric got worse by more than {} beyond noise</div></section>\n",
            threshold(c.threshold)
        );
    }
    let mut items = String::new();
    for r in &regressions {
        let _ = write!(
            items,
            "<li>{}: {} {}</li>",
            esc(&r.run),
            esc(&r.metric),
            change(r.fraction)
        );
    }
    format!("<section id=\"verdict\" class=\"verdict bad\"><div class=\"word\">REGRESSED</div><ul>{items}</ul></section>\n")
}

fn runs_table(c: &Comparison, runs: &[&RunResult]) -> String {
    let rows: Vec<Vec<String>> = c
        .runs
        .iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (l, r))| {
            vec![
                format!("<i style=\"display:inline-block;width:12px;height:12px;border-radius:2px;background:{}\"></i> {}{}", palette::cycle(i), esc(&l.label), if i == 0 { " (base)" } else { "" }),
                format!("<code>{}</code>", esc(&l.target)),
                esc(&run::how(r)),
                duration_s(l.duration_s),
                esc(&l.started_at),
            ]
        })
        .collect();
    table(
        "runs",
        &["run", "target", "load", "duration", "started"],
        &rows,
    )
}

fn changes(c: &Comparison, i: usize) -> String {
    let row = |label: String, m: &MetricRow| -> Vec<String> {
        let show = |v: Option<f64>| v.map_or("-".to_owned(), |v| value(m.metric.unit, v));
        let (delta, verdict) = match m.changes[i - 1] {
            Some(ch) => {
                let class = match ch.judgement {
                    Judgement::Regressed => "regressed",
                    Judgement::Improved => "improved",
                    _ => "quiet",
                };
                (
                    format!("<span class=\"{class}\">{}</span>", change(ch.fraction)),
                    format!(
                        "<span class=\"{class}\">{}</span>",
                        esc(&judgement(ch, m.metric.gates))
                    ),
                )
            }
            None => ("-".to_owned(), String::new()),
        };
        vec![label, show(m.values[0]), show(m.values[i]), delta, verdict]
    };
    let rows: Vec<Vec<String>> = c
        .metrics
        .iter()
        .map(|m| {
            row(
                format!(
                    "{}{}",
                    esc(m.metric.label),
                    if m.metric.gates { " <b>*</b>" } else { "" }
                ),
                m,
            )
        })
        .collect();
    let mut out = table(
        "changes",
        &[
            "metric",
            &c.runs[0].label,
            &c.runs[i].label,
            "change",
            "judgement",
        ],
        &rows,
    );
    let _ = write!(
        out,
        "<p class=\"sub\"><b>*</b> key metric: worse by more than {} and beyond noise (Welch's t-test on per-second values, 95%) fails the comparison. Others are judged from the histograms and shown only.</p>",
        threshold(c.threshold)
    );
    let names: Vec<Vec<String>> = c
        .names
        .iter()
        .filter(|n| n.row.changes[i - 1].is_some())
        .map(|n| {
            row(
                format!("{} {}", esc(&n.name), esc(n.row.metric.label)),
                &n.row,
            )
        })
        .collect();
    if !names.is_empty() {
        out.push_str("<h3>By request name (shown, not gating)</h3>");
        out.push_str(&table(
            "names",
            &[
                "name",
                &c.runs[0].label,
                &c.runs[i].label,
                "change",
                "judgement",
            ],
            &names,
        ));
    }
    out
}
