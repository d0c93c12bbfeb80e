//! What the page shows, grown event by event: the run so far as a (partial) result, the plan's
//! target second by second, and at the end the full result. Browsers joining late get the whole
//! view at once; a recording replayed through [`View::apply`] gives the same view afterwards.

use super::event::Event;
use hdrhistogram::Histogram;
use herd_result::{decode_histogram, encode_histogram, GeneratorSample, RunResult, TimelineEntry};

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
    end: Option<Box<RunResult>>,
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
            end: None,
            dropped: 0,
            in_flight: 0,
            seconds: 0,
        }
    }
}

impl View {
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Start(header) => {
                // With no lines there is nothing to decode: the empty result always builds.
                if let Ok(mut run) = herd_result::stream::partial(header.clone(), Vec::new()) {
                    run.warnings.clear();
                    run.extra.clear();
                    run.interrupted = false;
                    self.run = Some(run);
                }
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
                run.duration_s = run.duration_s.max(e.t as f64 + 1.0);
                self.dropped += s.line.dropped;
                self.in_flight = s.line.in_flight;
                run.totals.dropped = self.dropped;
                if let Some(t) = s.target {
                    self.targets.push((e.t as f64 + 0.5, t));
                }
                // The second's histogram is in `latency` now: not kept twice.
                self.timeline.push(TimelineEntry {
                    latency_histogram: None,
                    ..e.clone()
                });
                self.forget_past_the_window();
                self.seconds += 1;
            }
            Event::End(result) => {
                self.end = Some(result.clone());
                self.seconds += 1;
            }
        }
    }

    /// Keeps no more than two windows of seconds (dropped a window at a time): a 24-hour run's
    /// dashboard holds what it draws, not the whole day (the totals add up as they go; the
    /// final result comes whole at the end).
    fn forget_past_the_window(&mut self) {
        if self.timeline.len() < 2 * WINDOW {
            return;
        }
        self.timeline.drain(..WINDOW);
        let first = self.timeline[0].t;
        self.health.retain(|g| g.t >= first);
        self.targets.retain(|(t, _)| *t >= first as f64);
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
