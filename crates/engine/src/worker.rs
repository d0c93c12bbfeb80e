//! One worker thread: its own event loop, users, connections and recorder (wrk's thread model).
//! There is one user loop for both load models; only where arrivals come from differs.

use crate::arrivals::{user_loop, Arrivals};
use crate::deadline::{Fired, Slot};
use crate::generator::ThreadCpu;
use crate::health::ThreadSecond;
use crate::precise::PreciseTimer;
use crate::schedule::Schedule;
use crate::{Control, Load, Plan, Script, Transport};
use hdrhistogram::Histogram;
use herd_metrics::{new_histogram, Outcome, Recorder, Second};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::{sleep_until, Instant};

/// How often a worker wakes to close seconds and measure its own event-loop delay.
pub(crate) const TICK: Duration = Duration::from_millis(10);
/// The dispatcher reaching the end of the run this late gives up handing out the rest of the
/// schedule and counts it as dropped; a little late (a timer tick) it still hands arrivals out.
pub(crate) const BEHIND: Duration = Duration::from_millis(100);
/// The dispatcher wakes at most this often: a wake-up costs more CPU than a request at high
/// rates, and arrivals batched this finely are still sent within a quarter of a millisecond.
pub(crate) const MIN_WAKE: Duration = Duration::from_micros(250);
/// After Ctrl-C, in-flight requests get this long to finish before they are cut off.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// What workers send the collector while they run.
pub(crate) enum Report {
    Second(Second),
    Health(ThreadSecond),
}

/// State shared by all threads of a run.
pub(crate) struct Shared {
    pub plan: Plan,
    pub control: Arc<Control>,
    /// Iterations handed out so far in the closed model (for `-n`).
    pub issued: AtomicU64,
    /// The run's first instant; the measurement starts after the warm-up.
    pub start: Instant,
    /// Wait for arrivals on a timerfd (real runs) rather than tokio's millisecond timer (which
    /// paused-clock tests need).
    pub precise: bool,
}

/// State shared by the tasks of one worker thread. Single-threaded: cells, no locks.
pub(crate) struct Local<T: Transport> {
    pub transport: T,
    pub timeout: Duration,
    pub calls_per_conn: Option<u64>,
    pub measure_start: Instant,
    pub recorder: RefCell<Recorder>,
    pub in_flight: Cell<u64>,
    /// Every user's deadline slot, swept by the ticker.
    slots: RefCell<Vec<Rc<Slot>>>,
    pub(crate) loop_delay: RefCell<Histogram<u64>>,
    /// Send lag of the second in progress (open model), for the per-second health sample.
    pub(crate) second_lag: RefCell<Histogram<u64>>,
    pub(crate) control: Arc<Control>,
    pub(crate) tally: RefCell<Tally>,
    // open model: arrivals waiting for a free user
    pub(crate) queue: RefCell<VecDeque<Instant>>,
    pub(crate) idle: Cell<u64>,
    /// Arrivals handed to a user (woken, or spawned for it) that no user has taken yet.
    pub(crate) handed: Cell<u64>,
    pub(crate) wake: Notify,
    pub(crate) closed: Cell<bool>,
}

/// What a worker counts besides its recorder, kept the same way by both workers: the warm-up
/// rule and the connection counts.
#[derive(Default)]
pub(crate) struct Tally {
    /// Measured outcomes.
    pub scheduled: u64,
    /// Outcomes of iterations intended during the warm-up.
    pub warmup: u64,
    pub last_done: Option<Instant>,
    pub open_conns: u64,
    pub peak_conns: u64,
    pub opened: u64,
}

impl Tally {
    /// Records `outcome` of an iteration intended at `intended`, unless the warm-up was still on
    /// then: whether outcomes count is decided once per iteration, never split across the line.
    pub fn finish(
        &mut self,
        measure_start: Instant,
        intended: Instant,
        done: Instant,
        outcome: &Outcome,
        recorder: &mut Recorder,
    ) {
        if intended < measure_start {
            self.warmup += 1;
            return;
        }
        self.scheduled += 1;
        self.last_done = Some(done);
        recorder.record(outcome);
    }

    pub fn connection_opened(&mut self) {
        self.opened += 1;
        self.open_conns += 1;
        self.peak_conns = self.peak_conns.max(self.open_conns);
    }

    pub fn connection_closed(&mut self) {
        self.open_conns = self.open_conns.saturating_sub(1);
    }
}

impl<T: Transport> Local<T> {
    pub fn finish(&self, intended: Instant, done: Instant, outcome: &Outcome) {
        self.tally.borrow_mut().finish(
            self.measure_start,
            intended,
            done,
            outcome,
            &mut self.recorder.borrow_mut(),
        );
    }

    pub fn register_slot(&self) -> Rc<Slot> {
        let slot = Rc::new(Slot::default());
        self.slots.borrow_mut().push(Rc::clone(&slot));
        slot
    }

    pub(crate) fn sweep(&self, now: Instant, why: Fired) {
        for slot in self.slots.borrow().iter() {
            slot.sweep(now, why);
        }
    }

    pub fn connection_opened(&self) {
        self.tally.borrow_mut().connection_opened();
    }

    pub fn connection_closed(&self) {
        self.tally.borrow_mut().connection_closed();
    }
}

/// What one worker hands back.
pub(crate) struct WorkerOutput {
    pub recorder: Recorder,
    pub scheduled: u64,
    pub dropped: u64,
    pub warmup: u64,
    pub send_lag: Histogram<u64>,
    pub loop_delay: Histogram<u64>,
    pub cpu: ThreadCpu,
    pub last_done: Option<Instant>,
    pub connections_opened: u64,
    pub peak_connections: u64,
}

/// Spreads `total` over `threads` as evenly as possible; thread `k`'s share.
pub(crate) fn share(total: u64, k: usize, threads: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((k as u64) < total % t)
}

/// Runs worker `k` of `threads` to the end of the plan.
pub(crate) async fn work<T: Transport, S: Script>(
    shared: Arc<Shared>,
    k: usize,
    threads: usize,
    transport: T,
    script: S,
    seconds: Option<Sender<Report>>,
) -> WorkerOutput {
    // Nothing starts before the run's first instant: a request sent earlier would be neither
    // warm-up nor measurement.
    sleep_until(shared.start).await;
    let cpu0 = ThreadCpu::now();
    let plan = &shared.plan;
    let measure_start = shared.start + plan.warmup;
    let end = plan.length().map(|l| shared.start + l);
    let local = Rc::new(Local {
        transport,
        timeout: plan.timeout,
        calls_per_conn: plan.calls_per_conn,
        measure_start,
        recorder: RefCell::new(Recorder::new(plan.names)),
        in_flight: Cell::new(0),
        slots: RefCell::new(Vec::new()),
        loop_delay: RefCell::new(new_histogram()),
        second_lag: RefCell::new(new_histogram()),
        control: Arc::clone(&shared.control),
        tally: RefCell::default(),
        queue: RefCell::new(VecDeque::new()),
        idle: Cell::new(0),
        handed: Cell::new(0),
        wake: Notify::new(),
        closed: Cell::new(false),
    });
    let script = Rc::new(script);
    let mut users = JoinSet::new();
    let mut send_lag = new_histogram();
    // Arrivals dropped without ever being queued (see the queue bound).
    let mut overflow = 0u64;

    let ticker = crate::ticker::spawn(Rc::clone(&local), k, seconds);

    let arrivals = match plan.load {
        Load::Closed { users: n } => {
            let profile = plan.profile();
            let n = if profile.is_some() {
                plan.max_stage_users()
            } else {
                n
            };
            let arrivals = Rc::new(Arrivals::Closed {
                end,
                limit: plan.requests,
                profile,
            });
            for u in 0..share(n, k, threads) {
                let id = (u * threads as u64) + k as u64;
                users.spawn_local(user_loop(
                    Rc::clone(&local),
                    Rc::clone(&script),
                    Rc::clone(&arrivals),
                    Arc::clone(&shared),
                    id,
                ));
            }
            arrivals
        }
        Load::Open {
            rate,
            max_connections,
        } => {
            let arrivals = Rc::new(Arrivals::Open);
            let cap = share(max_connections, k, threads).max(1);
            let schedule = open_schedule(plan, rate);
            let mut spawned = 0u64;
            let mut index = k as u64;
            let control = Arc::clone(&shared.control);
            // Arrivals waiting for a free connection are bounded: past this, an arrival can only
            // be dropped, and it is counted so at once rather than held in memory.
            let queue_bound = (cap * 64).max(10_000) as usize;
            let mut burst = 0u32;
            let mut last_wake = Instant::now();
            let timer = if shared.precise {
                PreciseTimer::new()
            } else {
                None
            };
            while let Some(offset) = schedule.at(index) {
                let at = shared.start + offset;
                let now = Instant::now();
                if now < at {
                    burst = 0;
                    // Exact for rates below one wake per MIN_WAKE; above, arrivals are handed out
                    // in batches at most MIN_WAKE late, each keeping its own intended time.
                    let wake = at.max(last_wake + MIN_WAKE);
                    let wait = async {
                        match &timer {
                            Some(t) => t.sleep_until(wake).await,
                            None => sleep_until(wake).await,
                        }
                    };
                    tokio::select! {
                        biased;
                        _ = control.cancelled() => break,
                        _ = wait => {}
                    }
                    last_wake = Instant::now();
                } else {
                    // Behind schedule: let the users run between batches, or they starve.
                    burst += 1;
                    if burst.is_multiple_of(64) {
                        tokio::task::yield_now().await;
                        if control.is_cancelled() {
                            break;
                        }
                    }
                    if end.is_some_and(|e| now >= e + BEHIND) {
                        // So far behind that the run is over: the rest can only be dropped.
                        while let Some(offset) = schedule.at(index) {
                            if shared.start + offset >= measure_start {
                                overflow += 1;
                            }
                            index += threads as u64;
                        }
                        break;
                    }
                }
                // Wakes are coarse (the timer ticks in milliseconds): hand out every arrival that
                // is due, each keeping its own intended time.
                let lag = at.elapsed().as_micros() as u64;
                send_lag.saturating_record(lag);
                local.second_lag.borrow_mut().saturating_record(lag);
                index += threads as u64;
                if local.queue.borrow().len() >= queue_bound {
                    if at >= measure_start {
                        overflow += 1;
                    }
                    continue;
                }
                local.queue.borrow_mut().push_back(at);
                if local.idle.get() > 0 {
                    local.idle.set(local.idle.get() - 1);
                    local.handed.set(local.handed.get() + 1);
                    local.wake.notify_one();
                } else if spawned < cap {
                    let id = spawned * threads as u64 + k as u64;
                    spawned += 1;
                    local.handed.set(local.handed.get() + 1);
                    users.spawn_local(user_loop(
                        Rc::clone(&local),
                        Rc::clone(&script),
                        Rc::clone(&arrivals),
                        Arc::clone(&shared),
                        id,
                    ));
                }
            }
            if let Some(end) = end {
                tokio::select! {
                    biased;
                    _ = control.cancelled() => {}
                    _ = sleep_until(end) => {}
                }
            }
            arrivals
        }
    };
    let _ = arrivals;

    // The schedule is over (or Ctrl-C): what never left the queue was dropped.
    // Users already handed an arrival (woken, or just spawned) take it before the queue closes:
    // an arrival is dropped for want of a connection, never because the end came before a
    // user that was free got to run.
    for _ in 0..1024 {
        if local.handed.get() == 0 || local.queue.borrow().is_empty() {
            break;
        }
        tokio::task::yield_now().await;
    }
    let dropped = overflow + end_queue(&local, end.is_some() || shared.control.is_cancelled());
    drain(&local, &mut users, &shared.control).await;
    ticker.abort();
    let _ = ticker.await;
    let cpu = ThreadCpu::now().since(&cpu0);
    let Local {
        recorder,
        tally,
        loop_delay,
        ..
    } = match Rc::try_unwrap(local) {
        Ok(l) => l,
        Err(_) => unreachable!("every user task has ended"),
    };
    let tally = tally.into_inner();
    WorkerOutput {
        recorder: recorder.into_inner(),
        scheduled: tally.scheduled + dropped,
        dropped,
        warmup: tally.warmup,
        send_lag,
        loop_delay: loop_delay.into_inner(),
        cpu,
        last_done: tally.last_done,
        connections_opened: tally.opened,
        peak_connections: tally.peak_conns,
    }
}

/// The open model's arrivals: at `rate`, or following the stages; `-n` counts after the warm-up.
pub(crate) fn open_schedule(plan: &Plan, rate: f64) -> Schedule {
    if let Some(p) = plan.profile() {
        let warm = p.arrivals_before(plan.warmup);
        return Schedule::staged(p, plan.requests.map(|n| warm + n));
    }
    let probe = Schedule::new(rate, None, None);
    let warm = probe.count_before(plan.warmup);
    let end = plan.duration.map(|d| plan.warmup + d);
    Schedule::new(rate, end, plan.requests.map(|n| warm + n))
}

/// Closes the open-model queue. With a duration, arrivals still waiting at the end are dropped
/// (counted, never silently lost); with only a request count, users drain the queue first.
fn end_queue<T: Transport>(local: &Local<T>, drop_waiting: bool) -> u64 {
    let dropped = if drop_waiting {
        let mut q = local.queue.borrow_mut();
        let n = q.iter().filter(|at| **at >= local.measure_start).count() as u64;
        q.clear();
        n
    } else {
        0
    };
    local.closed.set(true);
    local.idle.set(0);
    local.wake.notify_waiters();
    dropped
}

/// Waits for users to finish their last exchange (bounded by the request timeout); after Ctrl-C,
/// gives in-flight requests a short grace, then cuts them off, recording them as interrupted.
async fn drain<T: Transport>(local: &Rc<Local<T>>, users: &mut JoinSet<()>, control: &Control) {
    let all_done = async { while users.join_next().await.is_some() {} };
    tokio::pin!(all_done);
    tokio::select! {
        _ = &mut all_done => return,
        _ = control.cancelled() => {}
    }
    local.closed.set(true);
    local.wake.notify_waiters();
    if tokio::time::timeout(GRACE, &mut all_done).await.is_err() {
        local.sweep(Instant::now(), Fired::Interrupted);
        all_done.await;
    }
}
