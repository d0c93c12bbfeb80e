//! A metric over stored runs (`herd history trend -o trend.html`): one panel per metric, a
//! line through the runs in order, the change points `herd history detect` found marked.

use super::{palette, Figure, Mark, Panel, Reading, Series, XAxis};

/// One metric over the runs.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendLine {
    /// What it is, e.g. "latency p99 (ms)".
    pub label: String,
    /// One value per run, in the order of the figure's runs.
    pub values: Vec<f64>,
    /// Where a new level begins (positions in `values`), with what to write there.
    pub changes: Vec<(usize, String)>,
    /// Each value's run's report (an `href`), in the order of `values`; empty: no links.
    pub links: Vec<String>,
}

/// The figure of `lines` over `runs` (what each run is called on the x axis, e.g. "#12").
pub fn trend_figure(title: &str, runs: &[String], lines: &[TrendLine]) -> Figure {
    let n = runs.len().max(1) as f64;
    let panels = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let top = line.values.iter().copied().fold(0.0, f64::max);
            let points: Vec<(f64, f64)> = line
                .values
                .iter()
                .enumerate()
                .map(|(k, v)| ((k + 1) as f64, *v))
                .collect();
            let mut s = Series::line(&line.label, palette::cycle(i), points);
            s.markers = true;
            s.links = line.links.clone();
            Panel::new(
                &format!("trend-{i}"),
                &line.label,
                &format!("{} over {} runs, oldest first", line.label, runs.len()),
            )
            .x(
                "run",
                XAxis::Linear,
                Reading::Ordinal(runs.to_vec()),
                (1.0, n.max(2.0)),
            )
            .y_to(
                &line.label,
                Reading::Sig3,
                if top > 0.0 { top * 1.1 } else { 1.0 },
            )
            .series(vec![s])
            .marks(
                line.changes
                    .iter()
                    .map(|(at, text)| Mark {
                        vertical: true,
                        at: (*at + 1) as f64,
                        label: text.clone(),
                        color: palette::RED,
                    })
                    .collect(),
            )
        })
        .collect();
    Figure {
        title: title.to_owned(),
        panels,
    }
}
