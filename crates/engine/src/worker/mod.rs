//! The one worker loop: wrk's design, for every run. Each thread waits on its transport's
//! readiness poll and drives every user as a small state machine: no tasks, wakers or futures
//! between the socket and the histogram. Both load models, stages of users and of rates, think
//! times, workload scripts, plain HTTP and TLS all run here; only where a free user's next
//! iteration comes from differs between the models (`begin` in the closed model, the arrival
//! [`open::Dispatch`] in the open one).
//!
//! Every timing rule lives once: the start wait, latency from the intended time and service
//! time from the send, connect time on a new connection, exact request deadlines
//! ([`deadlines`]), think times and stage waits on one timer heap, the stale keep-alive retry,
//! calls per connection, the warm-up, `-n`, the end of the run and its drain, Ctrl-C's grace.
//! Time comes from the transport's [`Clock`](crate::Clock), so all of it is tested on a
//! virtual clock.

mod deadlines;
pub(crate) mod open;
mod record;
mod user;

use crate::generator::ThreadCpu;
use crate::health::ThreadSecond;
use crate::script::{Action, Ctx, Last};
use crate::ticker::{TickState, Ticks};
use crate::{Control, Failure, Load, Plan, RunError, Script, Transport};
use deadlines::Deadlines;
use hdrhistogram::Histogram;
use herd_metrics::{new_histogram, ErrorKind, Recorder, Second};
use open::{Dispatch, Hand, PER_PASS};
use record::{outcome, Span, Tally};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use user::{Resume, State, Step, User};

/// How often a worker closes seconds and measures its own event-loop delay.
pub(crate) const TICK: Duration = Duration::from_millis(10);
/// After Ctrl-C, in-flight requests get this long to finish before they are cut off.
pub(crate) const GRACE: Duration = Duration::from_secs(1);
/// A reused connection idle this long that fails with nothing received is taken to have been
/// closed by the server's keep-alive timeout: the request is retried once on a new one.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);
/// An iteration that sent nothing and paused for nothing is followed by this pause, so a
/// script with nothing to send cannot spin and starve the loop.
const IDLE_ITERATION: Duration = Duration::from_millis(10);
/// A connection the server said it closes is kept this long at most, waiting for its close.
const LINGER: Duration = Duration::from_secs(1);
/// At the end of the run, lingering connections get this long for the server's close.
const END_LINGER: Duration = Duration::from_millis(200);
/// One read takes up to this much: a typical response, head and body, in one system call.
const SCRATCH: usize = 64 * 1024;

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
    /// When this worker saw Ctrl-C.
    pub cancelled_at: Option<Instant>,
}

/// Spreads `total` over `threads` as evenly as possible; thread `k`'s share.
pub(crate) fn share(total: u64, k: usize, threads: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((k as u64) < total % t)
}

/// The open model's arrivals: at `rate`, or following the stages; `-n` counts after the warm-up.
pub(crate) fn open_schedule(plan: &Plan, rate: f64) -> crate::schedule::Schedule {
    use crate::schedule::Schedule;
    if let Some(p) = plan.profile() {
        let warm = p.arrivals_before(plan.warmup);
        return Schedule::staged(p, plan.requests.map(|n| warm + n));
    }
    let end = plan.duration.map(|d| plan.warmup + d);
    if let Some(offsets) = &plan.arrivals {
        let warm = offsets.partition_point(|o| *o < plan.warmup) as u64;
        return Schedule::repeating(
            offsets.clone(),
            plan.arrivals_period,
            end,
            plan.requests.map(|n| warm + n),
        );
    }
    let probe = Schedule::new(rate, None, None);
    let warm = probe.count_before(plan.warmup);
    Schedule::new(rate, end, plan.requests.map(|n| warm + n))
}

struct Loop<'a, T: Transport, S: Script> {
    shared: &'a Shared,
    t: T,
    script: &'a S,
    /// User `u` of this thread has the id `u * threads + k`.
    k: usize,
    threads: usize,
    users: Vec<User<S::User, T::Conn, T::Parser>>,
    scratch: Vec<u8>,
    /// Users to resume from the loop rather than from inside the step that freed them, so a
    /// connection that fails at once cannot spin without the loop ever polling.
    resume: Vec<usize>,
    deadlines: Deadlines,
    /// Think times and stage waits: (when, user, the user's timer generation).
    timers: BinaryHeap<Reverse<(Instant, u32, u32)>>,
    recorder: Recorder,
    start: Instant,
    measure_start: Instant,
    /// The end of the schedule, when the run has one.
    end: Option<Instant>,
    timeout: Duration,
    /// No iteration starts any more (Ctrl-C, or the end of the run).
    stopping: bool,
    cancelled_at: Option<Instant>,
    /// Users not yet done.
    active: usize,
    tally: Tally,
    /// The open model's arrivals; `None` in the closed model.
    open: Option<Dispatch>,
    /// Send lag of the second in progress (open model).
    second_lag: Histogram<u64>,
    /// When the last wait returned.
    woke: Instant,
}

/// Runs worker `k` of `threads` to the end of the plan.
pub(crate) fn work<T: Transport, S: Script>(
    shared: &Shared,
    k: usize,
    threads: usize,
    transport: T,
    script: &S,
    seconds: Option<Sender<Report>>,
) -> Result<WorkerOutput, RunError> {
    let mut events = Vec::with_capacity(1024);
    let mut t = transport;
    // Nothing starts before the run's first instant: a request sent earlier would be neither
    // warm-up nor measurement.
    while t.clock().now() < shared.start {
        wait(&mut t, shared.start, &mut events)?;
        events.clear();
    }
    let now = t.clock().now();
    let cpu0 = ThreadCpu::now();
    let plan = &shared.plan;
    let (n, open) = match plan.load {
        Load::Closed { users } => {
            let n = if plan.profile().is_some() {
                plan.max_stage_users()
            } else {
                plan.share(users)
            };
            (share(n, k, threads) as usize, None)
        }
        Load::Open {
            rate,
            max_connections,
        } => {
            let schedule = open_schedule(plan, rate);
            let cap = share(plan.share_limit(max_connections), k, threads);
            let stripe = plan.shard.clone();
            let mut d =
                Dispatch::new(schedule, shared.start, plan.warmup, k, threads, cap).sharded(stripe);
            // Started late: what was due before now is missed, not sent in a burst.
            d.miss(plan.late);
            (0, Some(d))
        }
    };
    let mut w = Loop {
        shared,
        t,
        script,
        k,
        threads,
        users: Vec::new(),
        scratch: vec![0; SCRATCH],
        resume: (0..n).collect(),
        deadlines: Deadlines::default(),
        timers: BinaryHeap::new(),
        recorder: Recorder::new(plan.names),
        start: shared.start,
        measure_start: shared.start + plan.warmup,
        end: plan.length().map(|l| shared.start + l),
        timeout: plan.timeout,
        stopping: false,
        cancelled_at: None,
        active: 0,
        tally: Tally::default(),
        open,
        second_lag: new_histogram(),
        woke: now,
    };
    for _ in 0..n {
        w.add_user(now);
    }
    let mut ticks = Ticks::new(k, now);
    let mut loop_delay = new_histogram();
    let drain = plan.drain();
    while w.running() {
        // Users to resume (at first, in the closed model, all of them) take their next step
        // before the poll, each at its own instant: opening thousands of connections takes a
        // while.
        for i in std::mem::take(&mut w.resume) {
            let now = w.now();
            w.resume(i, now);
        }
        w.dispatch();
        if !w.running() {
            break;
        }
        let now = w.now();
        let until = if w.resume.is_empty() {
            w.wake(ticks.due(), drain)
        } else {
            now // some failed again at once: poll, then resume them
        };
        wait(&mut w.t, until, &mut events)?;
        w.woke = w.now();
        for ev in events.drain(..) {
            let i = ev.token & 0xffff_ffff;
            let Some(u) = w.users.get_mut(i) else {
                continue;
            };
            if u.link.generation as usize != ev.token >> 32 {
                let now = w.now();
                w.drain_lingering(i, (ev.token >> 32) as u32, now);
                continue;
            }
            if ev.closed {
                u.link.hup = true;
            }
            w.drive(i, ev.readable || ev.closed, ev.writable || ev.closed);
        }
        let now = w.now();
        if let Some(o) = w.open.as_mut() {
            o.woke(now);
        }
        if w.cancelled_at.is_none() && shared.control.is_cancelled() {
            w.cancelled_at = Some(now);
            w.stop();
        }
        w.fire_timers(now);
        w.fire_deadlines(now);
        w.close_queue(now);
        if w.end.is_some_and(|e| now >= e) && !w.stopping {
            // Arrivals meant for before the end, due while the loop waited, still go out.
            w.dispatch();
            w.stop();
        }
        let cut = match (w.cancelled_at, w.end) {
            (Some(c), _) if now >= c + GRACE => Some("in flight when the run was interrupted"),
            (None, Some(e)) if now >= e + drain => {
                Some("still in flight when the run ended: the drain after the duration was over")
            }
            _ => None,
        };
        if let Some(why) = cut {
            w.cut_off(now, why);
        }
        if now >= ticks.due() {
            ticks.tick(
                now,
                TickState {
                    measure_start: w.measure_start,
                    recorder: &mut w.recorder,
                    loop_delay: &mut loop_delay,
                    second_lag: &mut w.second_lag,
                    open_connections: w.tally.open_conns,
                    seconds: seconds.as_ref(),
                },
            );
        }
    }
    for i in 0..w.users.len() {
        w.close(i);
    }
    // Connections the server said it closes get a moment for its close, so the last ones too
    // leave their TIME_WAIT on the server's side.
    let until = w.now() + END_LINGER;
    while w.users.iter().any(|u| u.link.draining.is_some()) && w.now() < until {
        wait(&mut w.t, until, &mut events)?;
        w.woke = w.now();
        for ev in events.drain(..) {
            let i = ev.token & 0xffff_ffff;
            let now = w.now();
            if i < w.users.len() {
                w.drain_lingering(i, (ev.token >> 32) as u32, now);
            }
        }
    }
    for i in 0..w.users.len() {
        if let Some((c, _, _)) = w.users[i].link.draining.take() {
            w.t.close(c);
        }
    }
    let cpu = ThreadCpu::now().since(&cpu0);
    let (dropped, send_lag) = match w.open {
        Some(o) => (o.dropped, o.send_lag),
        // The closed model has no schedule to lag behind.
        None => (0, new_histogram()),
    };
    Ok(WorkerOutput {
        recorder: w.recorder,
        scheduled: w.tally.scheduled + dropped,
        dropped,
        warmup: w.tally.warmup,
        send_lag,
        loop_delay,
        cpu,
        last_done: w.tally.last_done,
        connections_opened: w.tally.opened,
        peak_connections: w.tally.peak_conns,
        cancelled_at: w.cancelled_at,
    })
}

fn wait<T: Transport>(
    t: &mut T,
    until: Instant,
    events: &mut Vec<crate::Event>,
) -> Result<(), RunError> {
    t.wait(until, events)
        .map_err(|f| RunError::Worker(format!("event loop failed: {}", f.message)))
}

impl<T: Transport, S: Script> Loop<'_, T, S> {
    #[inline]
    fn now(&self) -> Instant {
        self.t.clock().now()
    }

    /// Whether the loop goes on: users are still busy, or (open model) arrivals may still come.
    fn running(&self) -> bool {
        self.active > 0 || self.open.as_ref().is_some_and(|o| !o.closed)
    }

    /// When the loop must wake next: the tick, the next arrival, the first deadline, the first
    /// timer, the end of the drain or of Ctrl-C's grace.
    fn wake(&self, tick: Instant, drain: Duration) -> Instant {
        let mut at = tick;
        if let Some(o) = self.open.as_ref().and_then(|o| o.wake(self.end)) {
            at = at.min(o);
        }
        if let Some((_, d)) = self.deadlines.first() {
            at = at.min(d);
        }
        if let Some(Reverse((t, _, _))) = self.timers.peek() {
            at = at.min(*t);
        }
        if let Some(c) = self.cancelled_at {
            at = at.min(c + GRACE);
        } else if let Some(e) = self.end {
            at = at.min(if self.stopping { e + drain } else { e });
        }
        at
    }

    /// User `i` of this thread: its id across the whole run (threads and shards).
    fn user_id(&self, i: usize) -> u64 {
        let local = i as u64 * self.threads as u64 + self.k as u64;
        self.shared.plan.global(local)
    }

    /// Adds a user, not yet connected; returns its index.
    fn add_user(&mut self, now: Instant) -> usize {
        let id = self.user_id(self.users.len());
        let state = self.script.new_user(id);
        self.users.push(User::new(state, now));
        self.active += 1;
        self.users.len() - 1
    }

    /// Takes user `i` on from where it was freed.
    fn resume(&mut self, i: usize, now: Instant) {
        if self.users[i].state != State::Free {
            return;
        }
        match std::mem::replace(&mut self.users[i].resume, Resume::Begin) {
            Resume::Begin => self.begin(i, now),
            Resume::Woke => self.step(i, Last::Woke, now),
            Resume::Failed(f) => self.step(i, Last::Failed(&f), now),
        }
        self.drive(i, false, true);
    }

    /// Starts user `i`'s next iteration at `now` (closed model), parks it until a stage has
    /// room for it, or ends it because the run is over.
    fn begin(&mut self, i: usize, now: Instant) {
        if self.open.is_some() {
            return self.next_arrival(i, now);
        }
        if self.stopping || self.end.is_some_and(|e| now >= e) {
            return self.retire(i);
        }
        if let Some(p) = self.shared.plan.profile() {
            // Stages: this user runs only while the target number of users exceeds its id (its
            // id in the whole run: the shards' users add up to the unsharded plan's).
            let id = self.user_id(i);
            let t = now.saturating_duration_since(self.start);
            if p.value_at(t) < id as f64 + 1.0 {
                match p.next_active(id, t).map(|d| self.start + d) {
                    Some(at) if self.end.is_none_or(|e| at < e) => {
                        self.users[i].resume = Resume::Begin;
                        return self.park(i, at);
                    }
                    _ => return self.retire(i),
                }
            }
        }
        if now >= self.measure_start {
            if let Some(n) = self.shared.plan.requests {
                let n = self.shared.plan.share(n);
                if self.shared.issued.fetch_add(1, Ordering::Relaxed) >= n {
                    return self.retire(i);
                }
            }
        }
        self.iterate(i, now, now);
    }

    /// Open model: user `i` is free; it takes the oldest waiting arrival, waits for one, or
    /// ends.
    fn next_arrival(&mut self, i: usize, now: Instant) {
        let Some(o) = self.open.as_mut() else { return };
        if let Some((g, at)) = o.waiting() {
            self.users[i].arrival = Some(g);
            return self.iterate(i, at, now);
        }
        if o.closed || self.stopping {
            self.retire(i);
        } else {
            self.users[i].state = State::Idle;
            o.idle.push(i);
        }
    }

    /// Starts user `i`'s iteration intended at `intended`, at `now`.
    fn iterate(&mut self, i: usize, intended: Instant, now: Instant) {
        let u = &mut self.users[i];
        u.iteration = intended;
        u.ex.intended = intended;
        u.busy = false;
        self.step(i, Last::Start, now);
    }

    /// Asks user `i`'s script what comes next, and sets it going (the caller drives it).
    fn step(&mut self, i: usize, last: Last<'_>, now: Instant) {
        let measured = self.users[i].iteration >= self.measure_start;
        let ctx = Ctx {
            now,
            measured,
            arrival: self.users[i].arrival,
        };
        let u = &mut self.users[i];
        let action = self.script.next(&mut u.script, last, ctx);
        match action {
            Action::Send(req) => {
                // No request meant for after the end starts; one meant for before it (an
                // arrival the loop hands out a little late) still goes, and the drain waits
                // for it.
                if self.stopping || self.end.is_some_and(|e| u.ex.intended >= e) {
                    // The run is over: no request starts after its end. An arrival taken from
                    // the queue that never left counts as dropped, like those still queued.
                    if let (Last::Start, true, Some(o)) = (last, measured, self.open.as_mut()) {
                        o.dropped += 1;
                    }
                    return self.retire(i);
                }
                u.busy = true;
                self.send(i, req, now);
            }
            Action::Think(d) => {
                u.busy |= !d.is_zero();
                let at = now + d;
                if self.stopping || self.end.is_some_and(|e| at >= e) {
                    // A pause that outlasts the run ends the user's part in it.
                    return self.retire(i);
                }
                u.resume = Resume::Woke;
                // The next request is measured from the end of the pause.
                u.ex.intended = at;
                self.park(i, at);
            }
            Action::Done if !u.busy => {
                u.resume = Resume::Begin;
                self.park(i, now + IDLE_ITERATION);
            }
            Action::Done => self.begin(i, now),
        }
    }

    /// User `i` waits on the timer heap until `at`, then resumes.
    fn park(&mut self, i: usize, at: Instant) {
        let u = &mut self.users[i];
        u.state = State::Waiting;
        u.timer = u.timer.wrapping_add(1);
        self.timers.push(Reverse((at, i as u32, u.timer)));
    }

    /// Resumes every user whose timer is due at `now`.
    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, i, gen))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let i = i as usize;
            let u = &mut self.users[i];
            if u.state != State::Waiting || u.timer != gen {
                continue; // stale
            }
            u.state = State::Free;
            self.resume(i, now);
        }
    }

    /// Starts exchanging `req` for user `i` at `now`.
    fn send(&mut self, i: usize, req: crate::Request, now: Instant) {
        let calls = self.shared.plan.calls_per_conn;
        let u = &mut self.users[i];
        if u.link.hup {
            // The server closed the connection while it sat idle: no use writing to it.
            self.close(i);
        }
        let u = &mut self.users[i];
        u.ex.last_call = calls.is_some_and(|k| u.link.uses + 1 >= k);
        u.ex.req = Some(req);
        u.ex.start = now;
        u.ex.retried = false;
        u.ex.connect = None;
        u.ex.resp.reset();
        self.deadlines.insert(i, now + self.timeout);
        if u.link.conn.is_some() {
            u.ex.stale_candidate = now.saturating_duration_since(u.link.last_used) >= STALE_AFTER;
            u.ex.sent = Some(now);
            u.state = State::Writing(0);
        } else {
            u.ex.stale_candidate = false;
            self.connect(i, now);
        }
    }

    /// Opens a new connection for user `i`; a failure to even start one is recorded at once.
    fn connect(&mut self, i: usize, now: Instant) {
        let u = &mut self.users[i];
        u.ex.sent = None;
        u.ex.connect_start = now;
        u.link.generation = u.link.generation.wrapping_add(1);
        let token = i | ((u.link.generation as usize) << 32);
        match self.t.connect(token) {
            Ok(c) => {
                let u = &mut self.users[i];
                u.link.conn = Some(c);
                u.link.pending.clear();
                u.state = State::Connecting;
            }
            Err(f) => self.fail(i, f),
        }
    }

    /// Advances user `i` as far as its connection allows. `readable`/`writable`: what the event
    /// said (a step that needs the other waits for its own event).
    fn drive(&mut self, i: usize, mut readable: bool, mut writable: bool) {
        loop {
            let step = match self.users[i].state {
                State::Free | State::Waiting | State::Idle | State::Done => return,
                State::Connecting => {
                    if !(readable || writable) {
                        return;
                    }
                    let now = self.now();
                    match user::establish(&mut self.t, &mut self.users[i], now) {
                        Ok(true) => {
                            self.tally.connection_opened();
                            writable = true;
                            continue;
                        }
                        Ok(false) => return,
                        Err(f) => Step::Failed(f),
                    }
                }
                State::Writing(_) => {
                    if !writable {
                        return;
                    }
                    match user::write(&mut self.t, &mut self.users[i]) {
                        Step::Sent => {
                            // The rest of a response already held is read at once; otherwise
                            // its arrival comes as an event.
                            let u = &self.users[i];
                            readable = !u.link.pending.is_empty() || u.link.unread;
                            if !readable {
                                return;
                            }
                            continue;
                        }
                        step => step,
                    }
                }
                State::Reading => {
                    if !readable {
                        if writable {
                            let u = &mut self.users[i];
                            if let Some(c) = u.link.conn.as_mut() {
                                if let Err(f) = self.t.flush(c) {
                                    self.fail(i, f);
                                }
                            }
                        }
                        return;
                    }
                    // The first byte's time to the pass that saw it: a clock read per read
                    // would cost more than the precision is worth.
                    let seen = self.woke;
                    user::read(&mut self.t, &mut self.users[i], &mut self.scratch, seen)
                }
            };
            match step {
                Step::Blocked | Step::Sent => return,
                Step::Failed(f) => return self.fail(i, f),
                Step::Complete => {
                    let now = self.now();
                    self.complete(i, now);
                    if !self.users[i].state.in_flight() {
                        return;
                    }
                    // The next request goes out at once; its response comes as an event.
                    readable = false;
                    writable = true;
                }
            }
        }
    }

    /// Records user `i`'s completed exchange and takes the user on.
    fn complete(&mut self, i: usize, now: Instant) {
        self.deadlines.remove(i);
        let measured = self.users[i].iteration >= self.measure_start;
        let ctx = Ctx {
            now,
            measured,
            arrival: self.users[i].arrival,
        };
        let u = &mut self.users[i];
        u.link.uses += 1;
        u.link.last_used = u.ex.start;
        let Some(req) = u.ex.req.take() else { return };
        let close = !u.ex.resp.keep_alive || u.ex.last_call || u.link.hup;
        let verdict = self.script.judge(&mut u.script, &req, &u.ex.resp, ctx);
        let sent = Some(u.ex.sent.unwrap_or(u.ex.start));
        let span = self.span(i, sent, now);
        let outcome = outcome(&req, &self.users[i].ex.resp, span, Ok(verdict));
        if close {
            let server_closes = !self.users[i].ex.resp.keep_alive && !self.users[i].link.hup;
            if server_closes {
                self.linger(i, now);
            } else {
                self.close(i);
            }
        }
        self.finish(i, now, &outcome);
        let u = &mut self.users[i];
        u.state = State::Free;
        // A think, or the next iteration, is measured from now on.
        u.ex.intended = now;
        let mut resp = std::mem::take(&mut u.ex.resp);
        self.step(i, Last::Response(&resp), now);
        // The response's allocations serve the next exchange: a new one has only been reset so
        // far (the loop drives it after this returns).
        resp.reset();
        self.users[i].ex.resp = resp;
    }

    /// User `i`'s exchange failed: retried once on a new connection when a reused idle
    /// connection turned out closed by the server, else recorded; the user resumes from the
    /// loop.
    fn fail(&mut self, i: usize, f: Failure) {
        self.close(i);
        let now = self.now();
        let u = &mut self.users[i];
        let stale = u.ex.stale_candidate
            && !u.ex.retried
            && u.ex.resp.bytes_received == 0
            && matches!(f.kind, ErrorKind::Eof | ErrorKind::Reset);
        if stale {
            u.ex.retried = true;
            u.ex.stale_candidate = false;
            return self.connect(i, now);
        }
        self.deadlines.remove(i);
        let Some(req) = u.ex.req.take() else { return };
        let span = self.span(i, self.users[i].ex.sent, now);
        let outcome = outcome(&req, &self.users[i].ex.resp, span, Err(f.clone()));
        self.finish(i, now, &outcome);
        let u = &mut self.users[i];
        u.ex.intended = now;
        u.state = State::Free;
        u.resume = Resume::Failed(f);
        self.resume.push(i);
    }

    /// User `i`'s exchange, sent at `sent` and ended at `done`.
    fn span(&self, i: usize, sent: Option<Instant>, done: Instant) -> Span {
        let u = &self.users[i];
        Span {
            measure_start: self.measure_start,
            intended: u.ex.intended,
            sent,
            done,
            connect: u.ex.connect,
        }
    }

    /// Counts user `i`'s outcome, ended at `done`, unless its iteration began in the warm-up.
    fn finish(&mut self, i: usize, done: Instant, outcome: &herd_metrics::Outcome) {
        self.tally.finish(
            self.measure_start,
            self.users[i].iteration,
            done,
            outcome,
            &mut self.recorder,
        );
    }

    fn close(&mut self, i: usize) {
        let u = &mut self.users[i];
        if let Some(c) = u.link.conn.take() {
            if std::mem::take(&mut u.link.connected) {
                self.tally.connection_closed();
            }
            self.t.close(c);
        }
        let u = &mut self.users[i];
        u.link.unread = false;
        u.link.hup = false;
        u.link.pending.clear();
        u.link.connected = false;
        u.link.uses = 0;
    }

    /// The server said it closes user `i`'s connection: wait (briefly) for its close before
    /// closing ours, so the TIME_WAIT lands on the server's side (the side that closes first
    /// keeps it) and the generator's ports stay free at high connection rates, as with ab.
    fn linger(&mut self, i: usize, now: Instant) {
        let u = &mut self.users[i];
        let Some(mut c) = u.link.conn.take() else {
            return;
        };
        if std::mem::take(&mut u.link.connected) {
            self.tally.connection_closed();
        }
        let gen = u.link.generation;
        let closed = matches!(
            self.t.read(&mut c, &mut self.scratch),
            Ok(crate::Io::Closed) | Err(_)
        );
        if let Some((old, _, _)) = u.link.draining.take() {
            self.t.close(old);
        }
        if closed {
            self.t.close(c);
        } else {
            u.link.draining = Some((c, gen, now + LINGER));
        }
        self.close(i);
    }

    /// An event for user `i`'s lingering connection of generation `gen`: closed once the server
    /// closed it.
    fn drain_lingering(&mut self, i: usize, gen: u32, now: Instant) {
        let u = &mut self.users[i];
        let Some((c, g, until)) = u.link.draining.as_mut() else {
            return;
        };
        if *g != gen {
            return;
        }
        let done =
            now >= *until || !matches!(self.t.read(c, &mut self.scratch), Ok(crate::Io::Blocked));
        if done {
            if let Some((c, _, _)) = u.link.draining.take() {
                self.t.close(c);
            }
        }
    }

    /// User `i` takes no more iterations.
    fn retire(&mut self, i: usize) {
        self.deadlines.remove(i);
        self.close(i);
        let u = &mut self.users[i];
        if u.state != State::Done {
            u.state = State::Done;
            self.active -= 1;
        }
    }

    /// No iteration starts any more: users between requests end now, those in flight when
    /// their exchange does.
    fn stop(&mut self) {
        self.stopping = true;
        for i in 0..self.users.len() {
            if matches!(self.users[i].state, State::Waiting | State::Idle) {
                self.retire(i);
            }
        }
        if let Some(o) = self.open.as_mut() {
            o.idle.clear();
        }
    }

    /// Fails every exchange whose deadline has come.
    fn fire_deadlines(&mut self, now: Instant) {
        while let Some((i, at)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.remove(i);
            let connecting = self.users[i].state == State::Connecting;
            let f = if connecting {
                Failure::new(
                    ErrorKind::ConnectTimeout,
                    format!("no connection within {:?}", self.timeout),
                )
            } else {
                Failure::new(
                    ErrorKind::Timeout,
                    format!("no complete response within {:?}", self.timeout),
                )
            };
            self.users[i].ex.stale_candidate = false;
            self.fail(i, f);
        }
    }

    /// Ends every exchange still in flight (the drain after the run, or Ctrl-C's grace, is
    /// over): each is counted as `unfinished`, not lost and not waited for.
    fn cut_off(&mut self, _now: Instant, why: &str) {
        self.stopping = true;
        for i in self.deadlines.all() {
            self.users[i].ex.stale_candidate = false;
            self.fail(i, Failure::new(ErrorKind::Unfinished, why));
        }
        for i in std::mem::take(&mut self.resume) {
            self.retire(i);
        }
        for i in 0..self.users.len() {
            if self.users[i].state != State::Done && !self.users[i].state.in_flight() {
                self.retire(i);
            }
        }
    }

    /// Open model: hands every arrival that is due to a free user, a new one, or the queue (at
    /// most a batch per pass).
    fn dispatch(&mut self) {
        // The closed model, or Ctrl-C: no clock read on every pass of the loop for nothing.
        if self.open.is_none() || self.stopping {
            return;
        }
        for _ in 0..PER_PASS {
            let now = self.now();
            let end = self.end;
            let Some(o) = self.open.as_mut() else {
                return;
            };
            let Some((g, at)) = o.due(now, end) else {
                return;
            };
            let lag = Dispatch::lag(now, at);
            o.send_lag.saturating_record(lag);
            self.second_lag.saturating_record(lag);
            let i = match o.hand(g, at, self.users.len(), now) {
                Hand::Held => continue,
                Hand::Dropped => return,
                Hand::Idle(i) => i,
                Hand::New => self.add_user(now),
            };
            self.users[i].state = State::Free;
            self.users[i].arrival = Some(g);
            self.iterate(i, at, now);
            self.drive(i, false, true);
        }
    }

    /// Open model: closes the queue once the schedule and the run are over, or at Ctrl-C;
    /// idle users end, busy ones when their exchange does.
    fn close_queue(&mut self, now: Instant) {
        let Some(o) = self.open.as_mut() else {
            return;
        };
        if o.closed || !(self.stopping || o.over(now, self.end)) {
            return;
        }
        for i in o.close(self.measure_start, now) {
            self.retire(i);
        }
    }
}
