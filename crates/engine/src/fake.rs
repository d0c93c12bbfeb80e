//! A fake transport on a virtual clock, for testing the loop (and scripts on it) exactly: no
//! sockets, no sleeps, no luck. Time moves only when the loop waits, straight to the next thing
//! that happens; a server is a function from (time, request number on the connection) to a
//! [`Reply`]. The stop-the-server experiment of wrk2 runs on it in virtual time.
//!
//! Responses on the fake wire are one line, `STATUS\n` (`STATUS close\n` when the server closes
//! the connection after it), read by [`FakeParser`] in an [`Ordered`] session. Requests written
//! together (a pipeline) are told apart by the blank line that ends each head, and answered in
//! order, one after the other, as an HTTP/1.1 server does.

use crate::{Clock, Event, Failure, Io, Ordered, Parse, Request, Response, Transport};
use herd_metrics::ErrorKind;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A clock that moves only when told.
#[derive(Debug)]
pub struct VirtualClock {
    base: Instant,
    nanos: AtomicU64,
}

impl VirtualClock {
    pub fn new() -> Arc<VirtualClock> {
        Arc::new(VirtualClock {
            base: Instant::now(),
            nanos: AtomicU64::new(0),
        })
    }

    /// Moves the clock to `t` (never backwards).
    pub fn advance_to(&self, t: Instant) {
        let n = t.saturating_duration_since(self.base).as_nanos() as u64;
        self.nanos.fetch_max(n, Ordering::SeqCst);
    }

    /// Time since the clock was made.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.base + self.elapsed()
    }
}

/// What the fake server does with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Answers with this status after this long.
    After(Duration, u16),
    /// Fails the exchange after this long: `Reset` resets the connection, anything else closes
    /// it (an `eof` for the client).
    Fail(Duration, ErrorKind),
    /// Answers with this status after this long, then closes the connection (nginx after
    /// `keepalive_requests`): requests after it on the connection are never acted on.
    Closing(Duration, u16),
    /// Never answers.
    Hang,
}

type Behave = dyn Fn(Duration, u64) -> Reply + Send + Sync;

/// The fake server: how it behaves and what it saw. Clones share the clock and the counts.
#[derive(Clone)]
pub struct FakeServer {
    pub clock: Arc<VirtualClock>,
    behave: Arc<Behave>,
    /// While the server is "stopped" (SIGSTOP) over this window, nothing it handles finishes
    /// before the window ends.
    pub stopped: Option<(Duration, Duration)>,
    /// Connections are refused.
    pub refuse: bool,
    /// Time to open a connection.
    pub connect_time: Duration,
    /// A TLS handshake of this long after the connection is up (`None`: plain connections).
    pub tls_time: Option<Duration>,
    pub connects: Arc<AtomicU64>,
    /// Requests received, acted on or not (after a close it announced, the server acts on none).
    pub exchanges: Arc<AtomicU64>,
    /// Writes the generator made (each a system call and a TCP segment on a real socket).
    pub writes: Arc<AtomicU64>,
    /// Pumps that found a connection writable and nothing of its own to write (each one the
    /// loop's work for nothing, a pipeline's batch submitted request by request).
    pub flushes: Arc<AtomicU64>,
    /// Requests received, as text, when `keep_requests` is set.
    pub keep_requests: bool,
    pub requests: Arc<Mutex<Vec<String>>>,
    /// Ctrl-C at this time (a user pressing it mid-run, in virtual time).
    pub cancel_at: Option<(Duration, Arc<crate::Control>)>,
    /// What one pass of the loop costs: every wait moves the clock at least this far, as the
    /// loop's own work would, so a loop that never waits for anything still sees time pass.
    pub pass_cost: Duration,
    /// Every nap the loop set ([`Transport::coalesce`]), in order.
    pub naps: Arc<Mutex<Vec<Duration>>>,
}

impl FakeServer {
    /// `behave(t, n)`: the reply to the `n`th request (from 1) of a connection, received at `t`
    /// since the clock's start.
    pub fn new(behave: impl Fn(Duration, u64) -> Reply + Send + Sync + 'static) -> FakeServer {
        FakeServer {
            clock: VirtualClock::new(),
            behave: Arc::new(behave),
            stopped: None,
            refuse: false,
            connect_time: Duration::ZERO,
            tls_time: None,
            connects: Arc::default(),
            exchanges: Arc::default(),
            writes: Arc::default(),
            flushes: Arc::default(),
            keep_requests: false,
            requests: Arc::default(),
            cancel_at: None,
            pass_cost: Duration::from_micros(1),
            naps: Arc::default(),
        }
    }

    /// A transport for one worker thread (the virtual clock is for one thread: give the plan
    /// one).
    pub fn transport(&self) -> FakeTransport {
        FakeTransport {
            server: self.clone(),
            conns: HashMap::new(),
            next_id: 0,
            due: BinaryHeap::new(),
            nap: Duration::ZERO,
            sleeps: 0,
            waits: 0,
        }
    }
}

#[derive(Debug)]
enum Delivery {
    Connected,
    Handshaken,
    Bytes(Vec<u8>),
    Fail(ErrorKind),
}

/// One thread's side of the fake server.
pub struct FakeTransport {
    server: FakeServer,
    conns: HashMap<u64, FakeState>,
    next_id: u64,
    /// (when, sequence, connection id, what)
    due: BinaryHeap<Reverse<(Instant, u64, u64)>>,
    /// The nap the loop set: a wait with nothing due sleeps this long first, then takes
    /// everything due by then (as herd's wire does).
    nap: Duration,
    /// Waits that slept: reached an instant later than the one they began at.
    sleeps: u64,
    /// Waits, each a pass of the loop: the loop's CPU time, `pass_cost` each.
    waits: u64,
}

struct FakeState {
    token: usize,
    up: bool,
    /// When TCP came up, for a connection that then shakes hands.
    tcp_at: Option<Instant>,
    uses: u64,
    inbox: Vec<u8>,
    failed: Option<ErrorKind>,
    /// When its last answer leaves: pipelined requests are answered one after the other.
    busy_until: Instant,
    /// It answered with a close: it acts on nothing more.
    closing: bool,
    /// Deliveries by sequence number.
    pending: HashMap<u64, Delivery>,
}

/// A connection of the fake transport.
pub struct FakeConn(u64);

impl FakeTransport {
    fn schedule(&mut self, id: u64, at: Instant, what: Delivery) {
        self.next_id += 1;
        let seq = self.next_id;
        if let Some(c) = self.conns.get_mut(&id) {
            c.pending.insert(seq, what);
            self.due.push(Reverse((at, seq, id)));
        }
    }

    fn now(&self) -> Instant {
        self.server.clock.now()
    }

    /// When a reply taking `d` from `now` ends, the server's stop included.
    fn finishes(&self, now: Instant, d: Duration) -> Instant {
        let s = &self.server;
        let epoch = s.clock.base;
        let mut until = now + d;
        if let Some((from, to)) = s.stopped {
            let (from, to) = (epoch + from, epoch + to);
            if until >= from && now < to {
                until = until.max(to);
            }
        }
        until
    }
}

impl FakeTransport {
    /// The server reads one request on connection `id` and schedules its answer.
    fn receive(&mut self, id: u64, request: &[u8]) {
        let now = self.now();
        let t = now.saturating_duration_since(self.server.clock.base);
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        self.server.exchanges.fetch_add(1, Ordering::Relaxed);
        if c.closing {
            return;
        }
        c.uses += 1;
        let (n, from) = (c.uses, c.busy_until.max(now));
        if self.server.keep_requests {
            if let Ok(mut r) = self.server.requests.lock() {
                r.push(String::from_utf8_lossy(request).into_owned());
            }
        }
        let reply = (self.server.behave)(t, n);
        let (at, what) = match reply {
            Reply::After(d, status) => (
                self.finishes(from, d),
                Delivery::Bytes(format!("{status}\n").into_bytes()),
            ),
            Reply::Closing(d, status) => (
                self.finishes(from, d),
                Delivery::Bytes(format!("{status} close\n").into_bytes()),
            ),
            Reply::Fail(d, kind) => (self.finishes(from, d), Delivery::Fail(kind)),
            Reply::Hang => return,
        };
        if let Some(c) = self.conns.get_mut(&id) {
            c.busy_until = at;
            c.closing = matches!(reply, Reply::Closing(..) | Reply::Fail(..));
        }
        self.schedule(id, at, what);
        if matches!(reply, Reply::Closing(..)) {
            self.schedule(id, at, Delivery::Fail(ErrorKind::Eof));
        }
    }
}

impl Transport for FakeTransport {
    type Conn = FakeConn;
    type Session = Ordered<FakeParser>;

    fn connect(&mut self, token: usize) -> Result<FakeConn, Failure> {
        self.server.connects.fetch_add(1, Ordering::Relaxed);
        if self.server.refuse {
            return Err(Failure::new(ErrorKind::ConnectRefused, "refused"));
        }
        self.next_id += 1;
        let id = self.next_id;
        self.conns.insert(
            id,
            FakeState {
                token,
                up: false,
                tcp_at: None,
                uses: 0,
                inbox: Vec::new(),
                failed: None,
                busy_until: self.now(),
                closing: false,
                pending: HashMap::new(),
            },
        );
        let at = self.now() + self.server.connect_time;
        self.schedule(id, at, Delivery::Connected);
        Ok(FakeConn(id))
    }

    fn establish(&mut self, conn: &mut FakeConn) -> Result<bool, Failure> {
        Ok(self.conns.get(&conn.0).is_some_and(|c| c.up))
    }

    fn flush(&mut self, _conn: &mut FakeConn) -> Result<(), Failure> {
        self.server.flushes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn write(&mut self, conn: &mut FakeConn, bytes: &[u8]) -> Result<Io, Failure> {
        let Some(c) = self.conns.get(&conn.0) else {
            return Ok(Io::Closed);
        };
        if c.failed.is_some() {
            return Err(Failure::new(ErrorKind::Reset, "reset by the fake server"));
        }
        self.server.writes.fetch_add(1, Ordering::Relaxed);
        // Each head ends with a blank line; bytes without one are one request.
        let mut rest = bytes;
        while !rest.is_empty() {
            let end = rest
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(rest.len(), |p| p + 4);
            self.receive(conn.0, &rest[..end]);
            rest = &rest[end..];
        }
        Ok(Io::Done(bytes.len()))
    }

    fn read(&mut self, conn: &mut FakeConn, buf: &mut [u8]) -> Result<Io, Failure> {
        let Some(c) = self.conns.get_mut(&conn.0) else {
            return Ok(Io::Closed);
        };
        if !c.inbox.is_empty() {
            let n = c.inbox.len().min(buf.len());
            buf[..n].copy_from_slice(&c.inbox[..n]);
            c.inbox.drain(..n);
            return Ok(Io::Done(n));
        }
        match c.failed {
            Some(ErrorKind::Reset) => Err(Failure::new(ErrorKind::Reset, "connection reset")),
            Some(_) => Ok(Io::Closed),
            None => Ok(Io::Blocked),
        }
    }

    fn close(&mut self, conn: FakeConn) {
        self.conns.remove(&conn.0);
    }

    fn coalesce(&mut self, nap: Duration) {
        self.nap = nap;
        self.server.naps.lock().unwrap().push(nap);
    }

    fn effort(&self) -> crate::Effort {
        crate::Effort {
            sleeps: self.sleeps,
            cpu: self.server.pass_cost * self.waits as u32,
        }
    }

    fn wait(&mut self, until: Instant, events: &mut Vec<Event>) -> Result<(), Failure> {
        self.waits += 1;
        let mut until = until.max(self.now() + self.server.pass_cost);
        if let Some((at, control)) = &self.server.cancel_at {
            let at = self.server.clock.base + *at;
            if !control.is_cancelled() {
                if self.now() >= at {
                    control.cancel();
                } else {
                    until = until.min(at);
                }
            }
        }
        let Some(&Reverse((first, _, _))) = self.due.peek() else {
            self.server.clock.advance_to(until);
            return Ok(());
        };
        if first > until {
            self.server.clock.advance_to(until);
            return Ok(());
        }
        let now = self.now();
        let napped = now + self.nap;
        let first = if first > now {
            self.sleeps += 1;
            if self.nap.is_zero() || napped >= until {
                first
            } else if first > napped {
                self.sleeps += 1; // the nap, then the wait that blocked
                first
            } else {
                napped
            }
        } else {
            first
        };
        self.server.clock.advance_to(first);
        while let Some(&Reverse((at, seq, id))) = self.due.peek() {
            if at > first {
                break;
            }
            self.due.pop();
            let Some(c) = self.conns.get_mut(&id) else {
                continue; // closed meanwhile
            };
            let Some(what) = c.pending.remove(&seq) else {
                continue;
            };
            let mut ev = Event {
                token: c.token,
                ..Event::default()
            };
            match what {
                Delivery::Connected => match self.server.tls_time {
                    None => {
                        c.up = true;
                        ev.writable = true;
                    }
                    Some(d) => {
                        c.tcp_at = Some(first);
                        self.schedule(id, first + d, Delivery::Handshaken);
                        // The handshake's first flight goes out: nothing to tell the loop yet.
                        continue;
                    }
                },
                Delivery::Handshaken => {
                    c.up = true;
                    ev.readable = true;
                }
                Delivery::Bytes(b) => {
                    c.inbox.extend_from_slice(&b);
                    ev.readable = true;
                }
                Delivery::Fail(kind) => {
                    c.failed = Some(kind);
                    ev.readable = true;
                    ev.closed = true;
                }
            }
            events.push(ev);
        }
        Ok(())
    }

    fn session(&self, _conn: &FakeConn, window: usize, started: Instant) -> Self::Session {
        Ordered::new(window, started)
    }

    fn connected_at(&self, conn: &FakeConn) -> Option<Instant> {
        self.conns.get(&conn.0).and_then(|c| c.tcp_at)
    }

    fn clock(&self) -> &dyn Clock {
        &*self.server.clock
    }
}

/// Reads the fake wire's one-line responses (`200\n`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FakeParser;

impl Parse for FakeParser {
    fn for_request(_req: &Request) -> Self {
        FakeParser
    }

    fn feed(
        &mut self,
        bytes: &[u8],
        _now: Instant,
        resp: &mut Response,
    ) -> Result<(usize, bool), Failure> {
        let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
            return Ok((0, false));
        };
        let line = std::str::from_utf8(&bytes[..end]).unwrap_or("");
        let (status, closes) = match line.strip_suffix(" close") {
            Some(status) => (status, true),
            None => (line, false),
        };
        resp.status = status
            .parse()
            .map_err(|_| Failure::new(ErrorKind::Protocol, "not a fake status line"))?;
        resp.keep_alive = !closes;
        Ok((end + 1, true))
    }

    fn closed(&mut self, _unconsumed: &[u8], _resp: &mut Response) -> Result<(), Failure> {
        Err(Failure::new(ErrorKind::Eof, "closed before a response"))
    }
}
