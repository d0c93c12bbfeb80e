//! `herd merge`: the results of a run's shards added up into the result one infinitely large
//! machine would have written.
//!
//! Exact, never estimated: counters add; histograms are decoded, added and every percentile is
//! computed again from the sum (averaging percentiles is k6's documented error); the timelines
//! add second by second on the absolute clock. Floats that add (CPU seconds, byte means) are
//! added as whole micro-units, so the sum is the same in any order and merging in a tree gives
//! the same bytes as merging all at once. A shard that is missing leaves the result marked
//! partial, naming it; nothing is scaled up to stand for it.
//!
//! Results are added one at a time to a [`Merge`]: memory follows one result and the running
//! sums, not the number of files.

mod files;
mod parts;
mod series;
mod sweeps;

pub use files::{merge_files, partial_run, partial_sweep, Merged};
pub use sweeps::merge_sweeps;

use crate::histogram::Histograms;
use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::result::{Kind, Warmup};
use crate::summary::Totals;
use crate::{Criterion, RunConfig, RunResult, ShardHeader, ShardInstance};
use hdrhistogram::Histogram;
use parts::{Bodies, GeneratorSum, NameSum, ScenarioSum};
use series::Seconds;
use std::collections::BTreeMap;

/// The running sum of shard results.
#[derive(Default)]
pub struct Merge {
    problems: Vec<String>,
    /// The first result's identity: every other must match it.
    first: Option<First>,
    /// Which file each shard index came from, to name both of a duplicate.
    seen: BTreeMap<u64, String>,
    instances: Vec<ShardInstance>,
    /// The result with the lowest shard index lends the descriptive fields (target, config).
    base: Option<(u64, RunResult)>,
    threads: u64,
    started_at: Option<String>,
    duration_s: f64,
    interrupted: bool,
    /// Every shard's warnings, once each.
    warnings: std::collections::BTreeSet<String>,
    warmup: Warmup,
    totals: Totals,
    status: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    error_samples: BTreeMap<String, String>,
    latency: Option<Histogram<u64>>,
    service: Option<Histogram<u64>>,
    connect: Option<Histogram<u64>>,
    time_to_error: Option<Histogram<u64>>,
    phases: crate::phases::PhaseSum,
    streams: crate::streams::StreamSum,
    grpc: crate::grpc::GrpcSum,
    websocket: crate::websocket::SocketSum,
    bodies: Bodies,
    generator: GeneratorSum,
    seconds: Seconds,
    timeline_start: Option<u64>,
    /// Each shard's measured window, seconds since 1970: shards without a shared start ran
    /// when they were started.
    windows: Vec<(f64, f64)>,
    names: Vec<NameSum>,
    scenarios: Vec<ScenarioSum>,
    checks: Vec<crate::CheckResult>,
}

struct First {
    name: String,
    plan_hash: String,
    count: u64,
    start_at: Option<String>,
    names: Vec<String>,
    thresholds: Vec<String>,
}

/// Why results cannot be merged: every problem, each naming its file.
#[derive(Debug)]
pub struct MergeError(pub Vec<String>);

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for MergeError {}

impl Merge {
    pub fn new() -> Merge {
        Merge::default()
    }

    /// Adds the result read from `name` (a file name, for messages). Problems are collected and
    /// reported together by [`Merge::finish`].
    pub fn add(&mut self, name: &str, r: RunResult) {
        let Some(header) = r.shard.clone() else {
            self.problems.push(format!(
                "{name} is not a shard's result (it has no shard header): merge the files `herd run --shard I/N` wrote"
            ));
            return;
        };
        if r.kind != Kind::Run {
            self.problems.push(format!("{name} is not a run's result"));
            return;
        }
        if !self.check(name, &header, &r) {
            return;
        }
        let Some(start) = r.timeline_start_unix_s else {
            self.problems.push(format!(
                "{name} has no timeline_start_unix_s: it was written by a herd that cannot be merged"
            ));
            return;
        };
        let low = header.instances.iter().map(|i| i.index).min().unwrap_or(0);
        self.instances.extend(header.instances.iter().cloned());
        if let Err(e) = self.add_numbers(&r, start) {
            self.problems.push(format!("{name}: {e}"));
        }
        if self.base.as_ref().is_none_or(|(i, _)| low < *i) {
            self.base = Some((low, r));
        }
    }

    /// Same plan, same shard count, no shard twice; says which file differs from which.
    fn check(&mut self, name: &str, h: &ShardHeader, r: &RunResult) -> bool {
        let names: Vec<String> = r.by_name.iter().map(|n| n.name.clone()).collect();
        let thresholds: Vec<String> = r.thresholds.iter().map(|t| t.expression.clone()).collect();
        let first = self.first.get_or_insert_with(|| First {
            name: name.to_owned(),
            plan_hash: h.plan_hash.clone(),
            count: h.count,
            start_at: h.start_at.clone(),
            names: names.clone(),
            thresholds: thresholds.clone(),
        });
        let mut ok = true;
        if h.plan_hash != first.plan_hash {
            self.problems.push(format!(
                "{name} is from a different plan than {} (plan hash {} vs {}): merge only the shards of one run",
                first.name,
                short(&h.plan_hash),
                short(&first.plan_hash)
            ));
            ok = false;
        } else if h.count != first.count {
            self.problems.push(format!(
                "{name} is a shard of {} but {} of {}",
                h.count, first.name, first.count
            ));
            ok = false;
        } else if h.start_at != first.start_at || names != first.names {
            self.problems.push(format!(
                "{name} does not match {}: {}",
                first.name,
                if names != first.names {
                    "its request names differ"
                } else {
                    "it started at another instant (--start-at)"
                }
            ));
            ok = false;
        } else if thresholds != first.thresholds {
            self.problems
                .push(format!("{name} has other thresholds than {}", first.name));
            ok = false;
        }
        for i in &h.instances {
            if let Some(other) = self.seen.get(&i.index) {
                self.problems.push(format!(
                    "shard {}/{} is in both {other} and {name}: each shard once",
                    i.index, h.count
                ));
                ok = false;
            }
        }
        if ok {
            for i in &h.instances {
                self.seen.insert(i.index, name.to_owned());
            }
        }
        ok
    }

    fn add_numbers(&mut self, r: &RunResult, start: u64) -> Result<(), String> {
        let decode = |what: &str, s: &str| {
            decode_histogram(s).map_err(|e| format!("its {what} histogram cannot be read: {e}"))
        };
        add_hist(&mut self.latency, decode("latency", &r.histograms.latency)?)?;
        add_hist(
            &mut self.service,
            decode("service time", &r.histograms.service_time)?,
        )?;
        add_hist(&mut self.connect, decode("connect", &r.histograms.connect)?)?;
        // Written before failures had their own histogram: nothing to add.
        if !r.histograms.time_to_error.is_empty() {
            add_hist(
                &mut self.time_to_error,
                decode("time to error", &r.histograms.time_to_error)?,
            )?;
        }
        self.phases.add(r.histograms.phases.as_ref())?;
        self.streams.add(r.streams.as_ref())?;
        self.grpc.add(r.grpc.as_ref())?;
        self.websocket.add(r.websocket.as_ref())?;
        self.seconds.add(r, start)?;
        self.windows
            .push((start as f64, start as f64 + r.duration_s.max(0.0)));
        parts::add_names(&mut self.names, &r.by_name)?;
        parts::add_scenarios(&mut self.scenarios, &r.by_scenario)?;
        parts::add_checks(&mut self.checks, &r.checks);
        self.timeline_start = Some(self.timeline_start.map_or(start, |s| s.min(start)));
        self.threads += r.config.threads;
        self.started_at = Some(match self.started_at.take() {
            Some(s) if s <= r.started_at => s,
            _ => r.started_at.clone(),
        });
        self.duration_s = self.duration_s.max(r.duration_s);
        self.interrupted |= r.interrupted;
        self.warnings.extend(r.warnings.iter().cloned());
        self.warmup.requests += r.warmup.requests;
        self.warmup.duration_s = self.warmup.duration_s.max(r.warmup.duration_s);
        parts::add_totals(&mut self.totals, &r.totals);
        parts::add_counts(&mut self.status, &r.status);
        parts::add_counts(&mut self.errors, &r.errors);
        for (k, m) in &r.error_samples {
            let e = self
                .error_samples
                .entry(k.clone())
                .or_insert_with(|| m.clone());
            if m < e {
                *e = m.clone();
            }
        }
        self.bodies.add(&r.response_bytes, r.totals.completed);
        let single = r.shard.as_ref().filter(|h| h.instances.len() == 1);
        self.generator
            .add(&r.generator, single.map(|h| h.label()).as_deref(), start);
        Ok(())
    }

    /// The merged result, or every problem found.
    pub fn finish(self) -> Result<RunResult, MergeError> {
        if !self.problems.is_empty() {
            return Err(MergeError(self.problems));
        }
        let (Some(first), Some((_, base))) = (self.first, self.base) else {
            return Err(MergeError(vec!["no results to merge".to_owned()]));
        };
        let hist = |h: Option<Histogram<u64>>| h.unwrap_or_else(herd_metrics::new_histogram);
        let (latency, service, connect, time_to_error) = (
            hist(self.latency),
            hist(self.service),
            hist(self.connect),
            hist(self.time_to_error),
        );
        let phases = self.phases.finish();
        let mut instances = self.instances;
        instances.sort_by_key(|i| i.index);
        let mut header = ShardHeader {
            plan_hash: first.plan_hash,
            count: first.count,
            start_at: first.start_at,
            instances,
            missing: Vec::new(),
        };
        header.compute_missing();
        let start = self.timeline_start.unwrap_or(0);
        let duration_s = self.duration_s;
        let mut warnings: Vec<String> = self.warnings.iter().cloned().collect();
        if header.start_at.is_none() {
            warnings.extend(apart(&self.windows));
        }
        let mut merged = RunResult {
            schema_version: crate::SCHEMA_VERSION,
            warnings,
            herd_version: crate::HERD_VERSION.to_owned(),
            kind: Kind::Run,
            target: base.target,
            // The config is the whole plan's (each shard records it so); only the machines'
            // threads add up.
            config: RunConfig {
                threads: self.threads,
                ..base.config
            },
            started_at: self.started_at.unwrap_or_default(),
            duration_s,
            interrupted: self.interrupted,
            warmup: self.warmup,
            throughput_rps: crate::build::per_second(self.totals.completed, duration_s),
            totals: self.totals,
            status: self.status,
            errors: self.errors,
            error_samples: self.error_samples,
            latency_ms: summarize_us(&latency),
            service_time_ms: summarize_us(&service),
            connect_ms: summarize_us(&connect),
            phases: phases.as_ref().map(|p| p.0.clone()),
            time_to_error_ms: summarize_us(&time_to_error),
            response_bytes: self.bodies.summary(),
            generator: self.generator.finish(start),
            timeline: self.seconds.finish(start, duration_s),
            histograms: Histograms {
                latency: encode_histogram(&latency),
                service_time: encode_histogram(&service),
                connect: encode_histogram(&connect),
                time_to_error: encode_histogram(&time_to_error),
                phases: phases.map(|p| p.1),
            },
            extra: BTreeMap::new(),
            // A watched server belongs to the instance that watched it, not to the sum.
            server: None,
            workload: base.workload,
            by_name: self
                .names
                .into_iter()
                .map(|n| n.finish(duration_s))
                .collect(),
            by_scenario: self
                .scenarios
                .into_iter()
                .map(ScenarioSum::finish)
                .collect(),
            checks: self.checks,
            thresholds: Vec::new(),
            timeline_start_unix_s: Some(start),
            shard: Some(header),
            requests_log: None,
            streams: self.streams.finish(duration_s),
            grpc: self.grpc.finish(),
            websocket: self.websocket.finish(),
            faults: Vec::new(),
        };
        let seconds = merged.timeline.iter().filter_map(|e| e.ws.as_deref());
        merged.websocket = crate::websocket::with_backlog(merged.websocket.take(), seconds);
        // Thresholds are judged on the merged numbers only: a shard's own verdict judged a part.
        merged.thresholds = first
            .thresholds
            .iter()
            .filter_map(|e| Criterion::parse(e).ok())
            .map(|t| t.evaluate(&merged))
            .collect();
        Ok(merged)
    }
}

/// Shards started without `--start-at` ran when each was started: their rates add up only
/// where their windows overlap. Says so, with the span they covered.
fn apart(windows: &[(f64, f64)]) -> Option<String> {
    if windows.len() < 2 {
        return None;
    }
    let first = windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
    let last = windows.iter().map(|w| w.1).fold(0.0, f64::max);
    let together = (windows.iter().map(|w| w.1).fold(f64::INFINITY, f64::min)
        - windows.iter().map(|w| w.0).fold(0.0, f64::max))
    .max(0.0);
    let at = |s: f64| {
        time::OffsetDateTime::from_unix_timestamp(s as i64)
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_default()
    };
    Some(format!(
        "the shards had no shared start (--start-at): they ran from {} to {} ({:.0} s), all at once for {:.0} s of it; the rates are added as if they had run together, which they did only then",
        at(first),
        at(last),
        last - first,
        together
    ))
}

fn add_hist(acc: &mut Option<Histogram<u64>>, h: Histogram<u64>) -> Result<(), String> {
    match acc {
        None => *acc = Some(h),
        Some(a) => a
            .add(&h)
            .map_err(|e| format!("histograms do not add up: {e:?}"))?,
    }
    Ok(())
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// Merges results in one go: [`Merge::add`] for each, then [`Merge::finish`].
pub fn merge(
    results: impl IntoIterator<Item = (String, RunResult)>,
) -> Result<RunResult, MergeError> {
    let mut m = Merge::new();
    for (name, r) in results {
        m.add(&name, r);
    }
    m.finish()
}

#[cfg(test)]
mod tests;
