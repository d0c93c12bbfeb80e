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
mod exchange;
mod exchanges;
mod links;
mod nap;
pub(crate) mod open;
mod place;
mod record;
mod sockets;
mod user;
mod users;

use crate::generator::ThreadCpu;
use crate::session::{Note, Ready, Ticket};
use crate::ticker::{Report, TickState, Ticks};
use crate::{Control, Load, Plan, RunError, Script, Transport};
use deadlines::Deadlines;
use exchanges::Exchanges;
use herd_metrics::{CompactHistogram, Recorder};
use links::Links;
use open::Dispatch;
use record::Tally;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use user::User;

/// After Ctrl-C, in-flight requests get this long to finish before they are cut off.
pub(crate) const GRACE: Duration = Duration::from_secs(1);
/// A request the server did not take (it said it closes, its GOAWAY named a stream below it,
/// it closed under a pipelined tail) goes again on another connection at most this many
/// times; then it fails with the class of the last failure.
pub(crate) const UNSEEN_TRIES: u32 = 8;
/// An iteration that sent nothing and paused for nothing is followed by this pause, so a
/// script with nothing to send cannot spin and starve the loop.
const IDLE_ITERATION: Duration = Duration::from_millis(10);
/// A connection the server said it closes is kept this long at most, waiting for its close.
const LINGER: Duration = Duration::from_secs(1);
/// At the end of the run, lingering connections get this long for the server's close.
const END_LINGER: Duration = Duration::from_millis(200);
/// One read takes up to this much: a typical response, head and body, in one system call.
const SCRATCH: usize = 64 * 1024;

/// State shared by all threads of a run.
pub(crate) struct Shared {
    pub plan: Plan,
    pub control: Arc<Control>,
    /// Where each measured request goes (`--requests-log`), this run's own.
    pub requests_log: Option<Arc<crate::RequestsLog>>,
    /// Iterations handed out so far in the closed model (for `-n`).
    pub issued: AtomicU64,
    /// The run's first instant; the measurement starts after the warm-up.
    pub start: Instant,
    /// What a connection proved the run cannot do ([`crate::Failure::mismatch`]): every worker
    /// stops at once, and the run ends with it as its error.
    pub mismatch: Mismatch,
}

/// The first mismatch a worker found, for every worker to see on its next pass.
#[derive(Default)]
pub(crate) struct Mismatch {
    found: std::sync::atomic::AtomicBool,
    message: std::sync::Mutex<Option<String>>,
}

impl Mismatch {
    fn found(&self, message: &str) {
        let mut m = self.message.lock().unwrap_or_else(|e| e.into_inner());
        m.get_or_insert_with(|| message.to_owned());
        self.found.store(true, std::sync::atomic::Ordering::Release);
    }

    #[inline]
    fn is_found(&self) -> bool {
        self.found.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the first mismatch said, once the workers are done.
    pub(crate) fn take(&self) -> Option<String> {
        self.message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// What one worker hands back.
pub(crate) struct WorkerOutput {
    pub recorder: Recorder,
    pub scheduled: u64,
    pub dropped: u64,
    pub warmup: u64,
    pub send_lag: CompactHistogram,
    pub loop_delay: CompactHistogram,
    pub cpu: ThreadCpu,
    pub last_done: Option<Instant>,
    pub connections_opened: u64,
    /// Connections the server closed first (no TIME_WAIT on herd's side).
    pub server_closed: u64,
    pub peak_connections: u64,
    pub protocols: Vec<crate::ProtocolUse>,
    pub tls: Vec<crate::TlsUse>,
    /// When this worker saw Ctrl-C.
    pub cancelled_at: Option<Instant>,
    /// The servers' limit on a connection's streams, when it was below `--streams`.
    pub stream_limit: Option<usize>,
    pub naps: crate::Naps,
}

/// Spreads `total` over `threads` as evenly as possible; thread `k`'s share.
pub(crate) fn share(total: u64, k: usize, threads: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((k as u64) < total % t)
}

struct Loop<'a, T: Transport, S: Script> {
    shared: &'a Shared,
    t: T,
    script: &'a S,
    /// User `u` of this thread has the id `u * threads + k`.
    k: usize,
    threads: usize,
    users: Vec<User<S::User>>,
    /// The connections, apart from the users.
    links: Links<T::Conn, T::Session>,
    exchanges: Exchanges,
    /// Exchanges waiting for a place on a connection (every one full, the cap reached).
    waiting: VecDeque<Ticket>,
    /// Connections waiting for the server's close: (slot, generation, until), oldest first.
    lingering: VecDeque<(u32, u32, Instant)>,
    /// Connections handed a request since their last pump: (slot, generation).
    kicks: Vec<(u32, u32)>,
    /// What the session being pumped reported (kept for its allocation).
    notes: Vec<Note>,
    /// Most connections this thread opens.
    cap: usize,
    /// Requests in flight on one connection (`--pipeline`).
    window: usize,
    /// Users share connections: a request may go on any connection with room.
    sharing: bool,
    scratch: Vec<u8>,
    /// Users to resume from the loop rather than from inside the step that freed them, so a
    /// connection that fails at once cannot spin without the loop ever polling.
    resume: Vec<usize>,
    deadlines: Deadlines,
    /// Each event stream's wait for its next event (`--event-timeout`), by exchange slot;
    /// beside the request deadlines, which still bound the whole stream.
    event_deadlines: Deadlines,
    event_timeout: Option<Duration>,
    /// Think times and stage waits: (when, user, the user's timer generation).
    timers: BinaryHeap<Reverse<(Instant, u32, u32)>>,
    /// Sessions to pump without an event ([`crate::Session::wake_at`]): (when, slot,
    /// generation).
    wakes: BinaryHeap<Reverse<(Instant, u32, u32)>>,
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
    second_lag: CompactHistogram,
    /// How late the loop's ticks came.
    loop_delay: CompactHistogram,
    /// Where closed seconds go (none in some tests).
    seconds: Option<Sender<Report>>,
    /// When the last wait returned.
    woke: Instant,
    /// Seconds below this one closed with their send backlog noted (`Plan::in_turn`).
    backlog_below: u64,
    /// Lines for `--requests-log`, when the run keeps one.
    requests_log: Option<crate::requests_log::Batch>,
    /// The servers' limit on a connection's exchanges in flight, below the window
    /// ([`crate::Session::limit`]): closed-model users beyond the places it leaves wait in
    /// `sleepers` before their iteration begins.
    limit: Option<usize>,
    /// The last limit learnt, for the result.
    limit_seen: Option<usize>,
    sleepers: Vec<u32>,
    /// Closed-model users not made yet: made as places free, so `--streams 1000000` holds
    /// the users its server's limit lets run, not a million.
    unborn: usize,
    /// Another connection proved the run cannot work as asked: what was in flight is cut off.
    proven: bool,
    /// Each user's own WebSocket, by user ([`crate::SocketRole`]); empty until one opens.
    sockets: Vec<links::LinkRef>,
}

/// What a connection takes until its server says its limit: nghttp2 assumes 100 streams until
/// the server's SETTINGS come, and QUIC servers commonly grant 100 at first (quic-go, Caddy).
const FIRST_PLACES: usize = 100;

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
    let cpu0 = ThreadCpu::now();
    let mut w = Loop::new(shared, k, threads, t, script, seconds);
    let mut ticks = Ticks::new(k, w.woke);
    let drain = shared.plan.drain();
    while w.running() && w.pass(&mut ticks, drain, &mut events)? {}
    w.close(&mut events)?;
    let now = w.now();
    ticks.finish(now, w.tick_state());
    let cpu = ThreadCpu::now().since(&cpu0);
    Ok(w.into_output(cpu))
}

fn wait<T: Transport>(
    t: &mut T,
    until: Instant,
    events: &mut Vec<crate::Event>,
) -> Result<(), RunError> {
    t.wait(until, events)
        .map_err(|f| RunError::Worker(format!("event loop failed: {}", f.message)))
}

impl<'a, T: Transport, S: Script> Loop<'a, T, S> {
    /// Worker `k` of `threads`'s loop, its users added (none yet in the open model).
    fn new(
        shared: &'a Shared,
        k: usize,
        threads: usize,
        t: T,
        script: &'a S,
        seconds: Option<Sender<Report>>,
    ) -> Self {
        let now = t.clock().now();
        let plan = &shared.plan;
        let window = plan.pipeline.max(1);
        let (n, cap, open) = match plan.load {
            Load::Closed { users } => {
                let n = if plan.profile().is_some() {
                    plan.max_stage_users()
                } else {
                    plan.share(users)
                };
                let n = share(n, k, threads) as usize;
                let cap = match plan.connections {
                    Some(c) => (share(plan.share_limit(c), k, threads) as usize).max(1),
                    None => n.div_ceil(window).max(1),
                };
                (n, cap, None)
            }
            Load::Open {
                rate,
                max_connections,
            } => {
                let schedule = plan.open_schedule(rate);
                let cap = share(plan.share_limit(max_connections), k, threads).max(1);
                let stripe = plan.shard.clone();
                // A user has one request in flight: the connections' places bound the users.
                let users = cap * window as u64;
                let mut d = Dispatch::new(schedule, shared.start, plan.warmup, k, threads, users)
                    .sharded(stripe);
                d.in_turn = plan.in_turn;
                // Started late: what was due before now is missed, not sent in a burst.
                d.miss(plan.late);
                (0, cap as usize, Some(d))
            }
        };
        // Until a session says otherwise, a closed-model connection takes the first places a
        // server gives.
        let limit = (open.is_none() && window > FIRST_PLACES).then_some(FIRST_PLACES);
        let mut w = Loop {
            shared,
            t,
            script,
            k,
            threads,
            users: Vec::new(),
            links: Links::default(),
            exchanges: Exchanges::default(),
            waiting: VecDeque::new(),
            lingering: VecDeque::new(),
            kicks: Vec::new(),
            notes: Vec::new(),
            cap,
            window,
            sharing: window > 1 || open.is_none() && cap < n,
            scratch: vec![0; SCRATCH],
            resume: (0..n).collect(),
            deadlines: Deadlines::default(),
            event_deadlines: Deadlines::default(),
            event_timeout: plan.event_timeout,
            timers: BinaryHeap::new(),
            wakes: BinaryHeap::new(),
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
            second_lag: CompactHistogram::dense(),
            loop_delay: CompactHistogram::dense(),
            seconds,
            woke: now,
            backlog_below: 0,
            requests_log: shared
                .requests_log
                .clone()
                .map(|log| crate::requests_log::Batch::new(log, now)),
            limit,
            limit_seen: None,
            sleepers: Vec::new(),
            unborn: 0,
            proven: false,
            sockets: Vec::new(),
        };
        let born = limit.map_or(n, |l| n.min(cap * l));
        for _ in 0..born {
            w.add_user(now);
        }
        w.unborn = n - born;
        w.resume.truncate(born);
        w.active += w.unborn;
        w
    }

    /// One pass of the loop: users resumed, arrivals handed out, one wait, then what it
    /// brought (events, timers, deadlines, the end, the tick). `false`: nothing is left to run.
    fn pass(
        &mut self,
        ticks: &mut Ticks,
        drain: Duration,
        events: &mut Vec<crate::Event>,
    ) -> Result<bool, RunError> {
        // Users to resume (at first, in the closed model, all of them) take their next step
        // before the poll, each at its own instant: opening thousands of connections takes a
        // while.
        for i in std::mem::take(&mut self.resume) {
            let now = self.now();
            self.resume(i, now);
        }
        self.dispatch();
        if !self.running() {
            return Ok(false);
        }
        let now = self.now();
        let until = if self.resume.is_empty() {
            self.wake(ticks.due(), drain)
        } else {
            now // some failed again at once: poll, then resume them
        };
        wait(&mut self.t, until, events)?;
        self.woke = self.now();
        // The first event is taken at the instant the wait returned, without a clock read of
        // its own; the others each at theirs.
        let mut at = Some(self.woke);
        for ev in events.drain(..) {
            let (l, g) = links::untoken(ev.token);
            let ready = Ready {
                readable: ev.readable || ev.closed,
                writable: ev.writable || ev.closed,
                closed: ev.closed,
                timer: false,
            };
            let now = at.take().unwrap_or_else(|| self.t.clock().now());
            self.pump_at(l, g, ready, now);
        }
        let now = self.now();
        if let Some(o) = self.open.as_mut() {
            o.woke(now);
        }
        if self.cancelled_at.is_none() && self.shared.control.is_cancelled() {
            self.cancelled_at = Some(now);
            self.stop();
        }
        if !self.proven && self.shared.mismatch.is_found() {
            self.proven = true;
            // Nothing more goes out: what is in flight would only prove it again.
            self.stop();
            self.cut_off("in flight when another connection proved the run cannot work as asked");
        }
        self.fire_timers(now);
        self.fire_wakes(now);
        self.fire_deadlines(now);
        self.expire_lingering(now);
        self.close_queue(now);
        if self.end.is_some_and(|e| now >= e) && !self.stopping {
            // Arrivals meant for before the end, due while the loop waited, still go out.
            self.dispatch();
            self.stop();
        }
        let cut = match (self.cancelled_at, self.end) {
            (Some(c), _) if now >= c + GRACE => Some("in flight when the run was interrupted"),
            (None, Some(e)) if now >= e + drain => {
                Some("still in flight when the run ended: the drain after the duration was over")
            }
            _ => None,
        };
        if let Some(why) = cut {
            self.cut_off(why);
        }
        if !self.sleepers.is_empty() || self.unborn > 0 {
            self.wake_sleepers(now);
        }
        if now >= ticks.due() {
            if self.limit.is_some() {
                // The servers' limit may have moved (their SETTINGS came after nghttp2's
                // guess, a QUIC credit grew).
                self.learn_limit();
            }
            // A second's lines reach the file about when the second closes, so a crash loses
            // little of them.
            if let Some(log) = self.requests_log.as_mut() {
                log.tick(now);
            }
            // The first tick of a second notes the backlog the second before it closed with
            // (an answer in the new second may have closed it already: it still waits here).
            let at = now.saturating_duration_since(self.measure_start).as_secs();
            if now >= self.measure_start && at > self.backlog_below {
                self.backlog_below = at;
                self.note_backlog(now, at - 1);
            }
            if let Some(nap) = self.tally.nap.due(now, || self.t.effort()) {
                self.tally.naps.saw(nap);
                self.t.coalesce(nap);
            }
            ticks.tick(now, self.tick_state());
        }
        Ok(true)
    }

    /// The run is over: connections the server said it closes get a moment for its close, so
    /// the last ones too leave their TIME_WAIT on the server's side; the others close now.
    fn close(&mut self, events: &mut Vec<crate::Event>) -> Result<(), RunError> {
        for l in 0..self.links.slots.len() {
            let k = &self.links.slots[l];
            if k.conn.is_some() && !k.linger {
                let g = k.generation;
                self.drop_link(l as u32, g);
            }
        }
        let until = self.now() + END_LINGER;
        while self.links.slots.iter().any(|k| k.conn.is_some()) && self.now() < until {
            wait(&mut self.t, until, events)?;
            for ev in events.drain(..) {
                let (l, g) = links::untoken(ev.token);
                let ready = Ready {
                    readable: true,
                    writable: false,
                    closed: ev.closed,
                    timer: false,
                };
                self.pump(l, g, ready);
            }
        }
        for l in 0..self.links.slots.len() {
            let g = self.links.slots[l].generation;
            self.drop_link(l as u32, g);
        }
        Ok(())
    }

    /// What a tick reads and updates of this loop.
    fn tick_state(&mut self) -> TickState<'_> {
        TickState {
            measure_start: self.measure_start,
            recorder: &mut self.recorder,
            loop_delay: &mut self.loop_delay,
            second_lag: &mut self.second_lag,
            open_connections: self.tally.open_conns,
            dropped: self.open.as_ref().map_or(0, |o| o.dropped),
            in_flight: self.exchanges.in_flight(),
            script: self.script,
            seconds: self.seconds.as_ref(),
        }
    }

    /// What this worker hands back, its thread having used `cpu`.
    fn into_output(mut self, cpu: ThreadCpu) -> WorkerOutput {
        if let Some(log) = self.requests_log.take() {
            log.finish();
        }
        let (dropped, send_lag) = match self.open {
            Some(o) => (o.dropped, o.send_lag),
            // The closed model has no schedule to lag behind.
            None => (0, CompactHistogram::dense()),
        };
        WorkerOutput {
            recorder: self.recorder,
            scheduled: self.tally.scheduled + dropped,
            dropped,
            warmup: self.tally.warmup,
            send_lag,
            loop_delay: self.loop_delay,
            cpu,
            last_done: self.tally.last_done,
            connections_opened: self.tally.opened,
            server_closed: self.tally.server_closed,
            peak_connections: self.tally.peak_conns,
            protocols: self.tally.protocols,
            tls: self.tally.tls,
            cancelled_at: self.cancelled_at,
            stream_limit: self.limit_seen,
            naps: self.tally.naps,
        }
    }
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
        if let Some((_, d)) = self.event_deadlines.first() {
            at = at.min(d);
        }
        if let Some(Reverse((t, _, _))) = self.timers.peek() {
            at = at.min(*t);
        }
        if let Some(Reverse((t, _, _))) = self.wakes.peek() {
            at = at.min(*t);
        }
        if let Some(c) = self.cancelled_at {
            at = at.min(c + GRACE);
        } else if let Some(e) = self.end {
            at = at.min(if self.stopping { e + drain } else { e });
        }
        at
    }
}
