//! Faults on a run's timeline (a workload's `faults:`): each window as it was in force on the
//! proxy, its own thresholds judged on the seconds inside it, and the recovery after it.
//!
//! Only whole seconds are samples: a window's thresholds are judged on the timeline's seconds
//! that lie wholly inside it, and recovery is read on the whole seconds that begin at or after
//! its end. The rule of recovery (docs/workload.md, "Faults"):
//! - with the run's thresholds (those not on one request name), the first second after the
//!   fault where every one of them holds on that second's figures;
//! - without, the first second whose p50 is back within 10% (at least 1 ms) of the median
//!   per-second p50 of the whole seconds before the fault, and whose share of requests that
//!   were not OK is at most one point above theirs.
//!
//! The recovery time is from the end of the fault to the start of that second: at the
//! timeline's resolution of one second, so under a second when the first whole second after
//! the fault was already back.

use crate::criteria::Criterion;
pub use crate::fault_window::{FaultWindow, Recovery};
use crate::summary::{Summary, Totals};
use crate::workload::ThresholdResult;
use crate::{decode_histogram, summarize_us, RunResult, TimelineEntry};

/// The slack of the rule without thresholds: 10% of the p50 before the fault, at least 1 ms.
const P50_SLACK: f64 = 0.10;
const P50_SLACK_MIN_MS: f64 = 1.0;
/// Points of not-OK share above the share before the fault that still count as back.
const ERROR_SLACK_POINTS: f64 = 1.0;

/// Whether a second is back to normal, by the rule in force.
type Back<'a> = Box<dyn Fn(&TimelineEntry) -> bool + 'a>;

/// The timeline's whole seconds that lie wholly inside `from .. to` (seconds of the timeline).
pub fn seconds_inside(r: &RunResult, from: f64, to: f64) -> Vec<&TimelineEntry> {
    r.samples()
        .filter(|e| e.t as f64 >= from && e.t as f64 + 1.0 <= to)
        .collect()
}

/// The figures of some seconds together: counts, rate per second, latency (merged from each
/// second's histogram; from the seconds' own percentiles, the worst of them, when a result
/// kept no histograms).
pub fn figures(seconds: &[&TimelineEntry]) -> (Totals, f64, Summary) {
    let mut t = Totals::default();
    for e in seconds {
        t.completed += e.ok + e.failed;
        t.ok += e.ok;
        t.failed += e.failed;
        t.errors += e.errors;
        t.scheduled += e.requests;
        t.sent += e.requests;
        t.bytes_received += e.bytes_received;
    }
    let rps = if seconds.is_empty() {
        0.0
    } else {
        seconds.iter().map(|e| e.rps).sum::<f64>() / seconds.len() as f64
    };
    (t, rps, latency(seconds))
}

fn latency(seconds: &[&TimelineEntry]) -> Summary {
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    let mut whole = true;
    for e in seconds {
        match e.latency_histogram.as_deref().map(decode_histogram) {
            Some(Ok(h)) => match merged.as_mut() {
                Some(m) => whole &= m.add(&h).is_ok(),
                None => merged = Some(h),
            },
            _ if e.ok + e.failed > 0 => whole = false,
            _ => {}
        }
    }
    if let (true, Some(h)) = (whole, merged) {
        return summarize_us(&h);
    }
    let worst = |f: fn(&TimelineEntry) -> f64| seconds.iter().map(|e| f(e)).fold(0.0, f64::max);
    Summary {
        count: seconds.iter().map(|e| e.ok + e.failed).sum(),
        p50: worst(|e| e.p50_ms),
        p75: worst(|e| e.p90_ms),
        p90: worst(|e| e.p90_ms),
        p95: worst(|e| e.p99_ms),
        p99: worst(|e| e.p99_ms),
        p999: worst(|e| e.max_ms),
        max: worst(|e| e.max_ms),
        mean: worst(|e| e.p50_ms),
        ..Summary::default()
    }
}

/// A window's own thresholds on the seconds wholly inside it.
pub fn judge_window(
    r: &RunResult,
    from: f64,
    to: f64,
    criteria: &[Criterion],
) -> Vec<ThresholdResult> {
    let inside = seconds_inside(r, from, to);
    let (totals, rps, lat) = figures(&inside);
    criteria
        .iter()
        .map(|c| {
            let mut judged = c.judge(&totals, rps, &lat);
            if inside.is_empty() {
                judged.pass = false;
                judged.note = Some("no whole second of the run lies inside the window".into());
            }
            judged
        })
        .collect()
}

/// When the run was back after a fault ending at `end` (seconds of the timeline) that began at
/// `start`, by the run's `thresholds` (those on one request name are left out: a second keeps
/// no figures by name) or, without, by the seconds before the fault.
pub fn recovery(r: &RunResult, start: f64, end: f64, thresholds: &[Criterion]) -> Recovery {
    let run_wide: Vec<&Criterion> = thresholds.iter().filter(|c| c.name.is_none()).collect();
    let after = r.samples().filter(|e| e.t as f64 >= end && e.requests > 0);
    let (rule, back): (String, Back) = if !run_wide.is_empty() {
        let texts: Vec<&str> = run_wide.iter().map(|c| c.text.as_str()).collect();
        let rule = format!("the run's thresholds ({})", texts.join(", "));
        let check = move |e: &TimelineEntry| {
            let (t, rps, lat) = figures(&[e]);
            run_wide.iter().all(|c| c.judge(&t, rps, &lat).pass)
        };
        (rule, Box::new(check))
    } else {
        let before: Vec<&TimelineEntry> = r
            .samples()
            .filter(|e| e.t as f64 + 1.0 <= start && e.ok + e.failed > 0)
            .collect();
        if before.is_empty() {
            return Recovery {
                rule: "p50 back near the seconds before the fault".into(),
                note: Some(
                    "no whole second before the fault to compare with: give the run thresholds"
                        .into(),
                ),
                ..Recovery::default()
            };
        }
        let mut p50s: Vec<f64> = before.iter().map(|e| e.p50_ms).collect();
        p50s.sort_by(f64::total_cmp);
        let base = p50s[p50s.len() / 2];
        let base_err = not_ok_percent(&figures(&before).0);
        let limit = base + (base * P50_SLACK).max(P50_SLACK_MIN_MS);
        let rule = format!(
            "p50 within 10% (at least 1 ms) of the {} before the fault, errors at most 1 point above its {:.1}%",
            crate::format::duration_ms(base),
            base_err
        );
        let check = move |e: &TimelineEntry| {
            let (t, _, _) = figures(&[e]);
            e.ok + e.failed > 0
                && e.p50_ms <= limit
                && not_ok_percent(&t) <= base_err + ERROR_SLACK_POINTS
        };
        (rule, Box::new(check))
    };
    for e in after {
        if back(e) {
            return Recovery {
                seconds: Some(((e.t as f64 - end).max(0.0) * 1e3).round() / 1e3),
                second: Some(e.t),
                rule,
                note: None,
            };
        }
    }
    Recovery {
        rule,
        note: Some("not back by the end of the run".into()),
        ..Recovery::default()
    }
}

fn not_ok_percent(t: &Totals) -> f64 {
    let all = t.completed + t.errors;
    if all == 0 {
        0.0
    } else {
        100.0 * (t.failed + t.errors) as f64 / all as f64
    }
}

/// Marks each second of the timeline with the windows in force during part of it, so a reader
/// of the timeline alone (the JSON's seconds, the CSV) sees them where they were.
pub fn mark_timeline(r: &mut RunResult) {
    let faults = &r.faults;
    for e in &mut r.timeline {
        e.faults = in_force(faults, e.t);
    }
}

/// The windows in force during part of second `t` (indices into `faults`).
pub fn in_force(faults: &[FaultWindow], t: u64) -> Vec<usize> {
    let (from, to) = (t as f64, t as f64 + 1.0);
    faults
        .iter()
        .enumerate()
        .filter(|(_, w)| w.start_s < to && w.end_s > from)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(t: u64, p50: f64, errors: u64) -> TimelineEntry {
        TimelineEntry {
            t,
            requests: 100,
            ok: 100 - errors,
            failed: 0,
            errors,
            rps: 100.0,
            partial: false,
            p50_ms: p50,
            p90_ms: p50,
            p99_ms: p50,
            max_ms: p50,
            bytes_received: 0,
            status_class: Default::default(),
            error_kinds: Default::default(),
            events: 0,
            tokens: 0,
            streams: None,
            grpc: Default::default(),
            ws: None,
            latency_histogram: None,
            faults: Vec::new(),
        }
    }

    fn run(p50s: &[f64]) -> RunResult {
        let mut r = crate::fixture::empty_run(p50s.len() as u64);
        r.duration_s = p50s.len() as f64;
        r.timeline = p50s
            .iter()
            .enumerate()
            .map(|(t, p)| second(t as u64, *p, 0))
            .collect();
        r
    }

    #[test]
    fn recovery_is_the_first_second_back_near_the_p50_before_the_fault() {
        // Fault in force 3..6 s; second 6 still slow (requests sent inside), 7 back.
        let r = run(&[1.0, 1.1, 0.9, 200.0, 201.0, 200.0, 50.0, 1.2, 1.0]);
        let rec = recovery(&r, 3.0, 6.0, &[]);
        assert_eq!(rec.second, Some(7));
        assert_eq!(rec.seconds, Some(1.0));
        // A fault that ended inside a second: to the start of the next whole one.
        assert_eq!(recovery(&r, 3.0, 5.75, &[]).seconds, Some(1.25));
        assert!(rec.rule.contains("p50 within 10%"), "{}", rec.rule);
    }

    #[test]
    fn recovery_by_the_run_thresholds_when_it_has_them() {
        let r = run(&[1.0, 1.0, 30.0, 30.0, 8.0, 4.0]);
        let th = crate::Criteria::parse("p50 < 5ms").unwrap().items;
        let rec = recovery(&r, 2.0, 4.0, &th);
        assert_eq!((rec.second, rec.seconds), (Some(5), Some(1.0)));
        assert!(rec.rule.contains("p50 < 5ms"));
    }

    #[test]
    fn no_recovery_when_the_run_ends_first_or_nothing_came_before() {
        let r = run(&[1.0, 100.0, 100.0]);
        assert_eq!(
            recovery(&r, 1.0, 2.0, &[]).note.as_deref(),
            Some("not back by the end of the run")
        );
        let r = run(&[100.0, 1.0]);
        assert!(recovery(&r, 0.0, 1.0, &[])
            .note
            .unwrap()
            .contains("no whole second before"));
    }

    #[test]
    fn window_thresholds_judge_only_the_seconds_wholly_inside() {
        // The window 2.5 .. 5.5 holds seconds 3 and 4 wholly; 2 and 5 are edges.
        let r = run(&[1.0, 1.0, 500.0, 100.0, 120.0, 500.0, 1.0]);
        let th = crate::Criteria::parse("p50 < 150ms").unwrap().items;
        let judged = judge_window(&r, 2.5, 5.5, &th);
        assert!(judged[0].pass, "{judged:?}");
        assert_eq!(judged[0].value, 120.0);
        assert_eq!(in_force(&[window(2.5, 5.5)], 2), vec![0]);
        assert!(in_force(&[window(2.5, 5.5)], 6).is_empty());
    }

    fn window(start_s: f64, end_s: f64) -> FaultWindow {
        FaultWindow {
            proxy: "db".into(),
            toxic: "latency".into(),
            name: "herd_fault_1".into(),
            stream: "downstream".into(),
            attributes: serde_json::json!({"latency": 200}),
            description: "latency 200 ms on db".into(),
            start_s,
            end_s,
            thresholds: vec![],
            recovery: Recovery::default(),
        }
    }
}
