//! Building a [`RunResult`] from what the metrics collected: arithmetic and naming, no I/O.

use crate::histogram::Histograms;
use crate::histogram::{encode_histogram, summarize_compact, summarize_us};
use crate::result::{Kind, Warmup};
use crate::summary::{SizeSummary, Totals};
use crate::workload::{NameResult, ScenarioResult};
use crate::{Generator, RunConfig, RunResult, TimelineEntry};
use hdrhistogram::Histogram;
use herd_metrics::{CompactHistogram, ErrorKind, Second, Stats};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Everything [`build_run`] needs, gathered by the caller after the run.
#[derive(Clone, Debug)]
pub struct RunInput<'a> {
    /// What was loaded, e.g. the URL of a plain run.
    pub target: String,
    pub config: RunConfig,
    /// When the measurement (not the warm-up) started.
    pub started_at: SystemTime,
    /// Length of the measurement, warm-up excluded.
    pub duration: Duration,
    /// How long load was offered after the measurement started (the schedule's end, warm-up
    /// excluded; `None` when the run was bounded by a count, not a schedule). Seconds past it
    /// are the drain: their answers are counted, but they are not seconds of load.
    pub offered: Option<Duration>,
    pub interrupted: bool,
    /// All workers' totals, merged.
    pub stats: &'a Stats,
    /// The merged per-second series, as `Timeline::finish` returns it.
    pub timeline: &'a [Second],
    /// Requests scheduled but never sent (the open model fell behind, or the run stopped first).
    pub dropped: u64,
    pub warmup_requests: u64,
    pub warmup_duration: Duration,
    pub generator: Generator,
}

/// Builds the result of a run.
///
/// `scheduled` is derived as `completed + errors + dropped` rather than taken from the caller, so
/// the identity the JSON promises holds by construction: every scheduled request either ended
/// (with a response or an error) or was dropped.
pub fn build_run(input: RunInput<'_>) -> RunResult {
    let s = input.stats;
    let duration_s = input.duration.as_secs_f64();
    let totals = totals(s, input.dropped);
    let status = status_counts(s);
    // One dense copy of each histogram, shared by its summary and its encoding.
    let [latency, service, connect, time_to_error]: [Histogram<u64>; 4] =
        [&s.latency, &s.service, &s.connect, &s.time_to_error].map(|h| h.to_histogram());
    let whole = Whole::of(&input);
    // A response a script could not judge (`lua`) is an error, but the server answered.
    let mut warnings = crate::answers::answer_warnings(
        totals.completed + s.errors.counts[herd_metrics::ErrorKind::Lua.index()],
        totals.errors,
        &status,
    );
    warnings.extend(crate::answers::proxy_warning(
        input.config.proxy.as_deref(),
        &status,
    ));
    let (phases, phase_histograms) = crate::phases::of(s, true);
    let mut r = RunResult {
        herd_version: crate::HERD_VERSION.to_owned(),
        schema_version: crate::SCHEMA_VERSION,
        kind: Kind::Run,
        target: input.target,
        config: input.config,
        started_at: rfc3339(input.started_at),
        duration_s,
        interrupted: input.interrupted,
        warmup: Warmup {
            requests: input.warmup_requests,
            duration_s: input.warmup_duration.as_secs_f64(),
        },
        throughput_rps: per_second(s.completed, duration_s),
        warnings,
        status,
        errors: error_counts(s),
        error_samples: s
            .errors
            .iter()
            .filter_map(|(k, _, m)| Some((k.key().to_owned(), m?.to_owned())))
            .collect(),
        latency_ms: summarize_us(&latency),
        service_time_ms: summarize_us(&service),
        connect_ms: summarize_us(&connect),
        phases: Some(phases),
        time_to_error_ms: summarize_us(&time_to_error),
        response_bytes: response_bytes(s),
        generator: finite_generator(input.generator),
        timeline: input
            .timeline
            .iter()
            .map(|sec| timeline_entry(sec, duration_s, whole.holds(sec.index)))
            .collect(),
        histograms: Histograms {
            latency: encode_histogram(&latency),
            service_time: encode_histogram(&service),
            connect: encode_histogram(&connect),
            time_to_error: encode_histogram(&time_to_error),
            phases: Some(phase_histograms),
        },
        totals,
        extra: BTreeMap::new(),
        server: None,
        workload: None,
        by_name: Vec::new(),
        by_scenario: Vec::new(),
        checks: Vec::new(),
        thresholds: Vec::new(),
        timeline_start_unix_s: input
            .started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs()),
        shard: None,
        requests_log: None,
        streams: crate::streams::of(s.stream.as_deref(), duration_s),
        grpc: None,
        websocket: crate::websocket::of(s.ws.as_deref()),
        faults: Vec::new(),
    };
    let seconds = r.timeline.iter().filter_map(|e| e.ws.as_deref());
    r.websocket = crate::websocket::with_backlog(r.websocket.take(), seconds);
    r
}

/// serde_json writes NaN as `null`, which the schema (rightly) rejects; a measurement that could
/// not be taken is reported as 0.
fn finite_generator(mut g: Generator) -> Generator {
    for x in [
        &mut g.cpu_user_s,
        &mut g.cpu_sys_s,
        &mut g.cpu_percent,
        &mut g.send_lag_p99_ms,
    ] {
        if !x.is_finite() || *x < 0.0 {
            *x = 0.0;
        }
    }
    g
}

pub(crate) fn response_bytes(s: &Stats) -> SizeSummary {
    if s.completed == 0 {
        return SizeSummary::default();
    }
    SizeSummary {
        min: s.body_min,
        mean: s.body_sum as f64 / s.completed as f64,
        max: s.body_max,
    }
}

impl RunResult {
    /// The seconds that are samples of the run: whole seconds of load, in order. Results written
    /// before `partial` existed are judged by their length.
    pub fn samples(&self) -> impl Iterator<Item = &TimelineEntry> + Clone {
        self.timeline
            .iter()
            .filter(|e| !e.partial && is_within(e.t, self.duration_s))
    }
}

/// Which seconds of a run are whole seconds of load, and so samples of it.
struct Whole {
    /// The first second that is a sample.
    from: u64,
    /// Seconds ending after this (since the measurement started) are not.
    until_s: f64,
}

impl Whole {
    fn of(input: &RunInput<'_>) -> Whole {
        let measured = input.duration.as_secs_f64();
        let until_s = input
            .offered
            .map_or(measured, |o| o.as_secs_f64().min(measured));
        // In the closed model the warm-up is decided per iteration: the first second misses the
        // answers of iterations begun in the warm-up, so it reads low.
        let warm_edge =
            input.config.model == crate::Model::Closed && !input.warmup_duration.is_zero();
        Whole {
            from: u64::from(warm_edge),
            until_s,
        }
    }

    fn holds(&self, t: u64) -> bool {
        t >= self.from && is_within(t, self.until_s)
    }
}

/// Whether second `t` ends by `run_s`, give or take a millisecond: a run of `-d 4s` lasts
/// 4.0003 s, and its fourth second is whole.
pub(crate) fn is_within(t: u64, run_s: f64) -> bool {
    (t + 1) as f64 <= run_s + 1e-3
}

pub(crate) fn timeline_entry(sec: &Second, run_s: f64, whole: bool) -> TimelineEntry {
    let ms = |us: u64| us as f64 / 1e3;
    let q = |quantile: f64| {
        if sec.latency.is_empty() {
            0.0
        } else {
            ms(sec.latency.value_at_quantile(quantile))
        }
    };
    let requests = sec.requests();
    const CLASSES: [&str; 6] = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];
    TimelineEntry {
        t: sec.index,
        requests,
        ok: sec.ok,
        failed: sec.failed,
        errors: sec.error_total(),
        rps: entry_rate(requests, whole, sec.index, run_s),
        partial: !whole,
        p50_ms: q(0.50),
        p90_ms: q(0.90),
        p99_ms: q(0.99),
        max_ms: if sec.latency.is_empty() {
            0.0
        } else {
            ms(sec.latency.max())
        },
        bytes_received: sec.bytes_received,
        status_class: nonzero(CLASSES.iter().copied().zip(sec.status_class)),
        error_kinds: nonzero(ErrorKind::ALL.iter().map(|k| k.key()).zip(sec.errors)),
        events: sec.events,
        tokens: sec.tokens,
        streams: sec.streams.as_deref().map(crate::second_streams::of_second),
        grpc: sec
            .grpc
            .as_deref()
            .map(|g| g.iter().map(|(k, n)| (k.to_owned(), n)).collect())
            .unwrap_or_default(),
        ws: crate::websocket::second(sec.ws.as_deref()).map(Box::new),
        latency_histogram: sec.latency.histogram().map(encode_histogram),
        faults: Vec::new(),
    }
}

/// A whole second's rate is its count. A partial one (the last half second of a 10.5 s run) is
/// counted over the part inside the run, but never over less than a tenth of a second: one
/// straggler in the last millisecond is not a rate of a thousand per second. Partial seconds are
/// not samples anyway (`RunResult::samples`); the rate says what they held.
pub(crate) fn entry_rate(requests: u64, whole: bool, t: u64, run_s: f64) -> f64 {
    if whole {
        return requests as f64;
    }
    let inside = (run_s - t as f64).min(1.0);
    requests as f64 / if inside >= 0.1 { inside } else { 1.0 }
}

fn nonzero<'k>(pairs: impl Iterator<Item = (&'k str, u64)>) -> BTreeMap<String, u64> {
    pairs
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (k.to_owned(), n))
        .collect()
}

/// The totals of `s`, with `scheduled = completed + errors + dropped` by construction.
pub(crate) fn totals(s: &Stats, dropped: u64) -> Totals {
    let errors = s.errors.total();
    Totals {
        scheduled: s.completed + errors + dropped,
        sent: s.sent,
        completed: s.completed,
        ok: s.ok,
        failed: s.failed,
        errors,
        dropped,
        bytes_sent: s.bytes_sent,
        bytes_received: s.bytes_received,
    }
}

/// Responses by status code, as the JSON keys them.
pub(crate) fn status_counts(s: &Stats) -> BTreeMap<String, u64> {
    s.statuses()
        .map(|(code, n)| (code.to_string(), n))
        .collect()
}

/// Requests with no valid response, by error class.
pub(crate) fn error_counts(s: &Stats) -> BTreeMap<String, u64> {
    s.errors
        .iter()
        .map(|(k, n, _)| (k.key().to_owned(), n))
        .collect()
}

pub(crate) fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// RFC 3339 in UTC to the millisecond: finer digits would claim a precision the start of a run
/// does not have.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    // Always three digits: a timestamp that drops its trailing zeros ("…:20.12Z", "…:00Z")
    // changes width from one run to the next and sorts wrongly as text.
    const MILLIS: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    time::OffsetDateTime::from(t)
        .format(MILLIS)
        .expect("a UTC time after year 0 formats as RFC 3339")
}

/// Stats of one request name over the measured `duration`.
pub fn name_result(name: &str, s: &Stats, duration: Duration) -> NameResult {
    let (phases, phase_histograms) = crate::phases::of(s, false);
    NameResult {
        name: name.to_owned(),
        // Drops happen before a request has a name: they are counted at the top level only.
        totals: totals(s, 0),
        throughput_rps: per_second(s.completed, duration.as_secs_f64()),
        status: status_counts(s),
        errors: error_counts(s),
        latency_ms: summarize_compact(&s.latency),
        service_time_ms: summarize_compact(&s.service),
        time_to_error_ms: summarize_compact(&s.time_to_error),
        response_bytes: response_bytes(s),
        connect_ms: Some(summarize_compact(&s.connect)),
        phases: Some(phases),
        histograms: Some(crate::Histograms {
            latency: encode_histogram(&s.latency.to_histogram()),
            service_time: encode_histogram(&s.service.to_histogram()),
            connect: encode_histogram(&s.connect.to_histogram()),
            time_to_error: encode_histogram(&s.time_to_error.to_histogram()),
            phases: Some(phase_histograms),
        }),
        streams: crate::streams::of(s.stream.as_deref(), duration.as_secs_f64()),
    }
}

/// One scenario's iterations and their durations (microsecond histogram).
pub fn scenario_result(
    name: &str,
    weight: u64,
    iterations: u64,
    durations: &CompactHistogram,
) -> ScenarioResult {
    ScenarioResult {
        name: name.to_owned(),
        weight,
        iterations,
        duration_ms: summarize_us(&durations.to_histogram()),
        duration_histogram: Some(encode_histogram(&durations.to_histogram())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_rfc3339_utc_to_the_millisecond() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_120);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.120Z");
    }

    #[test]
    fn partial_last_second_is_counted_over_its_length() {
        let mut sec = Second::new(10);
        for _ in 0..5 {
            sec.record(&herd_metrics::Outcome::error(
                0,
                Duration::from_millis(1),
                ErrorKind::Reset,
            ));
        }
        assert_eq!(timeline_entry(&sec, 10.5, false).rps, 10.0);
        assert_eq!(timeline_entry(&sec, 10.0, false).rps, 5.0);
        assert_eq!(timeline_entry(&sec, 20.0, true).rps, 5.0);
        let e = timeline_entry(&sec, 20.0, true);
        assert_eq!(e.error_kinds, BTreeMap::from([("reset".to_owned(), 5)]));
        assert!(e.status_class.is_empty());
    }
}
