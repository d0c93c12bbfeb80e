//! One user of the loop: its script state, its connection, and where it is in its exchange,
//! with the steps that move the exchange on as its socket allows (finish opening the connection,
//! write the request, read the response). The loop in `mod.rs` decides when to take a step and
//! what follows it.
//!
//! The connection ([`Link`]) is kept apart from the exchange it carries ([`Exchange`]): today a
//! link carries one exchange at a time (HTTP/1.1 without pipelining), and the bytes a server
//! sent ahead stay on the link for the next exchange, which is the shape pipelining and HTTP/2
//! streams need.

use crate::{Failure, Io, Parse, Request, Response, Transport};
use herd_metrics::ErrorKind;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Between steps: in the loop's resume list.
    Free,
    /// Waiting on the timer heap (think time, a stage that has no room for it yet, or the pause
    /// after an iteration that did nothing).
    Waiting,
    /// Open model: no arrival for it yet.
    Idle,
    Connecting,
    /// This many bytes of the request written.
    Writing(usize),
    Reading,
    /// No more iterations for this user.
    Done,
}

impl State {
    pub fn in_flight(self) -> bool {
        matches!(self, State::Connecting | State::Writing(_) | State::Reading)
    }
}

/// The token a connection's events carry: its user's index and the link's generation, so a
/// closed connection's late events are told from its successor's.
pub(super) fn token(user: usize, generation: u32) -> usize {
    user | ((generation as usize) << 32)
}

/// The user and link generation a [`token`] names.
pub(super) fn untoken(token: usize) -> (usize, u32) {
    (token & 0xffff_ffff, (token >> 32) as u32)
}

/// What a user resumes with when it leaves the resume list or the timer heap.
#[derive(Debug)]
pub(super) enum Resume {
    /// A new iteration (closed model).
    Begin,
    /// Its exchange failed: the script hears of it.
    Failed(Failure),
    /// Its think time is over.
    Woke,
}

/// An open connection and what it holds between exchanges.
pub(super) struct Link<C> {
    pub conn: Option<C>,
    /// Bumped for every new connection and part of its token, so a closed connection's late
    /// events never reach its successor.
    pub generation: u32,
    /// The connection finished opening (it counts as open).
    pub connected: bool,
    /// Exchanges completed on it.
    pub uses: u64,
    /// When its last exchange started.
    pub last_used: Instant,
    /// It may hold bytes no event will announce: the last read filled the buffer.
    pub unread: bool,
    /// The server closed its side (or the socket failed): read to the end, since no further
    /// event will come, and never reuse it.
    pub hup: bool,
    /// Bytes received and not yet consumed: a partial head, or the start of the next response.
    pub pending: Vec<u8>,
    /// The previous connection, which the server said it closes, with its generation: kept
    /// until the server's close arrives (or until the instant given), so the server closes
    /// first.
    pub draining: Option<(C, u32, Instant)>,
}

/// The exchange a user has in flight, and its times.
pub(super) struct Exchange<P> {
    pub req: Option<Request>,
    /// This request is the connection's last (`--calls-per-conn`): the closing bytes go out.
    pub last_call: bool,
    pub parser: Option<P>,
    pub resp: Response,
    /// When the request was meant to start: latency is measured from here.
    pub intended: Instant,
    /// When it did start (later than `intended` for an arrival that waited for a free user):
    /// the deadline counts from here.
    pub start: Instant,
    /// When the request was sent; `None` while connecting.
    pub sent: Option<Instant>,
    pub connect_start: Instant,
    pub connect: Option<Duration>,
    /// The stale keep-alive retry was used.
    pub retried: bool,
    /// The connection was reused after sitting idle: a failure with nothing received may be
    /// the server's keep-alive timeout rather than an error.
    pub stale_candidate: bool,
}

pub(super) struct User<U, C, P> {
    pub script: U,
    pub state: State,
    pub resume: Resume,
    /// When the current iteration was intended: whether its outcomes fall in the warm-up is
    /// decided once per iteration, never split across the line.
    pub iteration: Instant,
    /// The iteration has sent something or paused (an empty one is followed by a pause).
    pub busy: bool,
    /// Generation of the user's pending timer: an entry of another generation is stale.
    pub timer: u32,
    /// Open model: the schedule index of the arrival the current iteration answers.
    pub arrival: Option<u64>,
    pub link: Link<C>,
    pub ex: Exchange<P>,
}

/// What a step of the exchange came to.
pub(super) enum Step {
    /// Wait for the connection's next event.
    Blocked,
    /// The request is out: on to the response.
    Sent,
    /// A full response: record it and go on.
    Complete,
    Failed(Failure),
}

impl<U, C, P: Parse> User<U, C, P> {
    pub fn new(script: U, now: Instant) -> Self {
        User {
            script,
            state: State::Free,
            resume: Resume::Begin,
            iteration: now,
            busy: false,
            timer: 0,
            arrival: None,
            link: Link {
                conn: None,
                generation: 0,
                connected: false,
                uses: 0,
                last_used: now,
                unread: false,
                hup: false,
                pending: Vec::new(),
                draining: None,
            },
            ex: Exchange {
                req: None,
                last_call: false,
                parser: None,
                resp: Response::default(),
                intended: now,
                start: now,
                sent: None,
                connect_start: now,
                connect: None,
                retried: false,
                stale_candidate: false,
            },
        }
    }
}

/// Goes on opening user `u`'s connection: `Ok(true)` once it carries requests.
pub(super) fn establish<T: Transport, U>(
    t: &mut T,
    u: &mut User<U, T::Conn, T::Parser>,
    now: Instant,
) -> Result<bool, Failure> {
    let Some(conn) = u.link.conn.as_mut() else {
        return Ok(false);
    };
    if !t.establish(conn)? {
        return Ok(false);
    }
    u.ex.connect = Some(now.saturating_duration_since(u.ex.connect_start));
    u.ex.sent = Some(now);
    u.link.connected = true;
    u.link.uses = 0;
    u.state = State::Writing(0);
    Ok(true)
}

/// Writes (the rest of) the request; once it is out, reads on with a fresh parser whatever of
/// the response the link already holds.
pub(super) fn write<T: Transport, U>(t: &mut T, u: &mut User<U, T::Conn, T::Parser>) -> Step {
    let State::Writing(mut done) = u.state else {
        return Step::Blocked;
    };
    let (Some(conn), Some(req)) = (u.link.conn.as_mut(), u.ex.req.as_ref()) else {
        return Step::Blocked;
    };
    let bytes: &[u8] = match (&req.closing, u.ex.last_call) {
        (Some(closing), true) => closing,
        _ => &req.bytes,
    };
    while done < bytes.len() {
        match t.write(conn, &bytes[done..]) {
            Ok(Io::Done(n)) => done += n,
            Ok(Io::Closed) => {
                return Step::Failed(Failure::new(
                    ErrorKind::Reset,
                    "the connection accepted no more of the request",
                ))
            }
            Ok(Io::Blocked) => {
                // The rest goes on the next writable event; an event of the response meanwhile
                // would be missed, so read once the request is out.
                u.state = State::Writing(done);
                u.link.unread = true;
                return Step::Blocked;
            }
            Err(f) => return Step::Failed(f),
        }
    }
    // Bytes left over from the previous response (a server that answered ahead) belong to
    // this one and count as received.
    u.ex.resp.bytes_received = u.link.pending.len() as u64;
    let mut parser = t.parser(req);
    u.state = State::Reading;
    if !u.link.pending.is_empty() {
        let pending = &mut u.link.pending;
        match parser.feed(pending, &mut u.ex.resp) {
            Ok((used, done)) => {
                pending.drain(..used);
                if done {
                    // The server answered ahead: the whole response was already here.
                    u.ex.resp.bytes_received -= pending.len() as u64;
                    u.ex.parser = Some(parser);
                    return Step::Complete;
                }
            }
            Err(f) => return Step::Failed(f),
        }
    }
    u.ex.parser = Some(parser);
    Step::Sent
}

/// Reads what the connection holds and feeds it to the parser.
pub(super) fn read<T: Transport, U>(
    t: &mut T,
    u: &mut User<U, T::Conn, T::Parser>,
    scratch: &mut [u8],
    now: Instant,
) -> Step {
    let Link {
        conn,
        unread,
        hup,
        pending,
        ..
    } = &mut u.link;
    let (Some(conn), Some(parser)) = (conn.as_mut(), u.ex.parser.as_mut()) else {
        return Step::Blocked;
    };
    let resp = &mut u.ex.resp;
    loop {
        let n = match t.read(conn, scratch) {
            Ok(Io::Done(n)) => n,
            Ok(Io::Blocked) => {
                *unread = false;
                return Step::Blocked;
            }
            Ok(Io::Closed) => {
                // The server closed: that ends a body delimited by the close, or fails the
                // response; either way the connection is done.
                let closed = parser.closed(pending, resp);
                pending.clear();
                *hup = true;
                resp.keep_alive = false;
                return match closed {
                    Ok(()) => Step::Complete,
                    Err(f) => Step::Failed(f),
                };
            }
            Err(f) => return Step::Failed(f),
        };
        if resp.first_byte.is_none() {
            resp.first_byte = Some(now);
        }
        resp.bytes_received += n as u64;
        let filled = n == scratch.len();
        let fed = if pending.is_empty() {
            let got = &scratch[..n];
            parser.feed(got, resp).map(|(used, done)| {
                pending.extend_from_slice(&got[used..]);
                done
            })
        } else {
            pending.extend_from_slice(&scratch[..n]);
            parser.feed(pending, resp).map(|(used, done)| {
                pending.drain(..used);
                done
            })
        };
        match fed {
            Err(f) => return Step::Failed(f),
            Ok(true) => {
                // What is left belongs to the next response.
                resp.bytes_received -= pending.len() as u64;
                *unread = filled;
                return Step::Complete;
            }
            // A short read emptied the socket: the rest comes with the next event (unless the
            // server closed, which announces nothing more).
            Ok(false) if !filled && !*hup => {
                *unread = false;
                return Step::Blocked;
            }
            Ok(false) => {}
        }
    }
}
