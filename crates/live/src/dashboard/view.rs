//! What the page shows, grown event by event: the run so far as a (partial) result, the plan's
//! target second by second, and at the end the full result. Browsers joining late get the whole
//! view at once; a recording replayed through [`View::apply`] gives the same view afterwards.

use super::event::Event;
use super::event::Levels;
use hdrhistogram::Histogram;
use herd_result::stream::Sections;
use herd_result::{
    decode_histogram, encode_histogram, GeneratorSample, RunResult, Server, TimelineEntry,
};
use std::collections::BTreeMap;

/// Seconds drawn on the live charts: the last half hour (k6's dashboard keeps 2,880 points).
/// The numbers and the final page cover the whole run.
pub const WINDOW: usize = 1_800;

/// The run as the dashboard knows it.
pub struct View {
    /// The run so far: totals and errors added up from the seconds closed (its timeline is
    /// kept beside it, so drawing the last half hour copies only that).
    run: Option<RunResult>,
    timeline: Vec<TimelineEntry>,
    health: Vec<GeneratorSample>,
    /// Latency over every second so far (the run's `histograms.latency` is encoded from it
    /// only when drawn).
    latency: Histogram<u64>,
    /// The plan's target at the middle of each second.
    targets: Vec<(f64, f64)>,
    /// Per request name, scenario and check, added up from the seconds.
    sections: Sections,
    /// Each request name's requests in the last whole second.
    names_now: BTreeMap<String, u64>,
    /// The watched server's readings so far (`--watch-*`).
    server: Option<Server>,
    /// A sweep's or capacity search's levels, when the view follows a series of runs (the
    /// rest of the view is then its run going on).
    series: Option<Levels>,
    end: Option<Box<RunResult>>,
    /// The run's fault windows so far, shaded on its time charts.
    faults: Vec<herd_result::FaultWindow>,
    /// Arrivals dropped so far, and exchanges in flight at the end of the last second.
    pub dropped: u64,
    pub in_flight: u64,
    /// Seconds closed: the view's version for the browsers.
    pub seconds: u64,
}

impl Default for View {
    fn default() -> Self {
        View {
            run: None,
            timeline: Vec::new(),
            health: Vec::new(),
            latency: herd_metrics::new_histogram(),
            targets: Vec::new(),
            sections: Sections::default(),
            names_now: BTreeMap::new(),
            server: None,
            series: None,
            end: None,
            faults: Vec::new(),
            dropped: 0,
            in_flight: 0,
            seconds: 0,
        }
    }
}

impl View {
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Start(header) if self.series.is_some() => {
                // The next run of the series: the view starts again under the same levels.
                let mut series = self.series.take();
                if let Some(levels) = &mut series {
                    levels.step = Some(levels.step_of(&header.config));
                }
                let seconds = self.seconds;
                *self = View {
                    series,
                    seconds: seconds + 1,
                    ..View::default()
                };
                self.start(header);
            }
            Event::Start(header) => self.start(header),
            Event::Series(levels) => {
                self.series = Some(levels.clone());
                self.seconds += 1;
            }
            Event::Level(row) => {
                if let Some(levels) = &mut self.series {
                    levels.rows.push(row.clone());
                }
                self.seconds += 1;
            }
            Event::SeriesEnd { interrupted } => {
                if let Some(levels) = &mut self.series {
                    levels.done = true;
                    levels.interrupted = *interrupted;
                    levels.step = None;
                }
                self.seconds += 1;
            }
            Event::Second(s) => {
                let Some(run) = self.run.as_mut() else { return };
                let e = &s.line.second;
                if let Some(Ok(h)) = e.latency_histogram.as_deref().map(decode_histogram) {
                    let _ = self.latency.add(h);
                }
                run.totals.ok += e.ok;
                run.totals.failed += e.failed;
                run.totals.errors += e.errors;
                run.totals.completed = run.totals.ok + run.totals.failed;
                run.totals.sent = run.totals.completed + run.totals.errors;
                run.totals.scheduled = run.totals.sent + self.dropped + s.line.dropped;
                run.totals.bytes_received += e.bytes_received;
                for (k, n) in &e.error_kinds {
                    *run.errors.entry(k.clone()).or_default() += n;
                }
                self.health.extend(s.line.generator.clone());
                let l = &s.line;
                // A line whose histogram does not decode still counts; its latency is lost.
                let _ = self.sections.add(&l.by_name, &l.scenarios, &l.checks);
                if !e.partial {
                    self.names_now = (l.by_name.iter())
                        .map(|n| (n.name.clone(), n.ok + n.failed + n.errors))
                        .collect();
                }
                if let Some(fresh) = &l.server {
                    match &mut self.server {
                        Some(server) => server.append(fresh.clone()),
                        None => self.server = Some(fresh.clone()),
                    }
                }
                run.duration_s = run.duration_s.max(e.t as f64 + 1.0);
                self.dropped += s.line.dropped;
                self.in_flight = s.line.in_flight;
                run.totals.dropped = self.dropped;
                if let Some(t) = s.target {
                    self.targets.push((e.t as f64 + 0.5, t));
                }
                // The second's histogram is in `latency` now: not kept twice.
                // The streams' percentiles are what the charts draw; their histograms go.
                let streams = e.streams.clone().map(|s| herd_result::TimelineStreams {
                    ttft_histogram: None,
                    ttft_sent_histogram: None,
                    itl_histogram: None,
                    ..s
                });
                // So are the pings'.
                let ws = e.ws.clone().map(|w| {
                    Box::new(herd_result::SocketsSecond {
                        ping_histogram: None,
                        ..*w
                    })
                });
                self.timeline.push(TimelineEntry {
                    latency_histogram: None,
                    streams,
                    ws,
                    ..e.clone()
                });
                self.forget_past_the_window();
                self.seconds += 1;
            }
            Event::Fault(w) => {
                match self.faults.iter_mut().find(|f| f.name == w.name) {
                    Some(f) => *f = w.clone(),
                    None => self.faults.push(w.clone()),
                }
                self.seconds += 1;
            }
            Event::End(result) => {
                self.end = Some(result.clone());
                self.seconds += 1;
            }
        }
    }

    /// Keeps no more than the window and five minutes of seconds (dropped five minutes at a
    /// time): a 24-hour run's dashboard holds what it draws, not the whole day (the totals add
    /// up as they go; the final result comes whole at the end).
    fn forget_past_the_window(&mut self) {
        const SLACK: usize = 300;
        if self.timeline.len() < WINDOW + SLACK {
            return;
        }
        self.timeline.drain(..SLACK);
        let first = self.timeline[0].t;
        self.health.retain(|g| g.t >= first);
        self.targets.retain(|(t, _)| *t >= first as f64);
        if let Some(server) = &mut self.server {
            *server = since(server, first as f64);
        }
    }

    fn start(&mut self, header: &herd_result::stream::StreamHeader) {
        // With no lines there is nothing to decode: the empty result always builds.
        if let Ok(mut run) = herd_result::stream::partial(header.clone(), Vec::new()) {
            run.warnings.clear();
            run.extra.clear();
            run.interrupted = false;
            self.run = Some(run);
        }
    }

    /// The run ended, or the series of runs did: nothing more will change.
    pub fn ended(&self) -> bool {
        match &self.series {
            Some(levels) => levels.done,
            None => self.end.is_some(),
        }
    }

    /// The levels, when the view follows a series of runs.
    pub fn series(&self) -> Option<&Levels> {
        self.series.as_ref()
    }

    pub fn started(&self) -> bool {
        self.run.is_some()
    }

    /// The full result, once the run ended.
    pub fn end(&self) -> Option<&RunResult> {
        self.end.as_deref()
    }

    /// The plan's target at the middle of each second so far.
    pub fn targets(&self) -> &[(f64, f64)] {
        &self.targets
    }

    /// What the page is drawn from, copied so that the drawing holds no lock on the view.
    pub fn frame(&self) -> Frame {
        Frame {
            drawn: self.drawn(),
            targets: self.targets.clone(),
            names_now: self.names_now.clone(),
            in_flight: self.in_flight,
            ended: self.end.is_some(),
            series: self.series.clone(),
        }
    }

    /// The result to draw: the full one at the end; while the run goes on, the run so far with
    /// its last [`WINDOW`] seconds and its latency histogram.
    pub fn drawn(&self) -> Option<RunResult> {
        if let Some(end) = &self.end {
            return Some((**end).clone());
        }
        let run = self.run.as_ref()?;
        let skip = self.timeline.len().saturating_sub(WINDOW);
        let first = self.timeline.get(skip).map_or(0, |e| e.t);
        let mut d = run.clone();
        d.timeline = self.timeline[skip..].to_vec();
        d.generator.timeline = self
            .health
            .iter()
            .filter(|g| g.t >= first)
            .cloned()
            .collect();
        d.server = self.server.as_ref().map(|s| since(s, first as f64));
        d.faults = self.faults.clone();
        d.by_name = self.sections.by_name(d.duration_s);
        d.by_scenario = self.sections.by_scenario();
        d.checks = self.sections.checks();
        d.histograms.latency = encode_histogram(&self.latency);
        d.latency_ms = herd_result::summarize_us(&self.latency);
        d.throughput_rps = if d.duration_s > 0.0 {
            d.totals.completed as f64 / d.duration_s
        } else {
            0.0
        };
        Some(d)
    }
}

/// A copy of what the page shows at one moment.
pub struct Frame {
    /// `None` before the run starts.
    pub drawn: Option<RunResult>,
    pub targets: Vec<(f64, f64)>,
    /// Each request name's requests in the last whole second.
    pub names_now: BTreeMap<String, u64>,
    pub in_flight: u64,
    pub ended: bool,
    /// The levels of the series the run belongs to.
    pub series: Option<Levels>,
}

/// The readings of `server` from second `first` on: the live charts' window. Only the
/// window's readings are copied, never a day's.
fn since(server: &Server, first: f64) -> Server {
    use herd_result::{Exporter, PromSeries, WatchedProcess};
    let after = |t: f64| t > first;
    let processes = (server.processes.iter())
        .map(|p| WatchedProcess {
            pid: p.pid,
            name: p.name.clone(),
            pids: p.pids.clone(),
            trees: p.trees.clone(),
            parent: p.parent,
            start: p.start.clone().filter(|s| after(s.t)),
            samples: tail(&p.samples, |x| after(x.t)),
            notes: tail(&p.notes, |x| after(x.t)),
        })
        .collect();
    let prometheus = (server.prometheus.iter())
        .map(|e| Exporter {
            url: e.url.clone(),
            metrics: e.metrics.clone(),
            scrapes: e.scrapes,
            gaps: tail(&e.gaps, |g| after(g.t)),
            series: (e.series.iter())
                .map(|x| PromSeries {
                    name: x.name.clone(),
                    labels: x.labels.clone(),
                    kind: x.kind,
                    rate: x.rate,
                    samples: tail(&x.samples, |v| after(v.0)),
                })
                .collect(),
            series_dropped: e.series_dropped,
        })
        .collect();
    Server {
        processes,
        prometheus,
    }
}

/// The last items of `v` that are `new`, in order (`v` is in time order).
fn tail<T: Clone>(v: &[T], new: impl Fn(&T) -> bool) -> Vec<T> {
    let old = v.iter().rposition(|x| !new(x)).map_or(0, |i| i + 1);
    v[old..].to_vec()
}
