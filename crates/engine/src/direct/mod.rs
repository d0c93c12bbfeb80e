//! The direct worker: wrk's event loop for the commonest run, one pre-serialized request over
//! plain TCP, in either load model. Each thread polls its sockets (edge-triggered, registered once
//! per connection) and drives every user as a small state machine: no tasks, wakers or futures
//! between the socket and the histogram. A request costs a write, a read and a share of one
//! `epoll_wait`; the response is parsed in place from one scratch buffer per thread, so an idle
//! connection holds no buffer at all.
//!
//! It measures what the async worker measures, with the same rules: latency from the start of
//! the iteration, service time from the send, connect time on a new connection, the request
//! deadline swept by the 10 ms tick, the stale keep-alive retry, the warm-up, `-n`, Ctrl-C's
//! grace; in the open model, the arrival schedule and its queue ([`open`]). Everything else
//! (scripts, TLS, stages of users) runs on the async worker.

mod open;
mod user;

use crate::deadline::Fired;
use crate::generator::ThreadCpu;
use crate::ticker::{TickState, Ticks};
use crate::user::STALE_AFTER;
use crate::user::{outcome, Span};
use crate::worker::Tally;
use crate::worker::{open_schedule, share, Report, Shared, WorkerOutput, GRACE};
use crate::{default_verdict, Codec, Failure, Load, Plan, Request, RunError};
use hdrhistogram::Histogram;
use herd_metrics::{new_histogram, ErrorKind, Outcome, Recorder};
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use open::{Dispatch, Hand};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use user::{State, Step, User};

/// One read takes up to this much: a typical response, head and body, in one system call.
const SCRATCH: usize = 64 * 1024;

/// The open model's alarm; users' tokens are their index and generation (never all ones).
const ALARM: Token = Token(usize::MAX);

/// Whether the direct worker can run `plan`: either load model, but stages of users (a closed
/// model ramping its users up and down) stay on the async worker.
pub(crate) fn supports(plan: &Plan) -> bool {
    match plan.load {
        Load::Closed { .. } => plan.profile().is_none(),
        Load::Open { .. } => true,
    }
}

struct Direct<'a, C: Codec> {
    shared: &'a Shared,
    addr: SocketAddr,
    request: &'a Request,
    codec: &'a C,
    poll: Poll,
    users: Vec<User<C::Parser>>,
    scratch: Vec<u8>,
    /// Users to start again after a failure: from the loop, not from inside the failing step,
    /// so a connection that fails at once cannot spin without the loop ever polling.
    kick: Vec<usize>,
    recorder: Recorder,
    measure_start: Instant,
    end: Option<Instant>,
    timeout: Duration,
    /// No iteration starts any more (Ctrl-C).
    stopping: bool,
    /// Users not yet done.
    active: usize,
    tally: Tally,
    /// The open model's arrivals; `None` in the closed model.
    open: Option<Dispatch>,
    /// Send lag of the second in progress (open model).
    second_lag: Histogram<u64>,
}

/// Runs worker `k` of `threads` to the end of the plan.
pub(crate) fn work<C: Codec>(
    shared: Arc<Shared>,
    k: usize,
    threads: usize,
    addr: SocketAddr,
    request: &Request,
    codec: &C,
    seconds: Option<Sender<Report>>,
) -> Result<WorkerOutput, RunError> {
    // Nothing starts before the run's first instant, as in the async worker.
    let start = shared.start.into_std();
    if let Some(wait) = start.checked_duration_since(Instant::now()) {
        std::thread::sleep(wait);
    }
    let cpu0 = ThreadCpu::now();
    let plan = &shared.plan;
    let poll =
        Poll::new().map_err(|e| RunError::Worker(format!("cannot create an event loop: {e}")))?;
    let (n, open) = match plan.load {
        Load::Closed { users } => (share(users, k, threads) as usize, None),
        Load::Open {
            rate,
            max_connections,
        } => {
            let schedule = open_schedule(plan, rate);
            let cap = share(max_connections, k, threads);
            let mut dispatch = Dispatch::new(schedule, start, k, threads, cap);
            if let Some(alarm) = &dispatch.alarm {
                let fd = alarm.as_raw_fd();
                if poll
                    .registry()
                    .register(&mut SourceFd(&fd), ALARM, Interest::READABLE)
                    .is_err()
                {
                    dispatch.alarm = None; // the poll's millisecond timeout will do
                }
            }
            (0, Some(dispatch))
        }
    };
    let mut d = Direct {
        shared: &shared,
        addr,
        request,
        codec,
        poll,
        users: Vec::new(),
        scratch: vec![0; SCRATCH],
        kick: (0..n).collect(),
        recorder: Recorder::new(plan.names),
        measure_start: start + plan.warmup,
        end: plan.length().map(|l| start + l),
        timeout: plan.timeout,
        stopping: false,
        active: 0,
        tally: Tally::default(),
        open,
        second_lag: new_histogram(),
    };
    for _ in 0..n {
        d.add_user();
    }
    let mut events = Events::with_capacity(1024);
    let mut ticks = Ticks::new(k, start);
    let mut loop_delay = new_histogram();
    let mut cancelled_at: Option<Instant> = None;
    while d.running() {
        // Users to start again (at first, in the closed model, all of them) take their next
        // iteration before the poll, each at its own instant: opening thousands of connections
        // takes a while.
        for i in std::mem::take(&mut d.kick) {
            if d.next(i, Instant::now()) {
                d.drive(i, false, true);
            }
        }
        d.dispatch();
        if !d.running() {
            break;
        }
        let now = Instant::now();
        let mut wake = ticks.due();
        if let Some(at) = d.open.as_mut().and_then(|o| o.wake(now, d.end)) {
            wake = wake.min(at);
        }
        let timeout = if d.kick.is_empty() {
            wake.saturating_duration_since(now)
        } else {
            Duration::ZERO // some failed again at once: poll, then start them again
        };
        match d.poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(RunError::Worker(format!("event loop failed: {e}"))),
        }
        for ev in events.iter() {
            if ev.token() == ALARM {
                if let Some(o) = d.open.as_mut() {
                    o.woke(Instant::now());
                }
                continue;
            }
            let token = ev.token().0;
            let i = token & 0xffff_ffff;
            if d.users[i].generation as usize != token >> 32 {
                continue;
            }
            let failed = ev.is_error();
            if ev.is_read_closed() || failed {
                d.users[i].hup = true;
            }
            let readable = ev.is_readable() || ev.is_read_closed() || failed;
            let writable = ev.is_writable() || ev.is_write_closed() || failed;
            d.drive(i, readable, writable);
        }
        let now = Instant::now();
        if cancelled_at.is_none() && shared.control.is_cancelled() {
            cancelled_at = Some(now);
            d.stopping = true;
        }
        d.close_queue(now);
        if now >= ticks.due() {
            d.sweep(now, cancelled_at.is_some_and(|c| now >= c + GRACE));
            ticks.tick(
                now,
                TickState {
                    measure_start: d.measure_start,
                    recorder: &mut d.recorder,
                    loop_delay: &mut loop_delay,
                    second_lag: &mut d.second_lag,
                    open_connections: d.tally.open_conns,
                    seconds: seconds.as_ref(),
                },
            );
        }
    }
    let cpu = ThreadCpu::now().since(&cpu0);
    let (dropped, send_lag) = match d.open {
        Some(o) => (o.dropped, o.send_lag),
        // The closed model has no schedule to lag behind.
        None => (0, new_histogram()),
    };
    Ok(WorkerOutput {
        recorder: d.recorder,
        scheduled: d.tally.scheduled + dropped,
        dropped,
        warmup: d.tally.warmup,
        send_lag,
        loop_delay,
        cpu,
        last_done: d.tally.last_done,
        connections_opened: d.tally.opened,
        peak_connections: d.tally.peak_conns,
    })
}

impl<C: Codec> Direct<'_, C> {
    /// Whether the loop goes on: users are still busy, or (open model) arrivals may still come.
    fn running(&self) -> bool {
        self.active > 0 || self.open.as_ref().is_some_and(|o| !o.closed)
    }

    /// Adds a user, not yet connected; returns its index.
    fn add_user(&mut self) -> usize {
        let now = Instant::now();
        self.users
            .push(User::new(self.codec.parser(self.request), now));
        self.active += 1;
        self.users.len() - 1
    }

    /// User `i` is free at `now`: it starts its next iteration (returns `true`), waits for an
    /// arrival (open model), or ends because the run is over.
    fn next(&mut self, i: usize, now: Instant) -> bool {
        let Some(o) = self.open.as_mut() else {
            return self.begin(i, now);
        };
        if let Some(at) = o.waiting() {
            self.start(i, at, now);
            return true;
        }
        if o.closed || self.stopping {
            self.retire(i);
        } else {
            self.users[i].state = State::Idle;
            o.idle.push(i);
        }
        false
    }

    /// Open model: hands every arrival that is due to a free user, a new one, or the queue.
    fn dispatch(&mut self) {
        // The closed model, or Ctrl-C: no clock read on every pass of the loop for nothing.
        if self.open.is_none() || self.stopping {
            return;
        }
        let (measure_start, end) = (self.measure_start, self.end);
        loop {
            let now = Instant::now();
            let Some(o) = self.open.as_mut() else {
                return;
            };
            let Some(at) = o.due(now, end, measure_start) else {
                return;
            };
            let lag = Dispatch::lag(now, at);
            o.send_lag.saturating_record(lag);
            self.second_lag.saturating_record(lag);
            let i = match o.hand(at, self.users.len(), measure_start) {
                Hand::Held => continue,
                Hand::Idle(i) => i,
                Hand::New => self.add_user(),
            };
            self.start(i, at, now);
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
        for i in o.close(self.measure_start) {
            self.retire(i);
        }
    }

    /// User `i` takes no more iterations.
    fn retire(&mut self, i: usize) {
        self.close(i);
        self.users[i].state = State::Done;
        self.active -= 1;
    }

    /// Closed model: starts user `i`'s next iteration at `now`, or ends the user when the run
    /// is over; returns whether an iteration started.
    fn begin(&mut self, i: usize, now: Instant) -> bool {
        let over = self.stopping
            || self.shared.control.is_cancelled()
            || self.end.is_some_and(|e| now >= e)
            || (now >= self.measure_start
                && self
                    .shared
                    .plan
                    .requests
                    .is_some_and(|n| self.shared.issued.fetch_add(1, Ordering::Relaxed) >= n));
        if over {
            self.retire(i);
            return false;
        }
        self.start(i, now, now);
        true
    }

    /// Starts user `i`'s iteration intended at `intended`, at `now`.
    fn start(&mut self, i: usize, intended: Instant, now: Instant) {
        if self.users[i].hup {
            // The server closed the connection while it sat idle: no use writing to it.
            self.close(i);
        }
        let u = &mut self.users[i];
        u.intended = intended;
        u.start = now;
        u.deadline = now + self.timeout;
        u.retried = false;
        u.connect = None;
        u.resp.reset();
        if u.sock.is_some() {
            u.stale_candidate = now.saturating_duration_since(u.last_used) >= STALE_AFTER;
            u.sent = Some(now);
            u.state = State::Writing(0);
        } else {
            u.stale_candidate = false;
            self.connect(i, now);
        }
    }

    /// Opens a new connection for user `i`; a failure to even start one is recorded at once.
    fn connect(&mut self, i: usize, now: Instant) {
        let u = &mut self.users[i];
        u.sent = None;
        u.connect_start = now;
        u.generation = u.generation.wrapping_add(1);
        let token = Token(i | ((u.generation as usize) << 32));
        let started = TcpStream::connect(self.addr).and_then(|mut s| {
            self.poll
                .registry()
                .register(&mut s, token, Interest::READABLE | Interest::WRITABLE)
                .map(|()| s)
        });
        match started {
            Ok(s) => {
                u.sock = Some(s);
                u.state = State::Connecting;
            }
            Err(e) => self.fail(i, connect_failure(self.addr, &e)),
        }
    }

    /// Advances user `i` as far as its socket allows. `readable`/`writable`: what the event
    /// said (a step that needs the other waits for its own edge).
    fn drive(&mut self, i: usize, mut readable: bool, mut writable: bool) {
        loop {
            let step = match self.users[i].state {
                State::Idle | State::Done => return,
                State::Connecting => {
                    if !writable {
                        return;
                    }
                    match self.users[i].connected(self.addr) {
                        Ok(true) => {
                            self.tally.connection_opened();
                            continue;
                        }
                        Ok(false) => return,
                        Err(f) => {
                            self.fail(i, f);
                            return;
                        }
                    }
                }
                State::Writing(_) => {
                    if !writable {
                        return;
                    }
                    match self.users[i].write(self.request, self.codec) {
                        Step::Sent => {
                            // The rest of a response already held is read at once; otherwise
                            // its arrival comes as an edge.
                            readable = !self.users[i].pending.is_empty() || self.users[i].unread;
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
                        return;
                    }
                    self.users[i].read(&mut self.scratch)
                }
            };
            match step {
                Step::Blocked | Step::Sent => return,
                Step::Failed(f) => {
                    self.fail(i, f);
                    return;
                }
                Step::Complete => {
                    let now = Instant::now();
                    self.complete(i, now);
                    if !self.next(i, now) {
                        return;
                    }
                    // The next request goes out at once; its response comes as an edge.
                    readable = false;
                    writable = true;
                }
            }
        }
    }

    /// Records user `i`'s completed exchange.
    fn complete(&mut self, i: usize, now: Instant) {
        let u = &mut self.users[i];
        u.uses += 1;
        u.last_used = u.start;
        let spent = self.shared.plan.calls_per_conn.is_some_and(|k| u.uses >= k);
        let close = !u.resp.keep_alive || spent || u.hup;
        let sent = Some(u.sent.unwrap_or(u.start));
        let verdict = default_verdict(&self.users[i].resp);
        let outcome = outcome(
            self.request,
            &self.users[i].resp,
            self.span(i, sent, now),
            Ok(verdict),
        );
        if close {
            self.close(i);
        }
        self.finish(i, now, &outcome);
    }

    /// User `i`'s exchange failed: retried once on a fresh connection when a reused idle
    /// connection turned out closed by the server, else recorded; the user then starts again
    /// from the kick list.
    fn fail(&mut self, i: usize, f: Failure) {
        self.close(i);
        let u = &mut self.users[i];
        let stale = u.stale_candidate
            && !u.retried
            && u.resp.bytes_received == 0
            && matches!(f.kind, ErrorKind::Eof | ErrorKind::Reset);
        if stale {
            u.retried = true;
            u.stale_candidate = false;
            u.pending.clear();
            self.connect(i, Instant::now());
            return;
        }
        u.state = State::Idle;
        u.pending.clear();
        self.kick.push(i);
        let now = Instant::now();
        let outcome = outcome(
            self.request,
            &self.users[i].resp,
            self.span(i, self.users[i].sent, now),
            Err(f),
        );
        self.finish(i, now, &outcome);
    }

    /// User `i`'s exchange, sent at `sent` and ended at `done`, on the engine's clock type.
    fn span(&self, i: usize, sent: Option<Instant>, done: Instant) -> Span {
        let engine = tokio::time::Instant::from_std;
        let u = &self.users[i];
        Span {
            measure_start: engine(self.measure_start),
            intended: engine(u.intended),
            sent: sent.map(engine),
            done: engine(done),
            connect: u.connect,
        }
    }

    /// Counts user `i`'s outcome, ended at `done`, unless its iteration began in the warm-up.
    fn finish(&mut self, i: usize, done: Instant, outcome: &Outcome) {
        let engine = tokio::time::Instant::from_std;
        self.tally.finish(
            engine(self.measure_start),
            engine(self.users[i].intended),
            engine(done),
            outcome,
            &mut self.recorder,
        );
    }

    fn close(&mut self, i: usize) {
        let u = &mut self.users[i];
        // Dropping the socket closes it, which also takes it out of the poll set.
        if u.sock.take().is_some() && std::mem::take(&mut u.connected) {
            self.tally.connection_closed();
        }
        u.unread = false;
        u.hup = false;
    }

    /// Fails every exchange past its deadline, or (`cut_off`: Ctrl-C's grace is over) every
    /// exchange still in flight.
    fn sweep(&mut self, now: Instant, cut_off: bool) {
        for i in 0..self.users.len() {
            let u = &self.users[i];
            let in_flight = matches!(
                u.state,
                State::Connecting | State::Writing(_) | State::Reading
            );
            if !in_flight || (!cut_off && now < u.deadline) {
                continue;
            }
            let why = if cut_off {
                Fired::Interrupted
            } else {
                Fired::Deadline
            };
            let f = why.failure(u.state == State::Connecting, self.timeout);
            self.fail(i, f);
        }
    }
}

fn connect_failure(addr: SocketAddr, e: &io::Error) -> Failure {
    Failure::new(ErrorKind::from_io(e), format!("connect to {addr}: {e}"))
}
