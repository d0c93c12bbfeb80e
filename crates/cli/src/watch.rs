//! `herd run --watch-*`: the server's side of a run. The flags are checked against the machine
//! before any load is sent (a pid that does not exist, an exporter that does not answer: exit 2);
//! the watcher runs beside the load, and what it saw becomes the result's `server`.

use crate::exit::Exit;
use clap::Args;
use herd_monitor::{
    ExporterSeries, MetricKind, Observations, ProcessSeries, ProcessTarget, Ready, WatchPlan,
    Watcher,
};
use herd_result::{
    Exporter, Gap, Note, ProcessSample, ProcessState, PromSeries, SeriesKind, Server,
    WatchedProcess,
};
use std::time::Instant;

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Watching the server")]
pub struct WatchArgs {
    /// Read this process from /proc each second: CPU %, memory (RSS), threads, open files,
    /// context switches (repeatable)
    #[arg(long = "watch-pid", value_name = "PID")]
    pub pids: Vec<u32>,

    /// The same for every process of this name, summed: nginx's master and workers (repeatable).
    /// Every user's processes of the name count; the summary says how many separate process
    /// trees matched, and --watch-parent narrows to one
    #[arg(long = "watch-name", value_name = "NAME")]
    pub names: Vec<String>,

    /// With --watch-name: count only processes in this pid's tree (the pid itself and its
    /// descendants), e.g. one nginx's master among several
    #[arg(long = "watch-parent", value_name = "PID", requires = "names")]
    pub parent: Option<u32>,

    /// Scrape this Prometheus endpoint each second, e.g. node_exporter's
    /// http://127.0.0.1:9100/metrics or the application's own (repeatable)
    #[arg(long = "watch-prometheus", value_name = "URL")]
    pub prometheus: Vec<String>,

    /// A series to keep from the endpoints: NAME or NAME{label="value"}; counters are kept as
    /// per-second rates (repeatable) [default: process_cpu_seconds_total,
    /// process_resident_memory_bytes, process_open_fds, node_load1, node_memory_MemAvailable_bytes,
    /// those the endpoint has]
    #[arg(long = "watch-metric", value_name = "SERIES")]
    pub metrics: Vec<String>,
}

impl WatchArgs {
    fn plan(&self) -> WatchPlan {
        let pids = self.pids.iter().map(|&p| ProcessTarget::Pid(p));
        let names = self.names.iter().map(|n| ProcessTarget::Name(n.clone()));
        WatchPlan {
            processes: pids.chain(names).collect(),
            parent: self.parent,
            exporters: self.prometheus.clone(),
            metrics: self.metrics.clone(),
            ..WatchPlan::default()
        }
    }
}

/// Checks the watch flags against the machine now; `None` when nothing is to be watched.
pub fn check(a: &WatchArgs) -> Result<Option<Ready>, Exit> {
    let plan = a.plan();
    if plan.is_empty() && plan.metrics.is_empty() {
        return Ok(None);
    }
    herd_monitor::prepare(&plan).map(Some).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        Exit::bad_input(lines.join("\n"))
    })
}

/// Starts watching; `origin` is when the measurement starts (after the warm-up).
pub fn start(ready: Option<Ready>, origin: Instant) -> Result<Option<Watcher>, Exit> {
    ready
        .map(|r| r.start(origin))
        .transpose()
        .map_err(|e| Exit::bad_input(e.to_string()))
}

/// Stops watching and turns what was seen into the result's `server`.
pub fn stop(watcher: Option<Watcher>) -> Option<Server> {
    watcher.map(|w| to_server(&w.stop()))
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
