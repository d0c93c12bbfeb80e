//! A log replayed (`herd replay`): read into arrivals and requests (`replay_load`), they
//! become an open-model plan whose arrivals are the lines' offsets (latency measured from each
//! line's own time, so no coordinated omission), a script that sends each arrival's request,
//! and the result's per-type rows beside what the production server took.

use crate::replay_load::{Loaded, Replay, ReplayRead};
use crate::LoadFlags;
use hdrhistogram::Histogram;
use herd_engine::{Action, Ctx, Last, Load, Plan, Request, RunOutput, Script};
use herd_result::RunResult;
use std::sync::Arc;
use std::time::Duration;

/// A replay checked and ready: its arrivals as the engine takes them.
pub(crate) struct Prepared {
    pub replay: Replay,
    /// What reading the logs found besides the arrivals.
    pub read: ReplayRead,
    pub arrivals: Arc<[Duration]>,
    pub period: Option<Duration>,
    pub duration: Duration,
    pub mean_rate: f64,
    pub script: ReplayScript,
}

/// Checks a replay with its flags: something to send, a usable `--rate`.
pub(crate) fn prepare(loaded: Loaded, f: &LoadFlags) -> Result<Prepared, Vec<String>> {
    let Loaded {
        replay: mut r,
        read,
    } = loaded;
    if r.offsets.is_empty() {
        return Err(vec![
            "nothing to replay: no line of the logs passed the filters (see --methods, --include, --exclude, --from, --to)".to_owned(),
        ]);
    }
    let n = r.offsets.len();
    // --rate: the same requests, evenly spaced; otherwise the log's own timing.
    let offsets: Vec<Duration> = match f.rate {
        Some(rate) if rate.is_finite() && rate > 0.0 => (0..n)
            .map(|i| Duration::from_secs_f64(i as f64 / rate))
            .collect(),
        Some(rate) => {
            return Err(vec![format!(
                "--rate {rate} must be a positive number of requests per second"
            )])
        }
        None => r.offsets.clone(),
    };
    let span = offsets.last().copied().unwrap_or_default();
    // --loop: the next round starts one mean gap after the last line, so the rate holds.
    let period = r.repeat.then(|| {
        if n > 1 {
            span + span / (n as u32 - 1).max(1)
        } else {
            Duration::from_secs(1)
        }
    });
    let duration = match (r.repeat, f.duration) {
        (true, Some(d)) => d,
        _ => span + Duration::from_millis(1),
    };
    let mean_rate = n as f64 / period.unwrap_or(duration).as_secs_f64();
    let script = ReplayScript {
        requests: r.requests.clone().into(),
        ids: r.ids.clone().into(),
    };
    // The arrivals are kept once, in `arrivals`.
    r.offsets = Vec::new();
    r.ids = Vec::new();
    Ok(Prepared {
        replay: r,
        read,
        arrivals: offsets.into(),
        period,
        duration,
        mean_rate,
        script,
    })
}

impl Prepared {
    /// The open-model plan of the replay with the flags' cap, threads and deadline.
    pub fn plan(&self, f: &LoadFlags) -> Plan {
        Plan {
            load: Load::Open {
                rate: self.mean_rate,
                max_connections: f.connections.unwrap_or(crate::DEFAULT_OPEN_CAP),
            },
            duration: Some(self.duration),
            requests: None,
            threads: f.threads.unwrap_or(1),
            timeout: f.timeout.unwrap_or(crate::DEFAULT_TIMEOUT),
            event_timeout: f.event_timeout,
            names: self.replay.names.len().max(1),
            arrivals: Some(Arc::clone(&self.arrivals)),
            arrivals_period: self.period,
            ..Plan::default()
        }
    }

    /// Per request type, this run's rows, and the production server's times beside them.
    pub fn add_to(&self, out: &RunOutput, result: &mut RunResult) {
        let names = &self.replay.names;
        result.by_name = if out.by_name.is_empty() {
            vec![herd_result::name_result(
                names.first().map_or("all", String::as_str),
                &out.total,
                out.duration,
            )]
        } else {
            names
                .iter()
                .zip(&out.by_name)
                .map(|(name, s)| herd_result::name_result(name, s, out.duration))
                .collect()
        };
        if self.replay.production.iter().any(Option::is_some) {
            result.extra.insert(
                "replay".to_owned(),
                production_against_now(names, &self.replay.production, out),
            );
        }
        result.workload = Some(self.replay.logs.clone());
    }
}

/// Plays each arrival's own request.
#[derive(Clone)]
pub(crate) struct ReplayScript {
    pub(crate) requests: Arc<[Request]>,
    pub(crate) ids: Arc<[u32]>,
}

impl Script for ReplayScript {
    type User = ();
    type Report = ();

    fn new_user(&self, _id: u64) {}

    fn next(&self, _: &mut (), last: Last<'_>, ctx: Ctx) -> Action {
        match (last, ctx.arrival) {
            (Last::Start, Some(i)) => match self.ids.get((i % self.ids.len() as u64) as usize) {
                Some(&id) => Action::Send(self.requests[id as usize].clone()),
                None => Action::Done,
            },
            _ => Action::Done,
        }
    }
}

/// Per request type, the production server's time taken (from the log) beside this run's
/// service time: p50, p95, max, and the change of p95.
fn production_against_now(
    names: &[String],
    production: &[Option<Histogram<u64>>],
    out: &RunOutput,
) -> serde_json::Value {
    let ms = |us: u64| us as f64 / 1e3;
    let rows: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let prod = production.get(i)?.as_ref()?;
            let now = out.by_name.get(i).unwrap_or(&out.total);
            let (p95_then, p95_now) = (prod.value_at_quantile(0.95), now.service.value_at_quantile(0.95));
            Some(serde_json::json!({
                "name": name,
                "production_ms": {"count": prod.len(), "p50": ms(prod.value_at_quantile(0.5)), "p95": ms(p95_then), "max": ms(prod.max())},
                "now_ms": {"count": now.service.len(), "p50": ms(now.service.value_at_quantile(0.5)), "p95": ms(p95_now), "max": ms(now.service.max())},
                "p95_change": p95_change(p95_then, p95_now),
            }))
        })
        .collect();
    serde_json::json!({ "production_vs_now": rows })
}

/// The p95's change as a share; `None` (JSON null) from a production p95 of 0 to more, which no
/// percentage describes (it once read `+0%` for 0.00 -> 0.23 ms).
pub fn p95_change(then: u64, now: u64) -> Option<f64> {
    match (then, now) {
        (0, 0) => Some(0.0),
        (0, _) => None,
        _ => Some((now as f64 - then as f64) / then as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::p95_change;

    #[test]
    fn a_p95_rising_from_zero_has_no_ratio() {
        assert_eq!(p95_change(0, 230), None);
        assert_eq!(p95_change(0, 0), Some(0.0));
        assert_eq!(p95_change(100, 150), Some(0.5));
        assert_eq!(p95_change(200, 100), Some(-0.5));
    }
}
