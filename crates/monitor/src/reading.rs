//! Readings as they are taken: the watch's threads tell each one to the [`crate::Watcher`],
//! which hands those not yet seen to the live outputs ([`crate::Watcher::fresh`]), so a second's
//! record carries the server's side of that second instead of waiting for the end.

use crate::exporter::{ExporterSampler, Series};
use crate::observations::ExporterSeries;
use crate::process::ProcessSample;
use std::time::Instant;

/// One reading of one watched target, by its place in the plan.
#[derive(Debug)]
pub(crate) enum Reading {
    Process(usize, ProcessSample),
    /// What one scrape added: its samples and its gap, if it failed.
    Exporter(usize, ExporterSeries),
}

/// What the scrape that began at `before` added to `s`.
pub(crate) fn scraped_since(s: &ExporterSampler, before: Instant) -> ExporterSeries {
    let series = s
        .series()
        .filter_map(|x| {
            // Only the newest few samples are looked at: a day's series is not copied.
            let new: Vec<(Instant, f64)> = x
                .samples
                .iter()
                .rev()
                .take_while(|(at, _)| *at >= before)
                .copied()
                .collect();
            (!new.is_empty()).then(|| {
                let mut fresh = Series::new(&x.name, &x.labels, x.kind, x.rate);
                fresh.samples = new.into_iter().rev().collect();
                fresh
            })
        })
        .collect();
    ExporterSeries {
        url: s.url().to_owned(),
        metrics: s.selectors().iter().map(|x| x.to_string()).collect(),
        scrapes: s.scrapes(),
        gaps: (s.gaps().iter().rev())
            .take_while(|g| g.at >= before)
            .cloned()
            .collect(),
        series,
        series_dropped: s.series_dropped(),
    }
}

/// Adds one scrape's readings to those gathered since the last [`crate::Watcher::fresh`].
pub(crate) fn add_scrape(into: &mut ExporterSeries, seen: ExporterSeries) {
    into.scrapes = seen.scrapes;
    into.series_dropped = seen.series_dropped;
    into.gaps.extend(seen.gaps);
    for s in seen.series {
        match into
            .series
            .iter_mut()
            .find(|x| x.name == s.name && x.labels == s.labels)
        {
            Some(x) => x.samples.extend(s.samples),
            None => into.series.push(s),
        }
    }
}
