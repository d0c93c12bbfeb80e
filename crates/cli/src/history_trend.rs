//! `herd history trend` and `herd history detect`: a metric over the stored runs, and where
//! its level changed.

use crate::exit::{self, Exit};
use crate::history_select::{labels_text, store_err, write_json, Select};
use clap::Args;
use herd_store::detect::Options;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TrendArgs {
    #[command(flatten)]
    pub select: Select,
    /// The metrics, comma-separated: throughput, error_rate, p50, p75, p90, p95, p99, p999,
    /// max, mean, bytes, requests
    #[arg(
        long,
        value_name = "METRIC",
        default_value = "p99",
        value_delimiter = ','
    )]
    pub metric: Vec<String>,
    /// A request name's figures instead of the whole run's
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Also draw the trend as an HTML page (change points marked)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    #[command(flatten)]
    pub select: Select,
    /// The metric whose changes to find (as for trend)
    #[arg(long, value_name = "METRIC", default_value = "p99")]
    pub metric: String,
    /// A request name's figures instead of the whole run's
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The seed of the permutation test's shuffles: the same seed, the same answer
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

fn check_metric(m: &str) -> Result<(), Exit> {
    if herd_store::METRICS.contains(&m) {
        return Ok(());
    }
    Err(Exit::bad_input(format!(
        "--metric {m} is not kept: choose one of {}",
        herd_store::METRICS.join(", ")
    )))
}

/// The change points of one metric over the runs `select` picks.
fn changes_of(
    select: &Select,
    metric: &str,
    name: &str,
    seed: u64,
) -> Result<herd_store::Detection, Exit> {
    check_metric(metric)?;
    let (mut store, filter) = select.open()?;
    let points = store.series(&filter, metric, name).map_err(store_err)?;
    let o = Options {
        seed,
        ..Options::default()
    };
    Ok(herd_store::detect(points, &o))
}

fn change_text(metric: &str, c: &herd_store::Change) -> String {
    herd_report::history_text::change(metric, c.size, c.before, c.after, c.confidence)
}

pub fn trend(a: &TrendArgs) -> Result<i32, Exit> {
    let name = a.name.clone().unwrap_or_default();
    let found: Vec<(String, herd_store::Detection)> = a
        .metric
        .iter()
        .map(|m| changes_of(&a.select, m, &name, 1).map(|d| (m.clone(), d)))
        .collect::<Result<_, _>>()?;
    let runs: Vec<herd_store::RunRow> = found
        .first()
        .map(|(_, d)| d.points.iter().map(|p| p.run.clone()).collect())
        .unwrap_or_default();
    let mut header: Vec<String> = vec!["id".into(), "started".into(), "labels".into()];
    header.extend(found.iter().map(|(m, _)| m.clone()));
    header.push("change".into());
    let rows: Vec<Vec<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = vec![r.id.to_string(), r.started_at.clone(), labels_text(r)];
            let mut marks = Vec::new();
            for (m, d) in &found {
                row.push(
                    d.points
                        .get(i)
                        .map_or("-".into(), |p| format!("{:.3}", p.value)),
                );
                marks.extend(
                    d.changes
                        .iter()
                        .filter(|c| c.index == i)
                        .map(|c| change_text(m, c)),
                );
            }
            row.push(marks.join("; "));
            row
        })
        .collect();
    let mut out = herd_report::history_text::table(&header, &rows);
    if !name.is_empty() {
        out.push_str(&format!("(request name {name})\n"));
    }
    print!("{out}");
    if let Some(path) = &a.select.json {
        let metrics: Vec<serde_json::Value> = found
            .iter()
            .map(|(m, d)| serde_json::json!({"metric": m, "name": name, "points": d.points, "changes": d.changes}))
            .collect();
        write_json(
            path,
            &serde_json::json!({ "runs": runs, "metrics": metrics }),
        )?;
    }
    if let Some(path) = &a.output {
        let head: Vec<&str> = header.iter().map(String::as_str).collect();
        write_page(a, path, &runs, &found, &head, &rows)?;
    }
    Ok(exit::OK)
}

/// `-o trend.html`: the chart (change points marked) and the table, each point and each run's
/// id linking to the run's own report, written beside the page (`trend-runs/run-ID.html`), as
/// `herd history show ID -o` writes it.
fn write_page(
    a: &TrendArgs,
    path: &std::path::Path,
    runs: &[herd_store::RunRow],
    found: &[(String, herd_store::Detection)],
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<(), Exit> {
    let stem = path
        .file_stem()
        .map_or("trend".into(), |s| s.to_string_lossy().into_owned());
    let folder = format!("{stem}-runs");
    let dir = path
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .join(&folder);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", dir.display())))?;
    let (mut store, _) = a.select.open()?;
    let mut links = Vec::with_capacity(runs.len());
    for r in runs {
        let run = store.run(r.id).map_err(store_err)?;
        let file = format!("run-{}.html", r.id);
        crate::sweep::write_file(
            &dir.join(&file),
            herd_report::html::render_run(&run).as_bytes(),
        )?;
        links.push(format!("{folder}/{file}"));
    }
    let ticks: Vec<String> = runs.iter().map(|r| format!("#{}", r.id)).collect();
    let lines: Vec<herd_report::figure::TrendLine> = found
        .iter()
        .map(|(m, d)| herd_report::figure::TrendLine {
            label: m.clone(),
            values: d.points.iter().map(|p| p.value).collect(),
            changes: d
                .changes
                .iter()
                .map(|c| (c.index, format!("{:+.1}%", c.size * 100.0)))
                .collect(),
            // Each metric's own points: a run without the figure has no point to link.
            links: d
                .points
                .iter()
                .map(|p| format!("{folder}/run-{}.html", p.run.id))
                .collect(),
        })
        .collect();
    let name = a.name.as_deref().unwrap_or_default();
    let title = if name.is_empty() {
        "herd history trend".to_owned()
    } else {
        format!("herd history trend: {name}")
    };
    let fig = herd_report::figure::trend_figure(&title, &ticks, &lines);
    crate::sweep::write_file(
        path,
        herd_report::html::render_trend(&fig, header, rows, &links).as_bytes(),
    )
}

pub fn detect(a: &DetectArgs) -> Result<i32, Exit> {
    let name = a.name.clone().unwrap_or_default();
    let d = changes_of(&a.select, &a.metric, &name, a.seed)?;
    let what = if name.is_empty() {
        a.metric.clone()
    } else {
        format!("{} of {name}", a.metric)
    };
    let min = 2 * Options::default().min_runs;
    if d.points.len() < min {
        println!(
            "{} runs: too few to find a change in {what} (at least {min}: {} before and after)",
            d.points.len(),
            min / 2
        );
    } else if d.changes.is_empty() {
        println!("no change in {what} over {} runs", d.points.len());
    } else {
        println!(
            "{} change(s) in {what} over {} runs:",
            d.changes.len(),
            d.points.len()
        );
        for c in &d.changes {
            println!(
                "  run #{} ({}, {}): {}",
                c.run.id,
                c.run.started_at,
                if c.run.labels.is_empty() {
                    "no labels".to_owned()
                } else {
                    labels_text(&c.run)
                },
                change_text(&a.metric, c)
            );
        }
    }
    if let Some(path) = &a.select.json {
        write_json(
            path,
            &serde_json::json!({"metric": a.metric, "name": name, "runs": d.points.len(), "changes": d.changes}),
        )?;
    }
    Ok(exit::OK)
}
