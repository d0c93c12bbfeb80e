//! What the workers measured, merged into one [`RunOutput`] once they are done: their totals
//! added exactly ([`WorkerTotals::add`]), the measured window, and the generator's view of
//! itself ([`health`]) for its verdict.

use crate::error::RunError;
use crate::generator::{self, Bounds, Health, ThreadCpu};
use crate::health::Watch;
use crate::output::{GeneratorReport, RunOutput};
use crate::worker::{Shared, WorkerOutput};
use crate::{Load, Plan, ProtocolUse, ScriptReport, TlsUse};
use herd_metrics::{CompactHistogram, ErrorKind, Stats, Timeline};
use std::time::{Duration, Instant, SystemTime};

/// The workers' outputs added up.
struct WorkerTotals<R> {
    total: Stats,
    by_name: Vec<Stats>,
    scheduled: u64,
    dropped: u64,
    warmup: u64,
    send_lag: CompactHistogram,
    loop_delay: CompactHistogram,
    cpu: ThreadCpu,
    /// The busiest worker's CPU.
    busiest: Duration,
    opened: u64,
    server_closed: u64,
    /// Each worker's peak of connections open at once, added.
    peak: u64,
    protocols: Vec<ProtocolUse>,
    tls: Vec<TlsUse>,
    last_done: Option<Instant>,
    /// When the first worker saw Ctrl-C.
    cancelled_at: Option<Instant>,
    /// The servers' limit on a connection's streams, when below `--streams`.
    stream_limit: Option<usize>,
    naps: crate::Naps,
    script: R,
}

impl<R: ScriptReport> WorkerTotals<R> {
    fn new() -> Self {
        WorkerTotals {
            total: Stats::default(),
            by_name: Vec::new(),
            scheduled: 0,
            dropped: 0,
            warmup: 0,
            send_lag: CompactHistogram::dense(),
            loop_delay: CompactHistogram::dense(),
            cpu: ThreadCpu::default(),
            busiest: Duration::ZERO,
            opened: 0,
            server_closed: 0,
            peak: 0,
            protocols: Vec::new(),
            tls: Vec::new(),
            last_done: None,
            cancelled_at: None,
            stream_limit: None,
            naps: crate::Naps::default(),
            script: R::default(),
        }
    }

    /// Adds worker output `o` and its script's `report`; its seconds go to `timeline`.
    /// `first`: the first worker's (its totals are taken whole).
    fn add(&mut self, first: bool, o: WorkerOutput, report: R, timeline: &mut Timeline) {
        self.script.merge(report);
        let (t, names, seconds) = o.recorder.finish();
        // The first worker's totals are taken whole: merged into empty ones, each of their
        // dense histograms (~190 KB) would be copied, every page written, at the run's end.
        if first {
            self.total = t;
        } else {
            self.total.merge(&t);
        }
        if self.by_name.is_empty() {
            self.by_name = names;
        } else {
            for (a, b) in self.by_name.iter_mut().zip(names.iter()) {
                a.merge(b);
            }
        }
        for s in seconds {
            timeline.add(s);
        }
        self.scheduled += o.scheduled;
        self.dropped += o.dropped;
        self.warmup += o.warmup;
        self.send_lag.add(&o.send_lag);
        self.loop_delay.add(&o.loop_delay);
        self.cpu.user += o.cpu.user;
        self.cpu.sys += o.cpu.sys;
        self.busiest = self.busiest.max(o.cpu.total());
        self.opened += o.connections_opened;
        self.server_closed += o.server_closed;
        self.peak += o.peak_connections;
        for p in &o.protocols {
            crate::protocols::add_protocol(&mut self.protocols, p);
        }
        for u in &o.tls {
            crate::protocols::count_tls(&mut self.tls, u.negotiated, u.connections);
        }
        self.last_done = self.last_done.max(o.last_done);
        self.stream_limit = self.stream_limit.max(o.stream_limit);
        self.naps.add(&o.naps);
        if let Some(c) = o.cancelled_at {
            self.cancelled_at = Some(self.cancelled_at.map_or(c, |a| a.min(c)));
        }
    }
}

/// Merges the workers' `outputs` (and the seconds and health the collector gathered) into the
/// run's output, `now` being when they were all done.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge<R: ScriptReport>(
    plan: &Plan,
    shared: &Shared,
    now: Instant,
    started_at: SystemTime,
    threads: usize,
    outputs: Vec<(WorkerOutput, R)>,
    mut timeline: Timeline,
    mut watch: Watch,
) -> Result<RunOutput<R>, RunError> {
    let mut w = WorkerTotals::new();
    for (i, (o, report)) in outputs.into_iter().enumerate() {
        w.add(i == 0, o, report, &mut timeline);
    }
    let measure_start = shared.start + plan.warmup;
    let cancelled_at = w.cancelled_at;
    let interrupted = cancelled_at.is_some() || shared.control.is_cancelled();
    // The measured window ends with the schedule, stretched by answers that came in the drain
    // after it (they are counted, so their time is too: throughput is never divided by less
    // time than it took); an interrupted run ends when it was interrupted, not after the grace;
    // one whose every user stopped before the schedule's end (a script's `wrk.thread:stop()`)
    // ends when they stopped: no seconds that never happened. Stages that ramp down to no
    // user end with their own length: the quiet end was planned.
    let scheduled_end = plan.length().map(|l| shared.start + l);
    let end = match (cancelled_at, scheduled_end) {
        (Some(c), Some(e)) => c.min(e.max(w.last_done.unwrap_or(e))),
        (None, Some(e)) if now < e && plan.stages.is_empty() => now,
        (Some(c), None) => c,
        (None, Some(e)) => e.max(w.last_done.unwrap_or(e).min(e + plan.drain())),
        (None, None) => w.last_done.unwrap_or(now),
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
    let cpu_percent = 100.0 * w.cpu.total().as_secs_f64() / (wall * threads as f64);
    let health = health(plan, &w, &watch, wall, threads);
    let verdict = generator::verdict(&health, &Bounds::default());
    let seconds = duration.as_secs_f64().ceil() as u64;
    let health_timeline = watch.finish()?;
    Ok(RunOutput {
        started_at,
        total: w.total,
        by_name: w.by_name,
        timeline: timeline.finish(seconds)?,
        scheduled: w.scheduled,
        dropped: w.dropped,
        warmup_requests: w.warmup,
        duration,
        warmup: cancelled_at.map_or(plan.warmup, |c| {
            c.saturating_duration_since(shared.start).min(plan.warmup)
        }),
        interrupted,
        generator: GeneratorReport {
            threads,
            cpu: w.cpu,
            cpu_percent,
            send_lag: w.send_lag,
            loop_delay: w.loop_delay,
            connections_opened: w.opened,
            server_closed: w.server_closed,
            peak_connections: w.peak,
            protocols: w.protocols,
            tls: w.tls,
            timeline: health_timeline,
            fds_peak: health.fds_peak,
            fd_limit: health.fd_limit,
            ports_peak: watch.ports_peak,
            port_range: health.port_range,
            verdict,
            stream_limit: w.stream_limit,
            naps: w.naps,
        },
        script: w.script,
    })
}

/// What the generator observed of itself over a run that took `wall` seconds on `threads`
/// threads: what its verdict (did herd measure the server, or itself?) is made from.
fn health<R>(plan: &Plan, w: &WorkerTotals<R>, watch: &Watch, wall: f64, threads: usize) -> Health {
    let open_model = matches!(plan.load, Load::Open { .. });
    // A thread's share of a run shorter than a second says little about saturation: connection
    // set-up and start-up dominate it.
    let busy_percent = 100.0 * w.busiest.as_secs_f64() / wall;
    let busiest_percent = if wall >= 1.0 { busy_percent } else { 0.0 };
    // Descriptors are sampled once a second, which a short run's connections slip between;
    // the workers' own count of connections open at once (each thread's peak) is exact, and
    // each thread holds an epoll and a timer besides.
    let fds_peak = match (watch.fds_peak, watch.fds_base) {
        (Some(sampled), Some(base)) => Some(sampled.max(base + 2 * threads as u64 + w.peak)),
        (sampled, _) => sampled,
    };
    Health {
        open_model,
        send_lag_p99: if open_model {
            Duration::from_micros(w.send_lag.value_at_quantile(0.99))
        } else {
            Duration::ZERO
        },
        cpu_percent: busiest_percent,
        busy_percent,
        fd_errors: w.total.error_count(ErrorKind::FdUnavailable),
        addr_errors: w.total.error_count(ErrorKind::AddrUnavailable),
        dropped: w.dropped,
        max_connections: plan.max_connections(),
        fds_peak,
        fd_limit: fd_soft_limit(),
        ports_peak: watch.ports_peak,
        port_range: watch.range.map(|(lo, hi)| u64::from(hi - lo) + 1),
        connections_opened: w.opened,
        server_closed: w.server_closed,
        peak_connections: w.peak,
        wall: Duration::from_secs_f64(wall),
        tw_reuse: watch.tw_reuse,
        // The target's address is the transport's; not known here (see generator::Health).
        loopback: None,
    }
}

fn fd_soft_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0).then_some(rl.rlim_cur)
}
