//! One HTTP/3 connection as the loop sees it ([`Session`]): it takes exchanges, hands them to
//! the [`H3Connection`] that the transport keeps beside the socket, and turns that connection's
//! events into notes. Requests are multiplexed, so one exchange can be given up alone (its
//! stream reset) and the connection goes on.

use super::event::{EarlyData, H3Event};
use super::wire::{H3Conn, H3Wire};
use herd_engine::{Failed, Failure, Note, Opened, Ready, Request, Resumption, Session, Ticket};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The streams a QUIC server commonly grants at first (quic-go, Caddy, nginx's 128 above it).
const FIRST_CREDIT: usize = 100;

pub struct H3Session {
    /// Requests in flight at once (`--streams`).
    window: usize,
    /// The server's stream limit, once a request found it reached: QUIC tells a client its
    /// credit, not its limit, so it is learnt as the streams open when the credit ran out.
    limit: Option<usize>,
    /// Submitted, not yet on a stream (before the handshake, or past the stream limit).
    queued: VecDeque<(Ticket, Request)>,
    /// On a stream, waiting for their responses.
    sent: Vec<Ticket>,
    /// Given up by the loop; their streams are reset at the next pump.
    cancelled: Vec<Ticket>,
    opened: bool,
    /// The last call was submitted (`--calls-per-conn`): take no more.
    last: bool,
    /// The server sent GOAWAY: take no more, and end once the rest are answered.
    going_away: bool,
    closed: bool,
}

fn token(t: Ticket) -> usize {
    (t.slot as usize) << 32 | t.generation as usize
}

fn ticket(token: usize) -> Ticket {
    Ticket {
        slot: (token >> 32) as u32,
        generation: token as u32,
    }
}

impl H3Session {
    pub(crate) fn new(window: usize) -> H3Session {
        H3Session {
            window: window.max(1),
            limit: None,
            queued: VecDeque::new(),
            sent: Vec::new(),
            cancelled: Vec::new(),
            opened: false,
            last: false,
            going_away: false,
            closed: false,
        }
    }

    fn fail(ticket: Ticket, failure: Failure, unseen: bool, out: &mut Vec<Note>) {
        out.push(Note::Failed(Failed {
            ticket,
            failure,
            received: 0,
            unseen,
            sent: None,
        }));
    }

    /// The connection is over: every ticket it holds fails with `failure`, then `Closed`.
    fn end(&mut self, failure: &Failure, out: &mut Vec<Note>) {
        if !self.opened {
            // A connection that never opened (its handshake failed) is the failure itself, not
            // a reason to send its requests elsewhere.
            for (ticket, _) in self.queued.drain(..) {
                Self::fail(ticket, failure.clone(), false, out);
            }
        }
        self.abandon(failure, out);
        self.closed = true;
        out.push(Note::Closed);
    }

    /// Hands what waits to the connection, as far as its stream credit goes.
    fn send_queued(
        &mut self,
        t: &mut H3Wire,
        conn: &mut H3Conn,
        now: Instant,
        out: &mut Vec<Note>,
    ) {
        while let Some((ticket, req)) = self.queued.front() {
            let frames = match t.frames(req) {
                Ok(f) => f,
                Err(f) => {
                    let ticket = *ticket;
                    self.queued.pop_front();
                    Self::fail(ticket, f, true, out);
                    continue;
                }
            };
            let ticket = *ticket;
            match t.slot(conn).h3.send(token(ticket), &frames, now) {
                Ok(true) => {
                    self.queued.pop_front();
                    self.sent.push(ticket);
                }
                Ok(false) => {
                    // Credit runs out below the limit while the server has yet to grant the
                    // streams that answered requests freed: the largest count seen is the limit.
                    if self.opened && !self.sent.is_empty() {
                        self.limit = self.limit.max(Some(self.sent.len()));
                    }
                    break;
                }
                Err(_) if t.slot(conn).h3.is_over() => {
                    // Over: its `Closed` event below says why, for every exchange it holds.
                    break;
                }
                Err(f) => {
                    // Going away: nothing queued can go on this connection.
                    self.going_away = true;
                    self.queued.pop_front();
                    Self::fail(ticket, f, true, out);
                }
            }
        }
    }

    /// Turns the connection's events into notes; whether what waits should go now (the
    /// handshake or new credit came), or `None` when the connection ended.
    fn take_events(
        &mut self,
        t: &mut H3Wire,
        conn: &mut H3Conn,
        out: &mut Vec<Note>,
    ) -> Option<bool> {
        let mut again = false;
        while let Some(ev) = t.slot(conn).h3.poll_event() {
            match ev {
                H3Event::Connected(handshake) => {
                    self.opened = true;
                    again |= !self.queued.is_empty();
                    // QUIC's handshake is TLS's: one round trip (none before the first
                    // request in 0-RTT), reported as the TLS handshake phase.
                    out.push(Note::Open(Opened {
                        connect: Duration::ZERO,
                        tls: Some(handshake.time),
                        protocol: "h3",
                        resumption: Some(Resumption {
                            resumed: handshake.resumed,
                            early_data: match handshake.early_data {
                                EarlyData::NotSent => None,
                                EarlyData::Accepted => Some(true),
                                EarlyData::Rejected => Some(false),
                            },
                        }),
                        negotiated: None,
                        upgrade: None,
                    }));
                }
                H3Event::Done { token, response } => {
                    let x = ticket(token);
                    // A ticket the loop cancelled since: no note comes for it.
                    let Some(i) = self.sent.iter().position(|s| *s == x) else {
                        continue;
                    };
                    self.sent.swap_remove(i);
                    out.push(Note::Response(x, response));
                }
                H3Event::Failed {
                    token,
                    failure,
                    received,
                    unseen,
                } => {
                    let x = ticket(token);
                    let Some(i) = self.sent.iter().position(|s| *s == x) else {
                        continue;
                    };
                    self.sent.swap_remove(i);
                    self.going_away |= unseen;
                    out.push(Note::Failed(Failed {
                        ticket: x,
                        failure,
                        received,
                        unseen,
                        sent: None,
                    }));
                }
                // New credit: what waits in the queue goes at the next pump, which this event
                // causes (the queue was tried at the top of this one, after the credit came).
                H3Event::StreamsAvailable => again |= !self.queued.is_empty(),
                H3Event::Stream { token, last } => {
                    let x = ticket(token);
                    if self.sent.contains(&x) {
                        out.push(Note::Stream(x, last));
                    }
                }
                H3Event::Closed(failure) => {
                    let failure = failure.unwrap_or_else(|| {
                        Failure::new(
                            herd_metrics::ErrorKind::QuicClosed,
                            "the server closed the connection",
                        )
                    });
                    self.end(&failure, out);
                    return None;
                }
            }
        }
        Some(again)
    }
}

impl Session<H3Wire> for H3Session {
    fn room(&self) -> usize {
        if self.closed || self.last || self.going_away {
            return 0;
        }
        let cap = self.limit.map_or(self.window, |l| l.min(self.window));
        cap.saturating_sub(self.in_flight())
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, last: bool) {
        self.last |= last;
        self.queued.push_back((ticket, req.clone()));
    }

    fn pump(
        &mut self,
        t: &mut H3Wire,
        conn: &mut H3Conn,
        _ready: Ready,
        now: Instant,
        _scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        if self.closed {
            return;
        }
        for c in self.cancelled.drain(..) {
            t.slot(conn).h3.cancel(token(c), now);
        }
        if let Some(f) = t.slot(conn).dead.clone() {
            return self.end(&f, out);
        }
        self.send_queued(t, conn, now, out);
        let Some(again) = self.take_events(t, conn, out) else {
            return;
        };
        if again {
            // The handshake just finished: what waited for it goes on a stream now.
            self.pump(t, conn, Ready::WRITE, now, &mut [], out);
        } else if self.going_away && self.in_flight() == 0 && !self.closed {
            // The server said it would close: its last answer is in, the connection is done.
            self.closed = true;
            out.push(Note::Closed);
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        if let Some(i) = self.queued.iter().position(|(t, _)| *t == ticket) {
            self.queued.remove(i);
            return true;
        }
        if let Some(i) = self.sent.iter().position(|t| *t == ticket) {
            self.sent.swap_remove(i);
            self.cancelled.push(ticket);
            return true;
        }
        false
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for (ticket, _) in self.queued.drain(..) {
            Self::fail(ticket, why.clone(), true, out);
        }
        for ticket in self.sent.drain(..) {
            Self::fail(ticket, why.clone(), false, out);
        }
    }

    fn in_flight(&self) -> usize {
        self.queued.len() + self.sent.len()
    }

    fn limit(&self) -> Option<usize> {
        // Before the handshake the server's credit is unknown: the loop's first guess holds.
        let known = match (self.limit, self.opened) {
            (Some(l), _) => l,
            (None, false) => FIRST_CREDIT,
            (None, true) => return None,
        };
        (known < self.window).then_some(known)
    }
}
