//! Exchanges on connections (placing them is `place.rs`): pumping sessions and reading their
//! notes, recording outcomes, the retries (the stale
//! keep-alive one, and requests the server never saw), the server's close awaited (`linger`),
//! exact deadlines, and cutting off what is still in flight at the end.

use super::links::Up;
use super::record::{outcome, Span};
use super::user::{Resume, State};
use super::{Loop, LINGER, UNSEEN_TRIES};
use crate::protocols::count_protocol;
use crate::script::Last;
use crate::session::{count_handshake, Failed, Note, Ready, Ticket};
use crate::Session;
use crate::{Failure, Response, Script, Transport};
use herd_metrics::ErrorKind;
use std::time::{Duration, Instant};

/// What an exchange went through before it was sent.
#[derive(Clone, Copy, Default)]
struct Opening {
    sent: Option<Instant>,
    /// The connection's number in the requests log.
    connection: Option<u64>,
    connect: Option<Duration>,
    tls: Option<Duration>,
    /// The connection's last call (`--calls-per-conn`): sent as `Connection: close`.
    last_call: bool,
}

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// Pumps connection `l` (of generation `g`) as `ready` allows, then every connection given
    /// a request meanwhile.
    pub(super) fn pump(&mut self, l: u32, g: u32, ready: Ready) {
        let now = self.now();
        self.pump_at(l, g, ready, now);
    }

    /// As [`Loop::pump`], at `now`.
    pub(super) fn pump_at(&mut self, l: u32, g: u32, ready: Ready, now: Instant) {
        self.pump_once(l, g, ready, now);
        self.flush_kicks(now);
    }

    /// Writes what was just submitted at `now`: the requests handed out in the same step
    /// share its instant (their `sent`), so the writes need no clock read of their own.
    pub(super) fn flush_kicks(&mut self, now: Instant) {
        while let Some((l, g)) = self.kicks.pop() {
            self.pump_once(l, g, Ready::WRITE, now);
        }
    }

    fn pump_once(&mut self, l: u32, g: u32, ready: Ready, now: Instant) {
        let Some(link) = self.links.get(l, g) else {
            return;
        };
        let (Some(conn), Some(session)) = (link.conn.as_mut(), link.session.as_mut()) else {
            return;
        };
        let mut notes = std::mem::take(&mut self.notes);
        session.pump(&mut self.t, conn, ready, now, &mut self.scratch, &mut notes);
        if let Some(at) = session.wake_at() {
            self.wakes.push(std::cmp::Reverse((at, l, g)));
        }
        self.settle(l, g, &mut notes, now);
        self.notes = notes;
    }

    /// Pumps the sessions whose [`Session::wake_at`] has come.
    pub(super) fn fire_wakes(&mut self, now: Instant) {
        while let Some(&std::cmp::Reverse((at, l, g))) = self.wakes.peek() {
            if at > now {
                break;
            }
            self.wakes.pop();
            let ready = Ready {
                timer: true,
                ..Ready::default()
            };
            self.pump(l, g, ready);
        }
    }

    /// Acts on what connection `l`'s session reported, in order.
    fn settle(&mut self, l: u32, g: u32, notes: &mut Vec<Note>, now: Instant) {
        let mut closed = false;
        // Most pumps that only wrote report nothing: no `Drain` made and dropped for them.
        if !notes.is_empty() {
            // Taken out in place, a unit note left behind, and cleared once: a `Drain` cost
            // more than the one response a pump most often reports.
            for slot in notes.iter_mut() {
                match std::mem::replace(slot, Note::Closed) {
                    Note::Open(o) => {
                        if let Some(link) = self.links.get(l, g) {
                            link.opened = Some(Up::new(&o, now));
                            self.tally.connection_opened();
                            count_protocol(&mut self.tally.protocols, o.protocol, 1, 0);
                            count_handshake(&mut self.tally.protocols, &o);
                            if let Some(n) = o.negotiated {
                                crate::protocols::count_tls(&mut self.tally.tls, n, 1);
                            }
                        }
                    }
                    Note::FirstByte(_) => {}
                    Note::Stream(x, last) => self.stream_moved(x, last, now),
                    Note::Response(x, resp) => {
                        if !resp.keep_alive {
                            if let Some(link) = self.links.get(l, g) {
                                link.server_closes = true;
                            }
                        }
                        self.complete(x, resp, now);
                    }
                    Note::Failed(f) => self.failed(f, now),
                    Note::Handshake(took) => {
                        if let Some(o) = self.links.get(l, g).and_then(|k| k.opened) {
                            crate::session::count_socket_handshake(
                                &mut self.tally.protocols,
                                o.protocol,
                                took,
                            );
                        }
                    }
                    Note::Socket(e) => {
                        if now >= self.measure_start {
                            let at = now.saturating_duration_since(self.measure_start);
                            self.recorder.record_socket(at, e);
                        }
                    }
                    Note::Closed => closed = true,
                }
            }
            notes.clear();
        }
        if closed {
            // The server hung up first: the TIME_WAIT is on its side, not herd's.
            self.tally.server_closed += 1;
            self.drop_link(l, g);
        } else {
            self.tidy(l, g, now);
        }
        if !self.waiting.is_empty() {
            self.unqueue(now);
        }
    }

    /// Connection `l` emptied: lingered on when the server closes it, closed when its last call
    /// is answered.
    fn tidy(&mut self, l: u32, g: u32, now: Instant) {
        let Some(link) = self.links.get(l, g) else {
            return;
        };
        let idle = link.session.as_ref().is_none_or(|s| s.in_flight() == 0);
        if idle && (link.server_closes || link.retiring) {
            self.let_go(l, g, now);
        }
    }

    /// Closes connection `l` (of generation `g`), or, when its server said it closes it,
    /// waits (briefly) for that close before closing ours, so the TIME_WAIT lands on the
    /// server's side and the generator's ports stay free at high connection rates, as with ab.
    pub(super) fn let_go(&mut self, l: u32, g: u32, now: Instant) {
        let Some(link) = self.links.get(l, g) else {
            return;
        };
        if link.linger {
            return;
        }
        if link.server_closes {
            self.links.linger(l);
            self.lingering.push_back((l, g, now + LINGER));
        } else {
            self.drop_link(l, g);
        }
    }

    /// Closes connection `l` (of generation `g`), counted closed.
    pub(super) fn drop_link(&mut self, l: u32, g: u32) {
        if self.links.get(l, g).is_none() {
            return;
        }
        let link = &self.links.slots[l as usize];
        if let Some(o) = link.opened {
            count_protocol(&mut self.tally.protocols, o.protocol, 0, link.uses);
        }
        // A handshake that said nothing when it ended may tell now (QUIC's cipher suite comes
        // with the server's session ticket, after the handshake).
        let untold = link.opened.is_some_and(|o| !o.told);
        if let Some((conn, opened)) = self.links.take(l) {
            if let Some(n) = untold.then(|| self.t.negotiated(&conn)).flatten() {
                crate::protocols::count_tls(&mut self.tally.tls, n, 1);
            }
            if opened {
                self.tally.connection_closed();
            }
            self.t.close(conn);
        }
    }

    /// Records exchange `x`'s full response and takes its user on.
    fn complete(&mut self, x: Ticket, resp: Response, now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let i = ex.user as usize;
        let mut opening = self.opening(x);
        if resp.sent.is_some() {
            // Its session held it back for a batch: the server's time starts at the write.
            opening.sent = resp.sent;
        }
        self.deadlines.remove(x.slot as usize);
        self.event_deadlines.remove(x.slot as usize);
        let Some(req) = self.exchanges.end(x) else {
            return;
        };
        let ctx = self.ctx(i, now);
        let verdict = self
            .script
            .judge(&mut self.users[i].script, &req, &resp, ctx);
        let connection = opening.connection;
        let span = self.span(i, opening, now);
        let outcome = outcome(&req, &resp, span, verdict);
        self.finish(i, now, &outcome, connection);
        let u = &mut self.users[i];
        u.state = State::Free;
        // A think, or the next iteration, is measured from now on.
        u.intended = now;
        self.step(i, Last::Response(&resp), now);
    }

    /// What exchange `x` went through before it was sent: the wait for a place, and the
    /// opening of its connection when it waited for that.
    fn opening(&mut self, x: Ticket) -> Opening {
        let Some(ex) = self.exchanges.get(x) else {
            return Opening::default();
        };
        let mut o = Opening {
            sent: ex.sent(),
            last_call: ex.last_call,
            ..Opening::default()
        };
        let (on_new, link) = (ex.on_new, ex.link.get());
        o.connection = ex.carrier.get();
        if let Some(k) = link.and_then(|(l, g)| self.links.get(l, g)) {
            if on_new {
                if !k.opening_told {
                    k.opening_told = k.opened.is_some();
                    o.connect = k.opened.map(|p| p.connect() + p.tls().unwrap_or_default());
                    o.tls = k.opened.and_then(|p| p.tls());
                }
                o.sent = k.opened.map(|p| p.at);
            }
        }
        o
    }

    /// A session reported exchange `f.ticket` failed: sent again when that is safe, else
    /// recorded. Either way it is one request with one result.
    fn failed(&mut self, mut f: Failed, now: Instant) {
        let Some(ex) = self.exchanges.get(f.ticket) else {
            return;
        };
        // A user's own socket is not to be found again on another connection.
        let socket = ex
            .req
            .as_ref()
            .is_some_and(|r| r.socket != crate::SocketRole::None);
        let idempotent = ex.req.as_ref().is_some_and(|r| r.idempotent()) && !socket;
        // A reused connection that closed before any byte of the answer: the server most
        // likely ended that connection as the request crossed it (its keep-alive timeout, a
        // proxy that closes after each response without saying so). Browsers and curl send
        // the request once more on a new connection: any request after a long idle (the
        // timeout, surely), else only one that is safe to repeat; once, never a retry's retry.
        let closed_under = !f.unseen
            && !socket
            && (ex.stale_candidate || ex.reused && idempotent)
            && !ex.retried
            && f.received == 0
            && matches!(f.failure.kind, ErrorKind::Eof | ErrorKind::Reset);
        // A request the server cannot have seen (after its announced close, a GOAWAY above
        // it, a pipelined tail) goes again: each time a response came first, so the run moves
        // on, but a bounded number of times, so a server that never takes it ends the request.
        let unseen = f.unseen && idempotent;
        // In the drain after the run's end too: the request was meant for before it, and was
        // never answered (nginx's GOAWAY after `keepalive_requests` lands there as anywhere);
        // not after Ctrl-C, which sends nothing more.
        if !ex.ended && self.cancelled_at.is_none() && (closed_under || unseen) {
            // A pipelined tail behind a server that takes one request per connection moves
            // up one place per connection: the window's depth is not a server refusing it.
            let bound = UNSEEN_TRIES.max(self.window as u32);
            if unseen && ex.unseen_tries >= bound {
                f.failure.message = format!(
                    "not taken by the server on {} connections in a row: {}",
                    bound + 1,
                    f.failure.message
                );
                return self.fail(f.ticket, f.failure, (f.received, f.sent), now);
            }
            if closed_under {
                ex.retried = true;
            } else {
                ex.unseen_tries = ex.unseen_tries.saturating_add(1);
            }
            ex.stale_candidate = false;
            ex.reused = false;
            ex.fresh = closed_under;
            // One request, counted on the connection that carries it to its end: the one it
            // leaves does not count it (h2's streams above a GOAWAY made `-n` + a few).
            let left = ex.link.take();
            if let Some(link) = left.and_then(|(l, g)| self.links.get(l, g)) {
                link.uses = link.uses.saturating_sub(1);
            }
            ex.written = false;
            ex.on_new = false;
            self.event_deadlines.remove(f.ticket.slot as usize);
            // It is older than anything waiting: it goes first.
            if !self.waiting.is_empty() || !self.place(f.ticket, now) {
                self.waiting.push_front(f.ticket);
            }
            return;
        }
        self.fail(f.ticket, f.failure, (f.received, f.sent), now);
    }

    /// Records exchange `x` as failed with `f`; its user resumes from the loop.
    /// `bytes`: received of its response, and sent where the session counted them itself.
    pub(super) fn fail(&mut self, x: Ticket, f: Failure, bytes: (u64, Option<u64>), now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        if f.mismatch {
            self.shared.mismatch.found(&f.message);
        }
        let i = ex.user as usize;
        let opening = self.opening(x);
        self.deadlines.remove(x.slot as usize);
        self.event_deadlines.remove(x.slot as usize);
        let Some(req) = self.exchanges.end(x) else {
            return;
        };
        let resp = Response {
            bytes_received: bytes.0,
            bytes_sent: bytes.1.unwrap_or(0),
            ..Response::default()
        };
        let connection = opening.connection;
        let span = self.span(i, opening, now);
        let outcome = outcome(&req, &resp, span, Err(f.clone()));
        self.finish(i, now, &outcome, connection);
        let u = &mut self.users[i];
        u.intended = now;
        u.state = State::Free;
        u.resume = Resume::Failed(Box::new(f));
        self.resume.push(i);
    }

    /// User `i`'s exchange, opened as `o` says and ended at `done`.
    fn span(&self, i: usize, o: Opening, done: Instant) -> Span {
        Span {
            measure_start: self.measure_start,
            intended: self.users[i].intended,
            sent: o.sent,
            done,
            connect: o.connect,
            tls: o.tls,
            last_call: o.last_call,
        }
    }

    /// Counts user `i`'s outcome, ended at `done` on `connection`, unless its iteration began
    /// in the warm-up.
    pub(super) fn finish(
        &mut self,
        i: usize,
        done: Instant,
        outcome: &herd_metrics::Outcome,
        connection: Option<u64>,
    ) {
        let measured = self.tally.finish(
            self.measure_start,
            self.users[i].iteration,
            done,
            outcome,
            &mut self.recorder,
        );
        if let (true, Some(log)) = (measured, self.requests_log.as_mut()) {
            log.push(crate::requests_log::Line::of(outcome, connection));
        }
    }

    /// Ends exchange `x` with `why` (its deadline, or the end of the run): alone when its
    /// protocol allows, else with its connection, whose other exchanges end the same way.
    fn end_exchange(&mut self, x: Ticket, why: Failure, now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        ex.ended = true;
        ex.stale_candidate = false;
        let Some((l, g)) = ex.link.get() else {
            return self.fail(x, why, (0, None), now);
        };
        let Some(link) = self.links.get(l, g) else {
            return self.fail(x, why, (0, None), now);
        };
        let Some(session) = link.session.as_mut() else {
            return self.fail(x, why, (0, None), now);
        };
        if session.cancel(x) {
            // What the session held back for a batch may wait on this exchange: it goes now.
            self.kicks.push((l, g));
            return self.fail(x, why, (0, None), now);
        }
        let mut notes = std::mem::take(&mut self.notes);
        session.abandon(&why, &mut notes);
        self.drop_link(l, g);
        for note in notes.drain(..) {
            if let Note::Failed(f) = note {
                self.failed(f, now);
            }
        }
        self.notes = notes;
        if !self.waiting.is_empty() {
            self.unqueue(now);
        }
    }

    /// Whether exchange `x` waits for its connection to open.
    fn connecting(&mut self, x: Ticket) -> bool {
        let link = self.exchanges.get(x).and_then(|ex| ex.link.get());
        match link {
            Some((l, g)) => self.links.get(l, g).is_some_and(|k| k.opened.is_none()),
            None => false,
        }
    }

    /// Exchange `x`'s event stream moved (its head, or events, arrived; `last`: its last
    /// event): with `--event-timeout`, its wait for the next event starts over, the first
    /// counted from the send.
    fn stream_moved(&mut self, x: Ticket, last: Option<Instant>, now: Instant) {
        let Some(limit) = self.event_timeout else {
            return;
        };
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let from = last.or(ex.sent()).unwrap_or(now);
        self.event_deadlines.insert(x.slot as usize, from + limit);
    }

    /// Fails every event stream whose wait for its next event is over (`sse_stalled`): an
    /// error of its own, its connection ended with it as a request deadline's is.
    fn fire_event_deadlines(&mut self, now: Instant) {
        let Some(limit) = self.event_timeout else {
            return;
        };
        while let Some((slot, at)) = self.event_deadlines.first() {
            if at > now {
                break;
            }
            self.event_deadlines.remove(slot);
            let Some(x) = self.exchanges.ticket(slot as u32) else {
                continue;
            };
            let f = Failure::new(
                ErrorKind::SseStalled,
                format!("the event stream stalled: no event within {limit:?} (the event timeout)"),
            );
            self.end_exchange(x, f, now);
        }
    }

    /// Fails every exchange whose deadline has come.
    pub(super) fn fire_deadlines(&mut self, now: Instant) {
        self.fire_event_deadlines(now);
        while let Some((slot, at)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.remove(slot);
            let Some(x) = self.exchanges.ticket(slot as u32) else {
                continue;
            };
            let f = if self.connecting(x) {
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
            self.end_exchange(x, f, now);
        }
        self.flush_kicks(now);
    }

    /// Ends every exchange still in flight (the drain after the run, or Ctrl-C's grace, is
    /// over): each is counted as `unfinished`, not lost and not waited for.
    pub(super) fn cut_off(&mut self, why: &str) {
        self.stopping = true;
        let now = self.now();
        for slot in self.deadlines.all() {
            if let Some(x) = self.exchanges.ticket(slot as u32) {
                self.end_exchange(x, Failure::new(ErrorKind::Unfinished, why), now);
            }
        }
        for i in std::mem::take(&mut self.resume) {
            self.retire(i);
        }
        for i in 0..self.users.len() {
            if !matches!(self.users[i].state, State::Done | State::Busy) {
                self.retire(i);
            }
        }
    }

    /// Closes the lingering connections whose server did not close them in time.
    pub(super) fn expire_lingering(&mut self, now: Instant) {
        while let Some(&(l, g, until)) = self.lingering.front() {
            if until > now {
                break;
            }
            self.lingering.pop_front();
            self.drop_link(l, g);
        }
    }
}
