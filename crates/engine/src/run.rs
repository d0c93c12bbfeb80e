//! Starting the worker threads, collecting their seconds while they run, and merging what they
//! measured into one [`RunOutput`].

pub use crate::error::RunError;
use crate::health::Watch;
pub use crate::output::{GeneratorReport, Naps, Progress, Record, RunOutput};
use crate::share::Shares;
use crate::stream;
use crate::ticker::Report;
use crate::worker::{self, Shared, WorkerOutput};
use crate::{Clock, Hooks, Plan, Script, ScriptReport, Transport};
use herd_metrics::Timeline;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;
use std::time::{Duration, SystemTime};

/// Seconds the collector keeps in memory after handing them out; older ones (their totals, their
/// sealed percentiles, the generator's health) wait on disk for the end of the run, so a day-long
/// run holds what a five-minute one does. The live outputs keep their own copies of what they show.
pub const KEPT_S: u64 = 300;

/// Runs `plan` on `plan.effective_threads()` threads, each with its own transport and script
/// made by the factories (called on the worker's own thread), on one worker loop. `clock` is the
/// clock the transports wait on (the machine's, or a virtual one in tests). `progress` is
/// called about once a second from the calling thread.
pub fn run<T, S, MT, MS>(
    plan: &Plan,
    clock: Arc<dyn Clock>,
    make_transport: MT,
    make_script: MS,
    hooks: impl Into<Hooks>,
    progress: impl FnMut(&Progress),
) -> Result<RunOutput<S::Report>, RunError>
where
    T: Transport,
    S: Script,
    MT: Fn(usize) -> Result<T, String> + Sync,
    MS: Fn(usize) -> S + Sync,
{
    plan.validate()?;
    run_threads(
        plan,
        clock,
        hooks.into(),
        progress,
        |shared, k, threads, tx| {
            let transport = make_transport(k).map_err(RunError::Worker)?;
            let script = make_script(k);
            let out = worker::work(shared, k, threads, transport, &script, Some(tx))?;
            Ok((out, script.finish()))
        },
    )
}

/// Starts `plan.effective_threads()` worker threads running `body`, collects their seconds
/// while they run (calling `progress` about once a second), and merges what they measured.
fn run_threads<B, R>(
    plan: &Plan,
    clock: Arc<dyn Clock>,
    hooks: Hooks,
    mut progress: impl FnMut(&Progress),
    body: B,
) -> Result<RunOutput<R>, RunError>
where
    B: Fn(&Shared, usize, usize, mpsc::Sender<Report>) -> Result<(WorkerOutput, R), RunError>
        + Sync,
    R: ScriptReport,
{
    let threads = plan.effective_threads();
    let started_at = SystemTime::now();
    let shared = Shared {
        plan: plan.clone(),
        control: hooks.control,
        requests_log: hooks.requests_log,
        issued: AtomicU64::new(0),
        mismatch: Default::default(),
        // A late start (`Plan::late`) puts instant 0 in the past: the rest of the plan keeps
        // its own instants.
        start: {
            let start = clock.now() + Duration::from_millis(5);
            // Only a run with a length can start late; never by more than all of it.
            let late = plan.length().map_or(Duration::ZERO, |l| plan.late.min(l));
            start.checked_sub(late).unwrap_or(start)
        },
    };
    let (tx, rx) = mpsc::channel::<Report>();
    // The first second not yet handed out as a record.
    let mut unsent = 0u64;
    let mut shares = Shares::default();
    let (outputs, timeline, watch) =
        std::thread::scope(|scope| -> Result<Collected<R>, RunError> {
            let mut handles = Vec::with_capacity(threads);
            for k in 0..threads {
                let shared = &shared;
                let tx = tx.clone();
                let body = &body;
                let h = std::thread::Builder::new()
                    .name(format!("herd-worker-{k}"))
                    .spawn_scoped(scope, move || body(shared, k, threads, tx))
                    .map_err(RunError::Thread)?;
                handles.push(h);
            }
            drop(tx);
            let (timeline, watch) = collect(
                plan,
                &*clock,
                &shared,
                threads,
                &rx,
                &mut shares,
                &mut unsent,
                &mut progress,
            );
            let mut outs = Vec::with_capacity(threads);
            for h in handles {
                outs.push(
                    h.join()
                        .map_err(|_| RunError::Worker("a worker thread panicked".into()))??,
                );
            }
            Ok((outs, timeline, watch))
        })?;
    if let Some(why) = shared.mismatch.take() {
        return Err(RunError::Mismatch(why));
    }
    let out = crate::merge::merge(
        plan,
        &shared,
        clock.now(),
        started_at,
        threads,
        outputs,
        timeline,
        watch,
    )?;
    let measure_wall = wall_of(&*clock, shared.start + plan.warmup);
    progress(&stream::rest(plan, &out, &mut shares, unsent, measure_wall));
    Ok(out)
}

/// `at` on the wall clock, through `clock`'s now (a virtual clock's instants map as well).
fn wall_of(clock: &dyn Clock, at: Instant) -> SystemTime {
    let (now, wall) = (clock.now(), SystemTime::now());
    if at >= now {
        wall + (at - now)
    } else {
        wall.checked_sub(now - at).unwrap_or(wall)
    }
}

/// The collector's side while the workers run: their seconds, health samples and shares
/// gathered from `rx` until every worker is done, and closed seconds handed to `progress`
/// about once a second (`unsent`: the first second not yet handed out).
#[allow(clippy::too_many_arguments)]
fn collect(
    plan: &Plan,
    clock: &dyn Clock,
    shared: &Shared,
    threads: usize,
    rx: &mpsc::Receiver<Report>,
    shares: &mut Shares,
    unsent: &mut u64,
    progress: &mut impl FnMut(&Progress),
) -> (Timeline, Watch) {
    let mut timeline = Timeline::default();
    let mut watch = Watch::new(threads);
    let mut ended = 0u64;
    let mut errors = 0u64;
    let measure_start = shared.start + plan.warmup;
    let last_second = plan
        .length()
        .map(|l| l.saturating_sub(plan.warmup).as_secs_f64().ceil() as u64)
        .map_or(u64::MAX, |n| n.saturating_sub(1));
    let measure_wall = wall_of(clock, measure_start);
    let mut next_report = next_progress(clock.now(), measure_start);
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Report::Second(s)) => {
                ended += s.requests();
                errors += s.error_total();
                timeline.add(*s);
            }
            Ok(Report::Health(h)) => watch.add(&h),
            Ok(Report::Share(s)) => shares.add(&s),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = clock.now();
        if now < next_report {
            continue;
        }
        next_report = next_progress(now, measure_start);
        let elapsed = now.saturating_duration_since(measure_start);
        let over = if now > measure_start {
            elapsed.as_secs()
        } else {
            0
        };
        // A second is closed once every worker reported its health for it or a later one
        // (each sends a second's outcomes before its health); a stalled worker holds the
        // stream back, and the end of the run hands out the rest.
        //
        // The schedule's last second is the end's to hand out: answers of the drain and the
        // drops at the end fold into it.
        let closed_below = over.min(watch.reported_below()).min(last_second);
        let closed: Vec<Record> = (*unsent..closed_below)
            .map(|i| {
                let second = timeline.get(i).cloned();
                let health = watch.samples.get(&i).cloned();
                stream::record(plan, i, second, health, shares, true)
            })
            .collect();
        *unsent = (*unsent).max(closed_below);
        timeline.spill_below(unsent.saturating_sub(KEPT_S));
        watch.spill_below(unsent.saturating_sub(KEPT_S));
        progress(&Progress {
            measure_start: measure_wall,
            elapsed,
            requests: ended,
            errors,
            last: closed.last().map(|r| r.second.clone()),
            closed,
            held: timeline.held().max(watch.held()),
        });
    }
    (timeline, watch)
}

/// What the collector holds when the workers are done: each worker's output and script
/// report, the seconds they sent, their health.
type Collected<R> = (Vec<(WorkerOutput, R)>, Timeline, Watch);

/// When the next progress report is due after `now`: once a second, and once measuring, just
/// after each second of the measurement closed, when every worker has had a tick to send its
/// share of it (a report in between would show a second only some workers had counted).
fn next_progress(now: Instant, measure_start: Instant) -> Instant {
    const SETTLE: Duration = Duration::from_millis(50);
    if now < measure_start {
        return (now + Duration::from_secs(1)).min(measure_start + SETTLE);
    }
    let second = (now - measure_start).as_secs() + 1;
    measure_start + Duration::from_secs(second) + SETTLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_comes_just_after_each_measured_second_closes() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // Warm-up of 2.5 s: once a second, then just after the measurement starts.
        let start = t0 + ms(2_500);
        assert_eq!(next_progress(t0, start), t0 + ms(1_000));
        assert_eq!(next_progress(t0 + ms(2_000), start), start + ms(50));
        // Measuring: at 1.05 s, 2.05 s, ... whenever the last report came.
        assert_eq!(next_progress(start + ms(50), start), start + ms(1_050));
        assert_eq!(next_progress(start + ms(1_120), start), start + ms(2_050));
        assert_eq!(next_progress(start + ms(1_990), start), start + ms(2_050));
    }
}
