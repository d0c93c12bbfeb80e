//! The one stream a run's outputs read: each second of the measurement, once every worker has
//! sent its share, becomes a [`Record`] the collector hands to the caller (the progress line,
//! the JSON written as it goes, a dashboard, a metrics endpoint). Records are built on the
//! collector's thread, never on a worker's.

use crate::health::HealthSample;
use crate::output::{Progress, Record, RunOutput};
use crate::share::Shares;
use crate::stages::Profile;
use crate::{Load, Plan};
use herd_metrics::Second;
use std::time::Duration;

/// Second `index` as the collector holds it: every worker's share merged (`None`: nothing
/// ended in it).
pub(crate) fn record(
    plan: &Plan,
    index: u64,
    second: Option<Second>,
    health: Option<HealthSample>,
    shares: &mut Shares,
    whole: bool,
) -> Record {
    let second = second.unwrap_or_else(|| Second::new(index));
    let (mut load, script) = shares.take(index);
    load.scheduled = second.requests() + load.dropped;
    Record {
        second,
        load,
        script,
        health,
        target: target_at(
            plan,
            Duration::from_secs(index) + Duration::from_millis(500),
        ),
        whole,
    }
}

/// The last report of a run: the seconds from `unsent` on, which closed as the workers ended
/// (the last one cut short unless the measurement lasted whole seconds).
pub(crate) fn rest<R>(
    plan: &Plan,
    out: &RunOutput<R>,
    shares: &mut Shares,
    unsent: u64,
    measure_start: std::time::SystemTime,
) -> Progress {
    let measured = out.duration.as_secs_f64();
    if let Some(last) = out.timeline.last() {
        shares.fold_after(last.index);
    }
    let closed: Vec<Record> = out
        .timeline
        .iter()
        .skip_while(|s| s.index < unsent)
        .map(|s| {
            let health = out.generator.timeline.iter().find(|h| h.t == s.index);
            let whole = (s.index + 1) as f64 <= measured + 1e-9;
            record(
                plan,
                s.index,
                Some(s.clone()),
                health.cloned(),
                shares,
                whole,
            )
        })
        .collect();
    Progress {
        measure_start,
        elapsed: out.duration,
        requests: out.total.ended(),
        errors: out.total.errors.total(),
        last: closed.last().map(|r| r.second.clone()),
        closed,
        // Every second is back in memory now, for the result.
        held: out.timeline.len(),
    }
}

/// What the plan asks for at `t` after the measurement started.
pub fn target_at(plan: &Plan, t: Duration) -> Option<f64> {
    if plan.arrivals.is_some() {
        return None;
    }
    if !plan.stages.is_empty() {
        return Some(Profile::new(&plan.stages).value_at(t + plan.warmup));
    }
    Some(match plan.load {
        Load::Open { rate, .. } => rate,
        Load::Closed { users } => users as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Stage;

    #[test]
    fn the_target_follows_the_stages_after_the_warm_up() {
        let plan = Plan {
            load: Load::Open {
                rate: 10.0,
                max_connections: 5,
            },
            ..Plan::default()
        };
        assert_eq!(target_at(&plan, Duration::from_secs(3)), Some(10.0));
        let ramp = Plan {
            stages: vec![Stage {
                duration: Duration::from_secs(10),
                target: 100.0,
            }],
            warmup: Duration::from_secs(2),
            ..plan
        };
        let at = target_at(&ramp, Duration::from_secs(3)).unwrap();
        assert!((at - 50.0).abs() < 1e-9, "{at}");
    }
}
