//! `herd history trend` and `herd history detect`: a metric over the stored runs, and where
//! its level changed (herd-store's `detect`), as a table, JSON and a chart page.

use crate::{labels_text, write_file, HistoryError};
use herd_report::figure::TrendLine;
use herd_store::detect::Options;
use herd_store::{Change, Detection, Filter, RunRow, Store};
use std::path::Path;

/// Refuses a metric the store does not keep, naming those it does.
pub fn check_metric(m: &str) -> Result<(), HistoryError> {
    if herd_store::METRICS.contains(&m) {
        return Ok(());
    }
    Err(HistoryError::Bad(format!(
        "--metric {m} is not kept: choose one of {}",
        herd_store::METRICS.join(", ")
    )))
}

fn detection(
    store: &mut Store,
    filter: &Filter,
    metric: &str,
    name: &str,
    seed: u64,
) -> Result<Detection, HistoryError> {
    check_metric(metric)?;
    let points = store.series(filter, metric, name)?;
    let o = Options {
        seed,
        ..Options::default()
    };
    Ok(herd_store::detect(points, &o))
}

fn change_text(metric: &str, c: &Change) -> String {
    herd_report::history_text::change(metric, c.size, c.before, c.after, c.confidence)
}

/// Metrics over the runs a filter picks, each with its change points.
pub struct Trend {
    /// A request name's figures; empty: the whole run's.
    pub name: String,
    pub runs: Vec<RunRow>,
    pub found: Vec<(String, Detection)>,
}

impl Trend {
    pub fn ask(
        store: &mut Store,
        filter: &Filter,
        metrics: &[String],
        name: &str,
    ) -> Result<Trend, HistoryError> {
        let found: Vec<(String, Detection)> = metrics
            .iter()
            .map(|m| detection(store, filter, m, name, 1).map(|d| (m.clone(), d)))
            .collect::<Result<_, _>>()?;
        let runs = found
            .first()
            .map(|(_, d)| d.points.iter().map(|p| p.run.clone()).collect())
            .unwrap_or_default();
        Ok(Trend {
            name: name.to_owned(),
            runs,
            found,
        })
    }

    fn header(&self) -> Vec<String> {
        let mut header: Vec<String> = vec!["id".into(), "started".into(), "labels".into()];
        header.extend(self.found.iter().map(|(m, _)| m.clone()));
        header.push("change".into());
        header
    }

    fn rows(&self) -> Vec<Vec<String>> {
        let row = |i: usize, r: &RunRow| {
            let mut row = vec![r.id.to_string(), r.started_at.clone(), labels_text(r)];
            let mut marks = Vec::new();
            for (m, d) in &self.found {
                row.push(
                    d.points
                        .get(i)
                        .map_or("-".into(), |p| format!("{:.3}", p.value)),
                );
                let here = d.changes.iter().filter(|c| c.index == i);
                marks.extend(here.map(|c| change_text(m, c)));
            }
            row.push(marks.join("; "));
            row
        };
        self.runs
            .iter()
            .enumerate()
            .map(|(i, r)| row(i, r))
            .collect()
    }

    /// The table: a line per run, a column per metric and the changes that begin there.
    pub fn text(&self) -> String {
        let mut out = herd_report::history_text::table(&self.header(), &self.rows());
        if !self.name.is_empty() {
            out.push_str(&format!("(request name {})\n", self.name));
        }
        out
    }

    pub fn json(&self) -> serde_json::Value {
        let metrics: Vec<serde_json::Value> = self
            .found
            .iter()
            .map(|(m, d)| serde_json::json!({"metric": m, "name": self.name, "points": d.points, "changes": d.changes}))
            .collect();
        serde_json::json!({ "runs": self.runs, "metrics": metrics })
    }

    /// `-o trend.html`: the chart (change points marked) and the table, each point and each
    /// run's id linking to the run's own report, written beside the page
    /// (`trend-runs/run-ID.html`), as `herd history show ID -o` writes it.
    pub fn write_page(&self, store: &mut Store, path: &Path) -> Result<(), HistoryError> {
        let stem = path
            .file_stem()
            .map_or("trend".into(), |s| s.to_string_lossy().into_owned());
        let folder = format!("{stem}-runs");
        let dir = path.parent().unwrap_or(Path::new("")).join(&folder);
        std::fs::create_dir_all(&dir)
            .map_err(|e| HistoryError::Bad(format!("cannot write {}: {e}", dir.display())))?;
        let mut links = Vec::with_capacity(self.runs.len());
        for r in &self.runs {
            let run = store.run(r.id)?;
            let file = format!("run-{}.html", r.id);
            let page = herd_report::html::render_run(&run);
            write_file(&dir.join(&file), page.as_bytes())?;
            links.push(format!("{folder}/{file}"));
        }
        let ticks: Vec<String> = self.runs.iter().map(|r| format!("#{}", r.id)).collect();
        let lines: Vec<TrendLine> = self
            .found
            .iter()
            .map(|(m, d)| TrendLine {
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
        let title = if self.name.is_empty() {
            "herd history trend".to_owned()
        } else {
            format!("herd history trend: {}", self.name)
        };
        let fig = herd_report::figure::trend_figure(&title, &ticks, &lines);
        let header = self.header();
        let head: Vec<&str> = header.iter().map(String::as_str).collect();
        let page = herd_report::html::render_trend(&fig, &head, &self.rows(), &links);
        write_file(path, page.as_bytes())
    }
}

/// One metric's change points over the runs a filter picks (`herd history detect`).
pub struct Changes {
    pub metric: String,
    /// A request name's figures; empty: the whole run's.
    pub name: String,
    pub found: Detection,
}

impl Changes {
    pub fn ask(
        store: &mut Store,
        filter: &Filter,
        metric: &str,
        name: &str,
        seed: u64,
    ) -> Result<Changes, HistoryError> {
        Ok(Changes {
            metric: metric.to_owned(),
            name: name.to_owned(),
            found: detection(store, filter, metric, name, seed)?,
        })
    }

    /// Too few runs, no change, or each change with its run and labels.
    pub fn text(&self) -> String {
        let d = &self.found;
        let what = if self.name.is_empty() {
            self.metric.clone()
        } else {
            format!("{} of {}", self.metric, self.name)
        };
        let min = 2 * Options::default().min_runs;
        if d.points.len() < min {
            return format!(
                "{} runs: too few to find a change in {what} (at least {min}: {} before and after)\n",
                d.points.len(),
                min / 2
            );
        }
        if d.changes.is_empty() {
            return format!("no change in {what} over {} runs\n", d.points.len());
        }
        let mut out = format!(
            "{} change(s) in {what} over {} runs:\n",
            d.changes.len(),
            d.points.len()
        );
        for c in &d.changes {
            let labels = if c.run.labels.is_empty() {
                "no labels".to_owned()
            } else {
                labels_text(&c.run)
            };
            out.push_str(&format!(
                "  run #{} ({}, {labels}): {}\n",
                c.run.id,
                c.run.started_at,
                change_text(&self.metric, c)
            ));
        }
        out
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"metric": self.metric, "name": self.name, "runs": self.found.points.len(), "changes": self.found.changes})
    }
}
