//! The server's side of a run (`--watch-*`): the plan is checked against the machine when the
//! run is prepared (a pid that does not exist, an exporter that does not answer: nothing is
//! sent), the watcher runs beside the load, and what it saw becomes the result's `server`.

use crate::RunError;
use herd_monitor::{
    ExporterSeries, MetricKind, Observations, ProcessSeries, ProcessTarget, Ready, WatchPlan,
    Watcher,
};
use herd_result::{
    Exporter, Gap, Note, ProcessSample, ProcessState, PromSeries, SeriesKind, Server,
    WatchedProcess,
};
use std::sync::Mutex;
use std::time::Instant;

/// A watch plan checked when the run was prepared. The first run uses that check; a series'
/// later runs check again, as the processes may have gone.
pub(crate) struct Watch {
    plan: WatchPlan,
    ready: Mutex<Option<Ready>>,
}

impl Watch {
    /// Checks the plan against the machine now; `None` when nothing is to be watched.
    pub(crate) fn check(plan: &WatchPlan) -> Result<Option<Watch>, Vec<String>> {
        if plan.is_empty() && plan.metrics.is_empty() {
            return Ok(None);
        }
        let ready = herd_monitor::prepare(plan)
            .map_err(|problems| problems.iter().map(|p| p.to_string()).collect::<Vec<_>>())?;
        Ok(Some(Watch {
            plan: plan.clone(),
            ready: Mutex::new(Some(ready)),
        }))
    }

    /// Starts watching; `origin` is when the measurement starts (after the warm-up).
    pub(crate) fn start(&self, origin: Instant) -> Result<Watcher, RunError> {
        let ready = self.ready.lock().unwrap_or_else(|e| e.into_inner()).take();
        let ready = match ready {
            Some(r) => r,
            None => herd_monitor::prepare(&self.plan).map_err(|problems| {
                let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
                RunError::Start(lines.join("\n"))
            })?,
        };
        ready
            .start(origin)
            .map_err(|e| RunError::Start(e.to_string()))
    }
}

/// Stops watching and turns what was seen into the result's `server`.
pub(crate) fn stop(watcher: Watcher) -> Server {
    to_server(&watcher.stop())
}

/// The readings taken since the last call, as a `server` of their own.
pub(crate) fn fresh(watcher: &Watcher) -> Server {
    let mut server = to_server(&watcher.fresh());
    // Only targets with something new: a line says nothing of the others.
    server.processes.retain(|p| !p.samples.is_empty());
    server
        .prometheus
        .retain(|e| !e.series.is_empty() || !e.gaps.is_empty());
    server
}

fn to_server(o: &Observations) -> Server {
    Server {
        processes: o.processes.iter().map(|p| process(o, p)).collect(),
        prometheus: o.exporters.iter().map(|e| exporter(o, e)).collect(),
    }
}

/// Seconds on the run's axis, to the millisecond (the readings are not finer than that).
fn t(o: &Observations, at: Instant) -> f64 {
    (o.t(at) * 1e3).round() / 1e3
}

fn process(o: &Observations, p: &ProcessSeries) -> WatchedProcess {
    let mut notes: Vec<Note> = p
        .notes
        .iter()
        .map(|n| Note {
            t: t(o, n.at),
            text: n.text.clone(),
        })
        .collect();
    if p.notes_dropped > 0 {
        let last = notes.last().map_or(0.0, |n| n.t);
        notes.push(Note {
            t: last,
            text: format!("{} more notes left out", p.notes_dropped),
        });
    }
    WatchedProcess {
        pid: p.pid,
        name: match &p.target {
            ProcessTarget::Name(n) => Some(n.clone()),
            ProcessTarget::Pid(_) => None,
        },
        pids: p.pids.clone(),
        trees: p.trees.clone(),
        parent: p.parent,
        start: p.start.map(|g| ProcessState {
            t: t(o, g.at),
            processes: g.processes,
            rss_bytes: g.rss_bytes,
            threads: g.threads,
            fds: g.fds,
        }),
        samples: p
            .samples
            .iter()
            .map(|s| ProcessSample {
                t: t(o, s.gauges.at),
                processes: s.gauges.processes,
                // Hundredths of a percent: ticks are 10 ms, finer digits would be noise.
                cpu_percent: (s.cpu_percent * 100.0).round() / 100.0,
                rss_bytes: s.gauges.rss_bytes,
                threads: s.gauges.threads,
                fds: s.gauges.fds,
                ctx_switches_voluntary: s.ctx_voluntary,
                ctx_switches_involuntary: s.ctx_involuntary,
            })
            .collect(),
        notes,
    }
}

fn exporter(o: &Observations, e: &ExporterSeries) -> Exporter {
    Exporter {
        url: e.url.clone(),
        metrics: e.metrics.clone(),
        scrapes: e.scrapes,
        gaps: e
            .gaps
            .iter()
            .map(|g| Gap {
                t: t(o, g.at),
                error: g.error.clone(),
            })
            .collect(),
        series: e
            .series
            .iter()
            .map(|s| PromSeries {
                name: s.name.clone(),
                labels: s.labels.clone(),
                kind: match s.kind {
                    MetricKind::Counter => SeriesKind::Counter,
                    MetricKind::Gauge => SeriesKind::Gauge,
                    MetricKind::Histogram => SeriesKind::Histogram,
                    MetricKind::Summary => SeriesKind::Summary,
                    MetricKind::Untyped => SeriesKind::Untyped,
                },
                rate: s.rate,
                samples: s
                    .samples
                    .iter()
                    .map(|&(at, v)| (t(o, at), v.is_finite().then_some(v)))
                    .collect(),
            })
            .collect(),
        series_dropped: e.series_dropped as u64,
    }
}
