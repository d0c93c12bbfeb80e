//! The watch: its own threads, started just before the load and stopped right after, reading
//! once a second on the run's time axis.
//!
//! Readings fall on whole seconds after `origin` (the start of the measurement), so a sample at
//! t = 3 covers the same second as the run's timeline entry t = 2 ([2, 3)). One thread reads
//! every watched process; each Prometheus endpoint has its own, so a slow scrape delays
//! nothing else.

use crate::exporter::{ExporterSampler, Gap};
use crate::kept;
use crate::observations::{seconds_since, ExporterSeries, Observations, ProcessSeries};
use crate::process::{Note, ProcessSample, ProcessSampler, ProcessTarget};
use crate::reading::{add_scrape, scraped_since, Reading};
use crate::{HttpUrl, MonitorError, Selector};
use herd_spill::Spill;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What to watch during a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchPlan {
    pub processes: Vec<ProcessTarget>,
    /// Count only processes in this pid's tree for the name targets (`--watch-parent`).
    pub parent: Option<u32>,
    /// Prometheus endpoints, `http://host:port/metrics`.
    pub exporters: Vec<String>,
    /// Series to keep from every endpoint ([`crate::Selector`] syntax); empty for
    /// [`crate::DEFAULT_METRICS`].
    pub metrics: Vec<String>,
    pub interval: Duration,
    /// Per scrape, connect included.
    pub scrape_timeout: Duration,
}

impl Default for WatchPlan {
    fn default() -> Self {
        WatchPlan {
            processes: Vec::new(),
            parent: None,
            exporters: Vec::new(),
            metrics: Vec::new(),
            interval: Duration::from_secs(1),
            scrape_timeout: Duration::from_secs(2),
        }
    }
}

impl WatchPlan {
    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.exporters.is_empty()
    }
}

/// A plan checked against the machine: every process exists, every endpoint answered with the
/// series asked for. Nothing runs yet.
#[derive(Debug)]
pub struct Ready {
    processes: Vec<ProcessSampler>,
    exporters: Vec<ExporterSampler>,
    interval: Duration,
}

/// Checks the plan now and reports every problem at once.
pub fn prepare(plan: &WatchPlan) -> Result<Ready, Vec<MonitorError>> {
    let me = std::process::id();
    let mut problems = Vec::new();
    let mut processes = Vec::new();
    for target in &plan.processes {
        match ProcessSampler::within(target.clone(), me, plan.parent) {
            Ok(s) => processes.push(s),
            Err(e) => problems.push(e),
        }
    }
    let mut selectors = Vec::new();
    for m in &plan.metrics {
        match Selector::parse(m) {
            Ok(s) => selectors.push(s),
            Err(e) => problems.push(MonitorError::BadSelector(e)),
        }
    }
    if !plan.metrics.is_empty() && plan.exporters.is_empty() {
        problems.push(MonitorError::BadSelector(
            "needs an endpoint to scrape: add --watch-prometheus URL".to_owned(),
        ));
    }
    let mut exporters = Vec::new();
    // Until every selector parses, an endpoint's URL is checked but not scraped.
    let parsed = selectors.len() == plan.metrics.len();
    for url in &plan.exporters {
        if !parsed {
            if let Err(e) = HttpUrl::parse(url) {
                problems.push(MonitorError::BadUrl(e));
            }
            continue;
        }
        match ExporterSampler::new(url, &selectors, plan.scrape_timeout) {
            Ok(s) => exporters.push(s),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(Ready {
            processes,
            exporters,
            interval: plan.interval,
        })
    } else {
        Err(problems)
    }
}

/// A running watch.
#[derive(Debug)]
pub struct Watcher {
    pub(crate) origin: Instant,
    stop: Vec<Sender<()>>,
    /// Each reading as it is taken, for [`Watcher::fresh`].
    pub(crate) fresh: Receiver<Reading>,
    /// Each target's series as it began (empty), and the thread that fills it.
    pub(crate) processes: Option<(Vec<ProcessSeries>, JoinHandle<Vec<ProcessSeries>>)>,
    pub(crate) exporters: Vec<(ExporterSeries, JoinHandle<ExporterSeries>)>,
}

impl Ready {
    /// Starts the threads; each takes its first reading at once. `origin` is when the
    /// measurement starts (after any warm-up): the zero of the time axis.
    pub fn start(self, origin: Instant) -> Result<Watcher, MonitorError> {
        let interval = self.interval;
        let mut stop = Vec::new();
        let (told, fresh) = mpsc::channel();
        let processes = if self.processes.is_empty() {
            None
        } else {
            let (tx, rx) = mpsc::channel();
            stop.push(tx);
            let empty = self.processes.iter().map(series_of).collect();
            let mut samplers: Vec<(ProcessSampler, ProcessSeries)> = self
                .processes
                .into_iter()
                .map(|s| {
                    let series = series_of(&s);
                    (s, series)
                })
                .collect();
            let told = told.clone();
            let handle = std::thread::Builder::new()
                .name("herd-watch-proc".into())
                .spawn(move || {
                    for (s, series) in samplers.iter_mut() {
                        series.start = s.start(Instant::now());
                    }
                    let mut spills: Vec<Spill<ProcessSample>> =
                        samplers.iter().map(|_| Spill::default()).collect();
                    pace(origin, interval, &rx, || {
                        for (k, (s, series)) in samplers.iter_mut().enumerate() {
                            if let Some(x) = s.sample(Instant::now()) {
                                // Nobody may be asking (a watch without live outputs).
                                let _ = told.send(Reading::Process(k, x));
                                series.samples.push(x);
                                kept::spill_old(&mut series.samples, &mut spills[k]);
                            }
                        }
                    });
                    samplers
                        .into_iter()
                        .zip(spills)
                        .map(|((s, mut series), spill)| {
                            series.pids = s.pids().to_vec();
                            series.notes = s.notes().to_vec();
                            series.notes_dropped = s.notes_dropped();
                            if let Err(e) = kept::read_back(&mut series.samples, spill) {
                                series.notes.push(Note {
                                    at: Instant::now(),
                                    text: format!("the first readings are missing: {e}"),
                                });
                            }
                            series
                        })
                        .collect()
                })
                .map_err(MonitorError::Thread)?;
            Some((empty, handle))
        };
        let mut exporters = Vec::new();
        for (k, mut sampler) in self.exporters.into_iter().enumerate() {
            let (tx, rx) = mpsc::channel();
            stop.push(tx);
            let empty = exporter_series_of(&sampler);
            let told = told.clone();
            let scrape = move |sampler: &mut ExporterSampler| {
                let before = Instant::now();
                sampler.scrape();
                let _ = told.send(Reading::Exporter(k, scraped_since(sampler, before)));
            };
            let handle = std::thread::Builder::new()
                .name("herd-watch-prom".into())
                .spawn(move || {
                    scrape(&mut sampler);
                    pace(origin, interval, &rx, || scrape(&mut sampler));
                    sampler.read_back();
                    exporter_series_of(&sampler)
                })
                .map_err(MonitorError::Thread)?;
            exporters.push((empty, handle));
        }
        Ok(Watcher {
            origin,
            stop,
            fresh,
            processes,
            exporters,
        })
    }
}

impl Watcher {
    /// Stops the threads (each takes a last reading unless it just took one) and returns what
    /// they saw. Waits at most for a scrape in progress to end or time out.
    pub fn stop(mut self) -> Observations {
        self.stop.clear();
        let processes = match self.processes.take() {
            None => Vec::new(),
            Some((empty, handle)) => handle.join().unwrap_or_else(|_| failed(empty)),
        };
        let exporters = self
            .exporters
            .drain(..)
            .map(|(mut empty, handle)| {
                handle.join().unwrap_or_else(|_| {
                    empty.gaps.push(Gap {
                        at: Instant::now(),
                        error: "the watcher thread failed".to_owned(),
                    });
                    empty
                })
            })
            .collect();
        Observations {
            origin: self.origin,
            processes,
            exporters,
        }
    }
}

fn failed(mut series: Vec<ProcessSeries>) -> Vec<ProcessSeries> {
    for s in &mut series {
        s.notes.push(Note {
            at: Instant::now(),
            text: "the watcher thread failed".to_owned(),
        });
    }
    series
}

fn series_of(s: &ProcessSampler) -> ProcessSeries {
    ProcessSeries {
        target: s.target().clone(),
        pid: s.pid(),
        pids: s.pids().to_vec(),
        trees: s.trees().to_vec(),
        parent: s.under(),
        start: None,
        samples: Vec::new(),
        notes: Vec::new(),
        notes_dropped: 0,
    }
}

fn exporter_series_of(s: &ExporterSampler) -> ExporterSeries {
    ExporterSeries {
        url: s.url().to_owned(),
        metrics: s.selectors().iter().map(|x| x.to_string()).collect(),
        scrapes: s.scrapes(),
        gaps: s.gaps().to_vec(),
        series: s.series().cloned().collect(),
        series_dropped: s.series_dropped(),
    }
}

/// Calls `read` on the grid of `interval`s from `origin` until `stop` is dropped, then once
/// more unless the last reading was moments ago.
fn pace(origin: Instant, interval: Duration, stop: &Receiver<()>, mut read: impl FnMut()) {
    let step = interval.as_secs_f64();
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        let next = next_tick(
            seconds_since(origin, last),
            seconds_since(origin, now),
            step,
        );
        let wait = instant_at(origin, next).saturating_duration_since(now);
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {
                last = Instant::now();
                read();
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                if last.elapsed() >= interval / 10 {
                    read();
                }
                return;
            }
        }
    }
}

/// The next grid point (a multiple of `interval`, in seconds from the origin) at least half an
/// interval after the last reading and not in the past: a late reading skips a tick rather than
/// crowding two readings together.
fn next_tick(last: f64, now: f64, interval: f64) -> f64 {
    let earliest = (last + interval / 2.0).max(now);
    (earliest / interval).ceil() * interval
}

fn instant_at(origin: Instant, offset_s: f64) -> Instant {
    let d = Duration::from_secs_f64(offset_s.abs());
    if offset_s >= 0.0 {
        origin + d
    } else {
        origin.checked_sub(d).unwrap_or(origin)
    }
}

impl Watcher {
    /// The readings taken since the last call, as observations of their own: what the live
    /// outputs add to the second they close. The final [`Watcher::stop`] still returns all.
    pub fn fresh(&self) -> Observations {
        let mut processes: Vec<ProcessSeries> = match &self.processes {
            Some((empty, _)) => empty.clone(),
            None => Vec::new(),
        };
        let mut exporters: Vec<ExporterSeries> =
            self.exporters.iter().map(|(e, _)| e.clone()).collect();
        for reading in self.fresh.try_iter() {
            match reading {
                Reading::Process(k, x) => {
                    if let Some(p) = processes.get_mut(k) {
                        p.samples.push(x);
                    }
                }
                Reading::Exporter(k, seen) => {
                    if let Some(e) = exporters.get_mut(k) {
                        add_scrape(e, seen);
                    }
                }
            }
        }
        Observations {
            origin: self.origin,
            processes,
            exporters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_fall_on_whole_seconds_of_the_measurement() {
        let table = [
            // (last reading, now, want): seconds from the origin
            (-0.005, -0.004, 1.0), // baseline just before the start: no reading at t = 0
            (1.0, 1.001, 2.0),
            (1.02, 1.03, 2.0),
            (-2.3, -2.3, -1.0), // during a 2.3 s warm-up
            (0.6, 0.61, 2.0),   // a reading 0.6 s late skips the tick 0.4 s after it
            (3.0, 4.7, 5.0),    // a scrape that took 1.7 s: the next whole second
            (3.0, 5.0, 5.0),
        ];
        for (last, now, want) in table {
            assert_eq!(next_tick(last, now, 1.0), want, "last {last}, now {now}");
        }
        assert_eq!(next_tick(0.0, 0.0, 0.25), 0.25);
    }

    #[test]
    fn times_are_signed_seconds_from_the_origin() {
        let origin = Instant::now() + Duration::from_secs(5);
        let before = origin - Duration::from_millis(1500);
        assert_eq!(seconds_since(origin, before), -1.5);
        assert_eq!(
            seconds_since(origin, origin + Duration::from_millis(250)),
            0.25
        );
        assert_eq!(instant_at(origin, -1.5), before);
    }

    #[test]
    fn a_bad_selector_and_a_bad_url_are_reported_together() {
        let plan = WatchPlan {
            exporters: vec!["https://127.0.0.1:9100/".into()],
            metrics: vec!["up{job=~\"x\"}".into()],
            ..WatchPlan::default()
        };
        let e: Vec<String> = prepare(&plan)
            .unwrap_err()
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].contains("regular-expression"), "{e:?}");
        assert!(e[1].contains("only http://"), "{e:?}");
    }

    #[test]
    fn metrics_without_an_endpoint_are_refused() {
        let plan = WatchPlan {
            metrics: vec!["up".into()],
            ..WatchPlan::default()
        };
        let e = prepare(&plan).unwrap_err();
        assert!(e[0].to_string().contains("--watch-prometheus"), "{}", e[0]);
    }
}
