//! A run's replies and errors second by second, by class, as stacked bars: the status
//! classes in the colours people expect, then each kind of error.

use super::{palette, run_end, Figure, Kind, Panel, Reading, Series};
use crate::{RunResult, TimelineEntry};
use std::collections::BTreeSet;

/// Bars drawn at most: longer runs are summed into buckets of whole seconds.
const MAX_BARS: usize = 240;

/// One panel of stacked bars, a bar per second (or per bucket of seconds), a layer per
/// status class and per kind of error, each the mean per second over its bar.
pub fn statuses_figure(r: &RunResult) -> Figure {
    let n = r.timeline.len();
    let bucket = n.div_ceil(MAX_BARS).max(1);
    let starts: Vec<f64> = (0..n.div_ceil(bucket))
        .map(|i| (i * bucket) as f64)
        .collect();
    let mut classes: BTreeSet<String> = BTreeSet::new();
    let mut errors: BTreeSet<String> = BTreeSet::new();
    for e in &r.timeline {
        classes.extend(e.status_class.keys().cloned());
        errors.extend(e.error_kinds.keys().cloned());
    }
    let per_bar = |get: &dyn Fn(&TimelineEntry) -> u64| -> Vec<(f64, f64)> {
        r.timeline
            .chunks(bucket)
            .zip(&starts)
            .map(|(c, x)| (*x, c.iter().map(get).sum::<u64>() as f64 / c.len() as f64))
            .collect()
    };
    let mut series = Vec::new();
    for k in &classes {
        series.push(Series::line(
            k,
            palette::status(k),
            per_bar(&|e| *e.status_class.get(k).unwrap_or(&0)),
        ));
    }
    for (i, k) in errors.iter().enumerate() {
        series.push(Series::line(
            &format!("error: {k}"),
            palette::error(i),
            per_bar(&|e| *e.error_kinds.get(k).unwrap_or(&0)),
        ));
    }
    let max = (0..starts.len())
        .map(|i| series.iter().map(|s| s.points[i].1).sum::<f64>())
        .fold(0.0, f64::max);
    let (caption, reads) = if bucket == 1 {
        (
            "Responses and errors per second, by class".to_owned(),
            Reading::Second,
        )
    } else {
        (
            format!("Responses and errors per second, by class ({bucket} s buckets)"),
            Reading::Seconds(bucket as u64),
        )
    };
    let panel = Panel::new("chart-statuses", "Status codes and errors", &caption)
        .kind(Kind::StackedBars {
            starts,
            width: bucket as f64,
        })
        .over_time(run_end(r), reads)
        .y_to("per second (1/s)", Reading::Rate("/s".into()), max * 1.05)
        .height(200.0)
        .series(series);
    Figure {
        title: format!("herd run: {}", r.target),
        panels: vec![panel],
    }
}
