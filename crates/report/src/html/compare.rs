//! Runs overlaid in one report: the verdict, the table of changes, and each chart with one
//! line per run.

use super::axis::Axis;
use super::chart::{lines, Frame, Series};
use super::curves::max_y;
use super::page::{esc, footer, table, Page};
use super::{distribution, mid, palette, run, second_label};
use crate::compare::{Comparison, Judgement, MetricRow};
use crate::compare_text::{judgement, threshold, value};
use crate::format::{change, duration_ms, duration_s, percent, rate};
use crate::{decode_histogram, RunResult};
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
    page.section("runs", "Runs", &runs_table(c, runs));
    for i in 1..c.runs.len() {
        let heading = format!("{} against {}", c.runs[i].label, c.runs[0].label);
        page.section(&format!("changes-{i}"), &heading, &changes(c, i));
    }
    page.section("throughput", "Throughput over time", &throughput(c, runs));
    page.section("latency", "Latency over time", &latency(c, runs));
    page.section(
        "distribution",
        "Latency distribution",
        &distribution_chart(c, runs),
    );
    if runs.iter().any(|r| r.totals.scheduled > r.totals.ok) {
        page.section("errors", "Requests not ok over time", &not_ok(c, runs));
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

fn end(runs: &[&RunResult]) -> f64 {
    runs.iter()
        .map(|r| {
            r.timeline
                .last()
                .map_or(0.0, |e| e.t as f64 + 1.0)
                .max(r.duration_s)
        })
        .fold(1.0, f64::max)
}

fn throughput(c: &Comparison, runs: &[&RunResult]) -> String {
    let series: Vec<Series> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            Series::new(
                &c.runs[i].label,
                palette::cycle(i),
                r.timeline.iter().map(|e| (mid(e), e.rps)).collect(),
            )
        })
        .collect();
    let max = max_y(&series, &[]);
    let v = |x: f64| format!("{} req/s", rate(x));
    lines(
        &Frame {
            id: "chart-throughput",
            title: "Requests per second",
            x: Axis::time(end(runs)),
            y: Axis::linear("requests per second (req/s)", max * 1.05),
            height: 220.0,
            x_label: &second_label,
            y_label: &v,
        },
        &series,
    )
}

fn latency(c: &Comparison, runs: &[&RunResult]) -> String {
    let mut series = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let busy = || r.timeline.iter().filter(|e| e.requests > 0);
        series.push(Series::new(
            &format!("{} p99", c.runs[i].label),
            palette::cycle(i),
            busy().map(|e| (mid(e), e.p99_ms)).collect(),
        ));
        series.push(
            Series::new(
                &format!("{} p50", c.runs[i].label),
                palette::cycle(i),
                busy().map(|e| (mid(e), e.p50_ms)).collect(),
            )
            .dashed(),
        );
    }
    let max = max_y(&series, &[]);
    let v = |ms: f64| duration_ms(ms);
    lines(
        &Frame {
            id: "chart-latency",
            title: "Latency p99 (solid) and p50 (dashed) per second",
            x: Axis::time(end(runs)),
            y: Axis::duration("latency", max * 1.05),
            height: 240.0,
            x_label: &second_label,
            y_label: &v,
        },
        &series,
    )
}

fn distribution_chart(c: &Comparison, runs: &[&RunResult]) -> String {
    let series = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let h = decode_histogram(&r.histograms.latency).ok()?;
            Some(Series::new(
                &c.runs[i].label,
                palette::cycle(i),
                distribution::points(&h),
            ))
        })
        .collect();
    distribution::chart(
        "chart-distribution",
        "Latency by percentile (whole run, from the histograms)",
        series,
    )
}

fn not_ok(c: &Comparison, runs: &[&RunResult]) -> String {
    let series: Vec<Series> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let pts = r
                .timeline
                .iter()
                .filter(|e| e.requests > 0)
                .map(|e| {
                    (
                        mid(e),
                        (e.failed + e.errors) as f64 * 100.0 / e.requests as f64,
                    )
                })
                .collect();
            Series::new(&c.runs[i].label, palette::cycle(i), pts)
        })
        .collect();
    let max = max_y(&series, &[]);
    let v = |p: f64| percent(p);
    lines(
        &Frame {
            id: "chart-errors",
            title: "Share of requests not ok, per second",
            x: Axis::time(end(runs)),
            y: Axis::linear("not ok (%)", max * 1.05),
            height: 200.0,
            x_label: &second_label,
            y_label: &v,
        },
        &series,
    )
}
