//! The report of a sweep or capacity search: runs at rising load, drawn as saturation curves
//! (throughput, latency and errors against the offered load).
//!
//! Read by key, since these results are young: the steps are the first array found under
//! `steps`, `points`, `levels`, `runs` or `results`; each step is a run result, or an object
//! holding one under `result` or `run` next to its load (`offered_rps`, `rate`, `connections`,
//! `users`). Top-level scalars (the capacity found, the criteria) are listed as they are.

use super::axis::Axis;
use super::chart::{lines, Frame, Series};
use super::page::{esc, facts, footer, table, Page};
use super::palette;
use crate::format::{duration_ms, percent, rate};
use crate::sections;
use serde_json::Value;

/// One step of the series, as much as it says.
struct Step {
    load: f64,
    throughput: Option<f64>,
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    not_ok: Option<f64>,
    generator_limited: bool,
}

pub fn render(kind: &str, doc: &Value) -> String {
    let (load_name, steps) = steps(doc);
    let target = doc.get("target").and_then(Value::as_str).unwrap_or("");
    let mut page = Page::new(&format!("herd {kind}: {target}"));
    page.push(&format!(
        "<header><h1>herd {}</h1><p class=\"sub\"><code>{}</code> &middot; {} steps</p></header>",
        esc(kind),
        esc(target),
        steps.len()
    ));
    let scalars: Vec<(String, String)> = sections::scalars(doc)
        .into_iter()
        .filter(|(k, _)| k != "herd_version" && k != "kind" && k != "target")
        .collect();
    let pairs: Vec<(&str, String)> = scalars.iter().map(|(k, v)| (k.as_str(), esc(v))).collect();
    let limited = steps.iter().filter(|s| s.generator_limited).count();
    let (class, word) = if limited > 0 {
        ("warn", "SOME STEPS GENERATOR-LIMITED")
    } else {
        ("", "COMPLETED")
    };
    page.push(&format!(
        "<section id=\"verdict\" class=\"verdict {class}\"><div class=\"word\">{word}</div>{}</section>\n",
        facts(&pairs)
    ));
    if steps.is_empty() {
        page.section(
            "steps",
            "Steps",
            "<p class=\"quiet\">This result has no steps herd can read.</p>",
        );
        return page.finish(&footer(target));
    }
    let x = Axis::linear(
        &load_name,
        steps.iter().map(|s| s.load).fold(0.0, f64::max) * 1.05,
    );
    let head = |v: f64| format!("{load_name}: {}", rate(v));
    let curve = |f: fn(&Step) -> Option<f64>| {
        steps
            .iter()
            .filter_map(|s| Some((s.load, f(s)?)))
            .collect::<Vec<_>>()
    };
    let rps = |v: f64| format!("{} req/s", rate(v));
    let throughput = vec![Series::new(
        "throughput",
        palette::BLUE,
        curve(|s| s.throughput),
    )];
    let max_t = throughput[0].points.iter().map(|p| p.1).fold(0.0, f64::max);
    page.section(
        "throughput",
        "Throughput against offered load",
        &lines(
            &Frame {
                id: "chart-sweep-throughput",
                title: "Throughput (req/s)",
                x: x.clone(),
                y: Axis::linear("throughput (req/s)", max_t * 1.05),
                height: 240.0,
                x_label: &head,
                y_label: &rps,
            },
            &throughput,
        ),
    );
    let latency = vec![
        Series::new("p50", palette::BLUE, curve(|s| s.p50)),
        Series::new("p90", palette::GREEN, curve(|s| s.p90)),
        Series::new("p99", palette::ORANGE, curve(|s| s.p99)),
    ];
    let max_l = latency
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let ms = |v: f64| duration_ms(v);
    page.section(
        "latency",
        "Latency against offered load",
        &lines(
            &Frame {
                id: "chart-sweep-latency",
                title: "Latency percentiles",
                x: x.clone(),
                y: Axis::duration("latency", max_l * 1.05),
                height: 240.0,
                x_label: &head,
                y_label: &ms,
            },
            &latency,
        ),
    );
    let errors = vec![Series::new(
        "not ok",
        palette::RED,
        curve(|s| s.not_ok.map(|e| e * 100.0)),
    )];
    let max_e = errors[0].points.iter().map(|p| p.1).fold(0.0, f64::max);
    let pct = |v: f64| percent(v);
    page.section(
        "errors",
        "Requests not ok against offered load",
        &lines(
            &Frame {
                id: "chart-sweep-errors",
                title: "Share not ok (%)",
                x,
                y: Axis::linear("not ok (%)", (max_e * 1.05).max(1.0)),
                height: 200.0,
                x_label: &head,
                y_label: &pct,
            },
            &errors,
        ),
    );
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_owned(), f);
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            vec![
                rate(s.load),
                opt(s.throughput, rate),
                opt(s.p50, duration_ms),
                opt(s.p90, duration_ms),
                opt(s.p99, duration_ms),
                opt(s.not_ok, |e| percent(e * 100.0)),
                if s.generator_limited {
                    "generator-limited".to_owned()
                } else {
                    "ok".to_owned()
                },
            ]
        })
        .collect();
    page.section(
        "steps",
        "Steps",
        &table(
            "steps",
            &[
                &load_name,
                "throughput (req/s)",
                "p50",
                "p90",
                "p99",
                "not ok",
                "generator",
            ],
            &rows,
        ),
    );
    page.finish(&footer(target))
}

/// The run inside a step: under `result` or `run`, or the step itself.
fn run_of_any(s: &Value) -> &Value {
    s.get("result")
        .or_else(|| s.get("run"))
        .filter(|r| r.is_object())
        .unwrap_or(s)
}

/// The steps and what their load is called.
fn steps(doc: &Value) -> (String, Vec<Step>) {
    let list = ["steps", "points", "levels", "runs", "results"]
        .iter()
        .find_map(|k| doc.get(*k).and_then(Value::as_array))
        .map_or(&[][..], Vec::as_slice);
    const LOADS: [(&str, &str); 4] = [
        ("offered load (req/s)", "offered_rps"),
        ("rate (req/s)", "rate"),
        ("connections", "connections"),
        ("users", "users"),
    ];
    let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    let load_of =
        |s: &Value, k: &str| f(s, k).or_else(|| run_of_any(s).get("config").and_then(|c| f(c, k)));
    // The first step says what the load is; every step is read the same way.
    let objects: Vec<&Value> = list.iter().filter(|s| s.is_object()).collect();
    let load = objects
        .first()
        .and_then(|s| LOADS.iter().find(|(_, k)| load_of(s, k).is_some()))
        .copied();
    let mut load_name = load.map_or("step", |(name, _)| name).to_owned();
    let steps = objects
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let run = run_of_any(s);
            let load = load
                .and_then(|(_, k)| load_of(s, k))
                .unwrap_or((i + 1) as f64);
            let lat = run.get("latency_ms");
            let totals = run.get("totals");
            let not_ok = f(run, "error_rate").or_else(|| {
                let (n, ok) = (
                    totals.and_then(|t| f(t, "scheduled"))?,
                    totals.and_then(|t| f(t, "ok"))?,
                );
                (n > 0.0).then(|| (n - ok) / n)
            });
            Step {
                load,
                throughput: f(run, "throughput_rps"),
                p50: lat.and_then(|l| f(l, "p50")),
                p90: lat.and_then(|l| f(l, "p90")),
                p99: lat.and_then(|l| f(l, "p99")),
                not_ok,
                generator_limited: run
                    .get("generator")
                    .and_then(|g| g.get("verdict"))
                    .and_then(Value::as_str)
                    == Some("generator-limited"),
            }
        })
        .collect();
    if load_name == "connections" || load_name == "users" {
        load_name = format!("{load_name} (count)");
    }
    (load_name, steps)
}
