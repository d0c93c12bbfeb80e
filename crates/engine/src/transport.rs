//! The seam between the engine and the wire, as small as wrk's `struct sock`: open a connection,
//! finish opening it, write, read, close, and wait for readiness. It is synchronous and does no
//! scheduling: the engine's loop (one per thread) decides what to do with each socket and when.
//! The real transport (TCP, TLS through rustls, a readiness poll) lives in `herd-http`; the engine
//! is tested against a fake one on a virtual [`Clock`], so every rule is tested once, exactly.
//!
//! Beside it, the seam between the loop and a protocol: one [`Session`] per connection (h2load's shape,
//! quinn-proto's manners). The loop owns sockets, time and the tables of connections and
//! exchanges; a session owns what one protocol keeps about one connection: the requests it
//! was handed, what is written and what is half read. HTTP/1.1 (one at a time, or pipelined)
//! is [`crate::Ordered`]; HTTP/2 and HTTP/3 are sessions of their own.
//!
//! Who calls what, and when:
//!
//! 1. The loop opens a connection with [`crate::Transport::connect`] (its events carry the token
//!    given) and asks the transport for its session ([`crate::Transport::session`]).
//! 2. While [`Session::room`] is above 0, the loop may [`Session::submit`] an exchange, naming
//!    it by a [`Ticket`]; it may do so before the connection is open (the session holds the
//!    request until it can send it). After submitting, the loop asks the session to
//!    [`Session::write_now`] or else pumps it with `Ready::WRITE`, so the request leaves at once.
//! 3. Whenever the connection's socket is ready (an [`crate::Event`] with its token), or the
//!    instant the session asked for with [`Session::wake_at`] has come, the loop calls
//!    [`Session::pump`] once: the session does all the I/O it can through the transport
//!    (finish opening the connection, write, read, flush), never blocking, and reports what
//!    happened as [`Note`]s. Read readiness is edge-triggered: a session reads until the
//!    transport says [`crate::Io::Blocked`], or remembers that it did not.
//! 4. The loop reads the notes in order. Every submitted ticket comes back exactly once, as
//!    [`Note::Response`] or [`Note::Failed`]. [`Note::Closed`] comes last of all: the
//!    connection is finished, every ticket it held was already reported, and the loop closes
//!    it with [`crate::Transport::close`].
//! 5. When the loop gives up on an exchange (its deadline, the end of the run), it calls
//!    [`Session::cancel`]: a protocol that can drop one exchange alone (HTTP/2's RST_STREAM)
//!    does so and says `true`; otherwise the loop closes the whole connection after asking
//!    [`Session::abandon`] to report every ticket it still holds.
//!
//! A session allocates nothing per exchange in the steady state, reads the clock never (the
//! loop passes `now`) and keeps per-exchange state in its own small queue or slab, keyed by
//! the ticket the loop gave.
//!
//! The two traits name each other (`Transport::Session: Session<Self>`, `Session<T: Transport>`),
//! so they share this file; what they pass is plain data in files of its own (`message.rs`,
//! `session.rs`), which name neither.

use crate::message::{Failure, Request, Response};
use crate::protocols::Negotiated;
use crate::session::{Note, Opened, Ready, Ticket};
use std::time::{Duration, Instant};

/// The run's clock. Real runs read the monotonic clock; engine tests hand the loop a virtual
/// clock that moves only when the loop waits, so timing rules are tested exactly.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// The monotonic clock of the machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A connection became ready: the token it was opened with and what it is ready for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub token: usize,
    pub readable: bool,
    pub writable: bool,
    /// The peer closed its side, or the socket failed: read on to the end.
    pub closed: bool,
}

/// What a read or write came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// This many bytes moved (never 0).
    Done(usize),
    /// Nothing now; the connection's next event says when to try again.
    Blocked,
    /// The peer closed the connection (a read of 0 bytes, or TLS close).
    Closed,
}

/// How the engine reaches the target, for one worker thread (wrk's `struct sock`: connect,
/// read, write, close, plus the readiness wait of its event loop). Connections are
/// non-blocking; readiness comes back from [`Transport::wait`] as [`Event`]s carrying the token
/// given to [`Transport::connect`].
pub trait Transport: 'static {
    type Conn;
    /// The protocol each connection speaks (see [`crate::Session`]).
    type Session: crate::Session<Self>;

    /// Starts opening a connection whose events will carry `token`.
    fn connect(&mut self, token: usize) -> Result<Self::Conn, Failure>;

    /// Goes on opening `conn` after one of its events (TCP, then the TLS handshake): `Ok(true)`
    /// once it can carry requests, `Ok(false)` while it waits for its next event.
    fn establish(&mut self, conn: &mut Self::Conn) -> Result<bool, Failure>;

    /// Writes some of `bytes`.
    fn write(&mut self, conn: &mut Self::Conn, bytes: &[u8]) -> Result<Io, Failure>;

    /// Sends what an earlier write left buffered below the connection (TLS records); called on
    /// a writable event while the engine waits for a response.
    fn flush(&mut self, conn: &mut Self::Conn) -> Result<(), Failure> {
        let _ = conn;
        Ok(())
    }

    /// Reads some of the response into `buf`.
    fn read(&mut self, conn: &mut Self::Conn, buf: &mut [u8]) -> Result<Io, Failure>;

    /// Closes `conn`; its events stop.
    fn close(&mut self, conn: Self::Conn);

    /// Blocks until a connection is ready or `until` (returns at once when it has passed),
    /// appending the events to `events`.
    fn wait(&mut self, until: Instant, events: &mut Vec<Event>) -> Result<(), Failure>;

    /// From now on a wait that would block may first sleep `nap` on its own timer and then
    /// look, so a busy server's answers are read several at a time and the server's writes
    /// need not wake this thread (zero: never). The loop sets it every tenth of a second from
    /// its answers and [`Transport::effort`] (worker/nap.rs). The default ignores it.
    fn coalesce(&mut self, nap: Duration) {
        let _ = nap;
    }

    /// How many times this thread's waits have slept so far, and the CPU time it has spent.
    /// The default: the thread's voluntary context switches and its CPU clock.
    fn effort(&self) -> Effort {
        Effort::of_thread()
    }

    /// The session for `conn`, just opened at `started`, taking up to `window` exchanges at
    /// once where the protocol leaves the number to the client (HTTP/1.1's pipeline).
    fn session(&self, conn: &Self::Conn, window: usize, started: Instant) -> Self::Session;

    /// The session for `conn`, just opened at `started` for `req` alone: its user's own
    /// WebSocket (`req.socket` is [`crate::SocketRole::Open`], its bytes the Upgrade request),
    /// carrying that user's messages after it. `None` (the default): this transport's
    /// connections cannot carry one, and the exchange fails.
    fn socket(&self, conn: &Self::Conn, req: &Request, started: Instant) -> Option<Self::Session> {
        let _ = (conn, req, started);
        None
    }

    /// When `conn`'s way to the server came up (TCP established, and a proxy's tunnel open),
    /// for a connection whose TLS handshake follows: the connect phase ends and the TLS phase
    /// begins there, however few `establish` calls the two took. `None` for plain connections.
    fn connected_at(&self, conn: &Self::Conn) -> Option<Instant> {
        let _ = conn;
        None
    }

    /// What `conn`'s TLS handshake settled on, once it is done; `None` for plain connections.
    fn negotiated(&self, conn: &Self::Conn) -> Option<Negotiated> {
        let _ = conn;
        None
    }

    /// The clock this transport's waits are measured on.
    fn clock(&self) -> &dyn Clock;
}

/// One connection's protocol, driven by the loop (see the module's text for the order of calls).
pub trait Session<T: Transport + ?Sized> {
    /// How many more exchanges it can take now: the pipeline's free places (HTTP/1.1), the
    /// peer's SETTINGS_MAX_CONCURRENT_STREAMS less the open streams (HTTP/2, HTTP/3); 0 once the
    /// connection is going away. Before the connection is open it may already take some.
    fn room(&self) -> usize;

    /// Takes the exchange `ticket` for `req`; `last` asks the server to close the connection
    /// after answering it (`--calls-per-conn`). Called only while [`Session::room`] is above 0.
    /// Nothing is written here: the loop asks [`Session::write_now`], else pumps with
    /// [`Ready::WRITE`] afterwards.
    fn submit(&mut self, ticket: Ticket, req: &Request, last: bool);

    /// Writes the exchange just submitted at once when that needs no pump: HTTP/1.1 one request
    /// at a time on an open connection that owes nothing else. `true` when the socket took all
    /// of it; otherwise (and by default) the loop pumps with [`Ready::WRITE`] as usual, which
    /// also reports a write that failed here. (That pump after each submit was a second trip
    /// through the loop per request: ~400 of HTTP/1.1's ~3,000 instructions per request.)
    fn write_now(&mut self, t: &mut T, conn: &mut T::Conn) -> bool {
        let _ = (t, conn);
        false
    }

    /// Does all the I/O `conn` allows now (see [`Ready`]), appending what happened to `out`.
    /// `now` is the pass's instant (the first byte's time); `scratch` is the loop's read
    /// buffer.
    fn pump(
        &mut self,
        t: &mut T,
        conn: &mut T::Conn,
        ready: Ready,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    );

    /// When the loop must pump this session even without an event (the longest an exchange
    /// held for a batch may wait); `None` when only events matter. Read after each pump: a
    /// session names each instant once, and a pump at a stale one does no harm.
    fn wake_at(&self) -> Option<Instant> {
        None
    }

    /// The loop gives up on `ticket`: `true` if the session dropped it alone and the
    /// connection goes on (no note comes for it); `false` if the protocol cannot (HTTP/1.1's
    /// responses come in order), and the loop will close the connection.
    fn cancel(&mut self, ticket: Ticket) -> bool {
        let _ = ticket;
        false
    }

    /// The loop closes the connection: every ticket still held is reported as failed with
    /// `why`, `unseen` where the server cannot have seen it. No [`Note::Closed`] follows.
    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>);

    /// Exchanges submitted and not yet reported.
    fn in_flight(&self) -> usize;

    /// What this session holds that its socket has not taken: messages and their bytes (a
    /// WebSocket's send backlog). Asked once a second, for runs on a schedule of messages.
    fn unsent(&self) -> herd_metrics::Backlog {
        herd_metrics::Backlog::default()
    }

    /// The server's limit on this connection's exchanges in flight when it is below the window
    /// the loop asked for (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS, HTTP/3's stream credit):
    /// the loop then begins no more iterations than the servers' places take, as h2load's
    /// `-m` follows the server's limit. `None`: the window is the limit.
    fn limit(&self) -> Option<usize> {
        None
    }

    /// From now on, new exchanges wait to be written until a share of the window is free
    /// (HTTP/1.1 pipelining all of it, HTTP/2 half) or nothing is in flight, and then
    /// leave together (nearly wrk's pipelining batches), instead of each as soon as a place
    /// frees. A generator faster than its server otherwise answers every response with a
    /// write of one request: a system call and a TCP segment per request, most of its CPU on
    /// loopback. The closed model asks for it on a window above 1; the open model never (an
    /// arrival goes when due). A session that holds an exchange back says when it wrote it in
    /// [`Response::sent`]. Protocols without the choice ignore it.
    fn refill_in_batches(&mut self) {}
}

/// Reads one response from bytes as they arrive, doing no I/O itself (sans-IO): the codec of
/// an [`crate::Ordered`] session, which feeds it from its reads. One parser reads one response.
pub trait Parse {
    /// The parser for the response to `req` (a HEAD request's response has no body).
    fn for_request(req: &Request) -> Self
    where
        Self: Sized;

    /// Takes what it can of `bytes` (the unconsumed bytes received so far, oldest first) and
    /// returns how many it consumed and whether the response is complete. A partial head is left
    /// unconsumed: the driver appends what arrives next and feeds everything again. Bytes after
    /// a complete response belong to the next one and are left unconsumed. Fills `resp` (status,
    /// `body_len`, `keep_alive`, and headers and body when the request keeps them);
    /// `resp.bytes_received` is the driver's to count.
    /// `now`: when `bytes` arrived (the instant of an event found in them).
    fn feed(
        &mut self,
        bytes: &[u8],
        now: Instant,
        resp: &mut Response,
    ) -> Result<(usize, bool), Failure>;

    /// The server closed the connection with `unconsumed` bytes not taken by `feed`: `Ok` when
    /// that ends the response (a body delimited by the close), else the `eof` failure saying how
    /// far the response got.
    fn closed(&mut self, unconsumed: &[u8], resp: &mut Response) -> Result<(), Failure>;
}

// Here rather than beside `Opened`: it asks the transport, and session.rs names none.
impl Opened {
    /// The connect and TLS phases of `conn`, which began opening at `started` and is open now:
    /// split where the transport says the way to the server came up.
    pub fn times<T: Transport + ?Sized>(
        t: &T,
        conn: &T::Conn,
        started: Instant,
    ) -> (Duration, Option<Duration>) {
        let now = t.clock().now();
        match t.connected_at(conn) {
            Some(up) => (
                up.saturating_duration_since(started),
                Some(now.saturating_duration_since(up)),
            ),
            None => (now.saturating_duration_since(started), None),
        }
    }
}

/// What a worker thread has spent so far ([`Transport::effort`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Effort {
    /// Times its waits slept (voluntary context switches).
    pub sleeps: u64,
    /// CPU time.
    pub cpu: Duration,
}

impl Effort {
    /// The calling thread's (one getrusage: its voluntary context switches, and its user and
    /// system time).
    pub fn of_thread() -> Effort {
        crate::generator::thread_rusage().map_or_else(Effort::default, |ru| Effort {
            sleeps: ru.ru_nvcsw as u64,
            cpu: crate::generator::ThreadCpu::of(&ru).total(),
        })
    }
}
