//! The seam between the loop and a protocol: one [`Session`] per connection (h2load's shape,
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

use crate::{Failure, Request, Response, Transport};
use std::time::{Duration, Instant};

/// An exchange's name in the loop's exchange table: its slot and the slot's generation, so a
/// note about an exchange the loop already ended is told from its slot's next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    pub slot: u32,
    pub generation: u32,
}

/// What a connection's event (or its timer) says it is ready for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    pub readable: bool,
    pub writable: bool,
    /// The peer closed its side or the socket failed: read on to the end, since no further
    /// event will come.
    pub closed: bool,
    /// The instant from [`Session::wake_at`] has come (QUIC's timers, the end of an HTTP/2
    /// batch's hold).
    pub timer: bool,
}

impl Ready {
    /// Only a write is wanted: a request was just submitted.
    pub const WRITE: Ready = Ready {
        readable: false,
        writable: true,
        closed: false,
        timer: false,
    };
}

/// How long opening a connection took, phase by phase (k6's `http_req_connecting` and
/// `_tls_handshaking`): reported once, with [`Note::Open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Opened {
    /// The TCP (or QUIC) connection, from `connect` to established.
    pub connect: Duration,
    /// The TLS handshake after it; `None` for plain connections.
    pub tls: Option<Duration>,
    /// The protocol it speaks, as ALPN names it (`http/1.1`, `h2`, `h3`).
    pub protocol: &'static str,
    /// Whether the TLS handshake resumed a session and sent early data, where the protocol
    /// tells (HTTP/3); `None` elsewhere.
    pub resumption: Option<Resumption>,
    /// What its TLS handshake settled on; `None` for plain connections.
    pub negotiated: Option<Negotiated>,
    /// A protocol's own opening handshake after TLS (a WebSocket's Upgrade: the request out to
    /// the `101` in): counted as the protocol's handshake (`ProtocolUse::handshakes`) apart
    /// from connect and TLS.
    pub upgrade: Option<Duration>,
}

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

/// How a connection's handshake used an earlier connection's TLS session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumption {
    /// The session was resumed: no certificate sent or checked.
    pub resumed: bool,
    /// Requests went as early data (0-RTT): `Some(true)` when the server took them,
    /// `Some(false)` when it refused them and they went again after the handshake.
    pub early_data: Option<bool>,
}

/// The handshakes of one protocol's connections, where the protocol tells how they went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshakes {
    /// Full handshakes (a certificate checked) and resumed ones, with their times.
    pub full: HandshakeTimes,
    pub resumed: HandshakeTimes,
    /// Connections whose early data (0-RTT) the server took, and refused.
    pub early_data_accepted: u64,
    pub early_data_rejected: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandshakeTimes {
    pub count: u64,
    pub total: Duration,
    pub max: Duration,
}

impl HandshakeTimes {
    fn add(&mut self, other: &HandshakeTimes) {
        self.count += other.count;
        self.total += other.total;
        self.max = self.max.max(other.max);
    }
}

impl Handshakes {
    /// Adds one connection's handshake, which took `time`.
    fn count(&mut self, r: Resumption, time: Duration) {
        let times = if r.resumed {
            &mut self.resumed
        } else {
            &mut self.full
        };
        times.add(&HandshakeTimes {
            count: 1,
            total: time,
            max: time,
        });
        match r.early_data {
            Some(true) => self.early_data_accepted += 1,
            Some(false) => self.early_data_rejected += 1,
            None => {}
        }
    }

    fn add(&mut self, other: &Handshakes) {
        self.full.add(&other.full);
        self.resumed.add(&other.resumed);
        self.early_data_accepted += other.early_data_accepted;
        self.early_data_rejected += other.early_data_rejected;
    }

    /// Nothing was told: the protocol does not say how its handshakes went.
    pub fn is_empty(&self) -> bool {
        self.full.count + self.resumed.count == 0
    }
}

/// What a TLS handshake settled on, in rustls's names (the version as nginx's `$ssl_protocol`
/// writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Negotiated {
    /// `TLSv1.2`, `TLSv1.3`.
    pub version: &'static str,
    /// The IANA name, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: &'static str,
    /// The protocol ALPN agreed on (`h2`, `http/1.1`), `None` when the server chose none.
    pub alpn: Option<&'static str>,
}

/// The connections of a run whose handshakes settled on the same [`Negotiated`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsUse {
    pub negotiated: Negotiated,
    pub connections: u64,
}

/// Adds `connections` to `negotiated`'s row of `rows` (a handful of rows at most).
pub(crate) fn count_tls(rows: &mut Vec<TlsUse>, negotiated: Negotiated, connections: u64) {
    match rows.iter_mut().find(|r| r.negotiated == negotiated) {
        Some(r) => r.connections += connections,
        None => rows.push(TlsUse {
            negotiated,
            connections,
        }),
    }
}

/// The connections of a run that spoke one protocol (the name from [`Opened::protocol`]), and
/// the requests handed to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtocolUse {
    pub protocol: &'static str,
    pub connections: u64,
    pub requests: u64,
    pub handshakes: Handshakes,
}

/// Adds `connections` and `requests` to `protocol`'s row of `rows` (a handful of rows at most).
pub(crate) fn count_protocol(
    rows: &mut Vec<ProtocolUse>,
    protocol: &'static str,
    connections: u64,
    requests: u64,
) {
    match rows.iter_mut().find(|r| r.protocol == protocol) {
        Some(r) => {
            r.connections += connections;
            r.requests += requests;
        }
        None => rows.push(ProtocolUse {
            protocol,
            connections,
            requests,
            handshakes: Handshakes::default(),
        }),
    }
}

/// Adds how connection `o` opened to its protocol's row of `rows`, when its protocol tells.
pub(crate) fn count_handshake(rows: &mut Vec<ProtocolUse>, o: &Opened) {
    let Some(r) = o.resumption else { return };
    count_protocol(rows, o.protocol, 0, 0);
    if let Some(row) = rows.iter_mut().find(|row| row.protocol == o.protocol) {
        row.handshakes.count(
            r,
            o.upgrade.unwrap_or(o.connect + o.tls.unwrap_or_default()),
        );
    }
}

/// Adds a worker's row `p` to the run's `rows`.
pub(crate) fn add_protocol(rows: &mut Vec<ProtocolUse>, p: &ProtocolUse) {
    count_protocol(rows, p.protocol, p.connections, p.requests);
    if let Some(row) = rows.iter_mut().find(|row| row.protocol == p.protocol) {
        row.handshakes.add(&p.handshakes);
    }
}

/// What a [`Session::pump`] came to, in the order it happened.
#[derive(Debug)]
pub enum Note {
    /// The connection finished opening and carries exchanges from now on.
    Open(Opened),
    /// The first byte of this exchange's response arrived (at the `now` of the pump).
    FirstByte(Ticket),
    /// This exchange has its full response. `keep_alive` false in it means the server closes
    /// the connection: the session takes no more exchanges ([`Session::room`] is 0).
    Response(Ticket, Response),
    /// This exchange got no valid response.
    Failed(Failed),
    /// The connection is finished (closed by the server, failed, or closed after the server
    /// said it would): every ticket was reported before this note. Comes once, last.
    Closed,
}

/// An exchange that got no valid response, its class and how far it got.
#[derive(Debug)]
pub struct Failed {
    pub ticket: Ticket,
    pub failure: Failure,
    /// Bytes of its response received before it failed.
    pub received: u64,
    /// The server cannot have acted on it (never written, refused by HTTP/2's GOAWAY above its
    /// last stream, or after a response that announced the close): safe to send again on
    /// another connection, where it is counted once.
    pub unseen: bool,
    /// Bytes written for it where the protocol frames it its own way (HTTP/2's frames);
    /// `None`: its own bytes, as HTTP/1.1 writes them.
    pub sent: Option<u64>,
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
