//! Starting the worker threads, collecting their seconds while they run, and merging what they
//! measured into one [`RunOutput`].

use crate::generator::{self, Bounds, Health, ThreadCpu};
use crate::health::Watch;
pub use crate::output::{GeneratorReport, Progress, RunOutput};
use crate::share::Shares;
use crate::stream::{self, Record};
use crate::ticker::Report;
use crate::worker::{self, Shared, WorkerOutput};
use crate::{Clock, Control, Load, Plan, PlanError, Script, ScriptReport, Transport};
use herd_metrics::{CompactHistogram, ErrorKind, Stats, Timeline};
use herd_spill::SpillError;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;
use std::time::{Duration, SystemTime};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("the plan cannot run: {0}")]
    Plan(#[from] PlanError),
    #[error("cannot start worker thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("a worker thread failed: {0}")]
    Worker(String),
    #[error(transparent)]
    Spill(#[from] SpillError),
}

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
    control: Arc<Control>,
    progress: impl FnMut(&Progress),
) -> Result<RunOutput<S::Report>, RunError>
where
    T: Transport,
    S: Script,
    MT: Fn(usize) -> Result<T, String> + Sync,
    MS: Fn(usize) -> S + Sync,
{
    plan.validate()?;
    run_threads(plan, clock, control, progress, |shared, k, threads, tx| {
        let transport = make_transport(k).map_err(RunError::Worker)?;
        let script = make_script(k);
        let out = worker::work(shared, k, threads, transport, &script, Some(tx))?;
        Ok((out, script.finish()))
    })
}

/// Starts `plan.effective_threads()` worker threads running `body`, collects their seconds
/// while they run (calling `progress` about once a second), and merges what they measured.
fn run_threads<B, R>(
    plan: &Plan,
    clock: Arc<dyn Clock>,
    control: Arc<Control>,
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
        control,
        issued: AtomicU64::new(0),
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
            let mut timeline = Timeline::default();
            let mut watch = Watch::new(threads);
            let mut ended = 0u64;
            let mut errors = 0u64;
            let measure_start = shared.start + plan.warmup;
            let last_second = plan
                .length()
                .map(|l| l.saturating_sub(plan.warmup).as_secs_f64().ceil() as u64)
                .map_or(u64::MAX, |n| n.saturating_sub(1));
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
                if now >= next_report {
                    next_report = next_progress(now, measure_start);
                    let elapsed = now.saturating_duration_since(measure_start);
                    let over = if now > measure_start {
                        elapsed.as_secs()
                    } else {
                        0
                    };
                    // A second is closed once every worker reported its health for it or a
                    // later one (each sends a second's outcomes before its health); a stalled
                    // worker holds the stream back, and the end of the run hands out the rest.
                    //
                    // The schedule's last second is the end's to hand out: answers of the
                    // drain and the drops at the end fold into it.
                    let closed_below = over.min(watch.reported_below()).min(last_second);
                    let closed: Vec<Record> = (unsent..closed_below)
                        .map(|i| {
                            let second = timeline.get(i).cloned();
                            let health = watch.samples.get(&i).cloned();
                            stream::record(plan, i, second, health, &mut shares, true)
                        })
                        .collect();
                    unsent = unsent.max(closed_below);
                    timeline.spill_below(unsent.saturating_sub(KEPT_S));
                    watch.spill_below(unsent.saturating_sub(KEPT_S));
                    progress(&Progress {
                        elapsed,
                        requests: ended,
                        errors,
                        last: closed.last().map(|r| r.second.clone()),
                        closed,
                        held: timeline.held().max(watch.held()),
                    });
                }
            }
            let mut outs = Vec::with_capacity(threads);
            for h in handles {
                outs.push(
                    h.join()
                        .map_err(|_| RunError::Worker("a worker thread panicked".into()))??,
                );
            }
            Ok((outs, timeline, watch))
        })?;
    let out = merge(
        plan,
        &shared,
        clock.now(),
        started_at,
        threads,
        outputs,
        timeline,
        watch,
    )?;
    progress(&stream::rest(plan, &out, &mut shares, unsent));
    Ok(out)
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

#[allow(clippy::too_many_arguments)]
fn merge<R: ScriptReport>(
    plan: &Plan,
    shared: &Shared,
    now: Instant,
    started_at: SystemTime,
    threads: usize,
    outputs: Vec<(WorkerOutput, R)>,
    mut timeline: Timeline,
    mut watch: Watch,
) -> Result<RunOutput<R>, RunError> {
    let measure_start = shared.start + plan.warmup;
    let mut cancelled_at: Option<Instant> = None;
    let mut total = Stats::default();
    let mut by_name: Vec<Stats> = Vec::new();
    let (mut scheduled, mut dropped, mut warmup) = (0, 0, 0);
    let mut send_lag = CompactHistogram::dense();
    let mut loop_delay = CompactHistogram::dense();
    let mut cpu = ThreadCpu::default();
    let (mut opened, mut peak, mut server_closed) = (0, 0, 0);
    let mut protocols = Vec::new();
    let mut tls = Vec::new();
    let mut busiest = Duration::ZERO;
    let mut last_done: Option<Instant> = None;
    let mut script = R::default();
    for (i, (o, report)) in outputs.into_iter().enumerate() {
        script.merge(report);
        let (t, names, seconds) = o.recorder.finish();
        // The first worker's totals are taken whole: merged into empty ones, each of their
        // dense histograms (~190 KB) would be copied, every page written, at the run's end.
        if i == 0 {
            total = t;
        } else {
            total.merge(&t);
        }
        if by_name.is_empty() {
            by_name = names;
        } else {
            for (a, b) in by_name.iter_mut().zip(names.iter()) {
                a.merge(b);
            }
        }
        for s in seconds {
            timeline.add(s);
        }
        scheduled += o.scheduled;
        dropped += o.dropped;
        warmup += o.warmup;
        send_lag.add(&o.send_lag);
        loop_delay.add(&o.loop_delay);
        cpu.user += o.cpu.user;
        cpu.sys += o.cpu.sys;
        busiest = busiest.max(o.cpu.total());
        opened += o.connections_opened;
        server_closed += o.server_closed;
        peak += o.peak_connections;
        for p in &o.protocols {
            crate::session::add_protocol(&mut protocols, p);
        }
        for u in &o.tls {
            crate::session::count_tls(&mut tls, u.negotiated, u.connections);
        }
        last_done = last_done.max(o.last_done);
        if let Some(c) = o.cancelled_at {
            cancelled_at = Some(cancelled_at.map_or(c, |a: Instant| a.min(c)));
        }
    }
    let interrupted = cancelled_at.is_some() || shared.control.is_cancelled();
    // The measured window ends with the schedule, stretched by answers that came in the drain
    // after it (they are counted, so their time is too: throughput is never divided by less
    // time than it took); an interrupted run ends when it was interrupted, not after the grace;
    // one whose every user stopped before the schedule's end (a script's `wrk.thread:stop()`)
    // ends when they stopped: no seconds that never happened. Stages that ramp down to no
    // user end with their own length: the quiet end was planned.
    let scheduled_end = plan.length().map(|l| shared.start + l);
    let end = match (cancelled_at, scheduled_end) {
        (Some(c), Some(e)) => c.min(e.max(last_done.unwrap_or(e))),
        (None, Some(e)) if now < e && plan.stages.is_empty() => now,
        (Some(c), None) => c,
        (None, Some(e)) => e.max(last_done.unwrap_or(e).min(e + plan.drain())),
        (None, None) => last_done.unwrap_or(now),
    }
    .max(measure_start);
    let duration = end
        .saturating_duration_since(measure_start)
        .max(Duration::from_micros(1));
    // CPU shares use the time the workers really ran, which exceeds the schedule when they
    // fell behind or drained slow responses.
    let wall = (now.max(end).saturating_duration_since(shared.start))
        .as_secs_f64()
        .max(1e-6);
    let cpu_percent = 100.0 * cpu.total().as_secs_f64() / (wall * threads as f64);
    let open_model = matches!(plan.load, Load::Open { .. });
    // A thread's share of a run shorter than a second says little about saturation: connection
    // set-up and start-up dominate it.
    let busy_percent = 100.0 * busiest.as_secs_f64() / wall;
    let busiest_percent = if wall >= 1.0 { busy_percent } else { 0.0 };
    let fd_limit = fd_soft_limit();
    // Descriptors are sampled once a second, which a short run's connections slip between;
    // the workers' own count of connections open at once (each thread's peak) is exact, and
    // each thread holds an epoll and a timer besides.
    let fds_peak = match (watch.fds_peak, watch.fds_base) {
        (Some(sampled), Some(base)) => Some(sampled.max(base + 2 * threads as u64 + peak)),
        (sampled, _) => sampled,
    };
    let port_range = watch.range.map(|(lo, hi)| u64::from(hi - lo) + 1);
    let health = Health {
        open_model,
        send_lag_p99: if open_model {
            Duration::from_micros(send_lag.value_at_quantile(0.99))
        } else {
            Duration::ZERO
        },
        cpu_percent: busiest_percent,
        busy_percent,
        fd_errors: total.error_count(ErrorKind::FdUnavailable),
        addr_errors: total.error_count(ErrorKind::AddrUnavailable),
        dropped,
        max_connections: plan.max_connections(),
        fds_peak,
        fd_limit,
        ports_peak: watch.ports_peak,
        port_range,
        connections_opened: opened,
        server_closed,
        peak_connections: peak,
        wall: Duration::from_secs_f64(wall),
        tw_reuse: watch.tw_reuse,
        // The target's address is the transport's; not known here (see generator::Health).
        loopback: None,
    };
    let verdict = generator::verdict(&health, &Bounds::default());
    let seconds = duration.as_secs_f64().ceil() as u64;
    let health_timeline = watch.finish()?;
    Ok(RunOutput {
        started_at,
        total,
        by_name,
        timeline: timeline.finish(seconds)?,
        scheduled,
        dropped,
        warmup_requests: warmup,
        duration,
        warmup: cancelled_at.map_or(plan.warmup, |c| {
            c.saturating_duration_since(shared.start).min(plan.warmup)
        }),
        interrupted,
        generator: GeneratorReport {
            threads,
            cpu,
            cpu_percent,
            send_lag,
            loop_delay,
            connections_opened: opened,
            server_closed,
            peak_connections: peak,
            protocols,
            tls,
            timeline: health_timeline,
            fds_peak,
            fd_limit,
            ports_peak: watch.ports_peak,
            port_range,
            verdict,
        },
        script,
    })
}

fn fd_soft_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0).then_some(rl.rlim_cur)
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
