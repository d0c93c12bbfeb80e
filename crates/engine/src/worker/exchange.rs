//! One exchange on the wire: opening a connection, writing the request, reading the response
//! as the socket allows, recording the outcome, the stale keep-alive retry, the server's close
//! awaited (`linger`), exact deadlines, and cutting off what is still in flight at the end.

use super::record::{outcome, Span};
use super::user::{self, Resume, State, Step};
use super::{Loop, LINGER, STALE_AFTER};
use crate::script::Last;
use crate::{Failure, Script, Transport};
use herd_metrics::ErrorKind;
use std::time::Instant;

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// Starts exchanging `req` for user `i` at `now`.
    pub(super) fn send(&mut self, i: usize, req: crate::Request, now: Instant) {
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
    pub(super) fn connect(&mut self, i: usize, now: Instant) {
        let u = &mut self.users[i];
        u.ex.sent = None;
        u.ex.connect_start = now;
        u.link.generation = u.link.generation.wrapping_add(1);
        match self.t.connect(user::token(i, u.link.generation)) {
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
    pub(super) fn drive(&mut self, i: usize, mut readable: bool, mut writable: bool) {
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
    pub(super) fn complete(&mut self, i: usize, now: Instant) {
        self.deadlines.remove(i);
        let ctx = self.ctx(i, now);
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
            let hup = self.users[i].link.hup;
            let server_closes = !self.users[i].ex.resp.keep_alive && !hup;
            if server_closes {
                self.linger(i, now);
            } else {
                // The server hung up first: its side keeps the TIME_WAIT.
                self.tally.server_closed += u64::from(hup);
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
    pub(super) fn fail(&mut self, i: usize, f: Failure) {
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
    pub(super) fn span(&self, i: usize, sent: Option<Instant>, done: Instant) -> Span {
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
    pub(super) fn finish(&mut self, i: usize, done: Instant, outcome: &herd_metrics::Outcome) {
        self.tally.finish(
            self.measure_start,
            self.users[i].iteration,
            done,
            outcome,
            &mut self.recorder,
        );
    }

    pub(super) fn close(&mut self, i: usize) {
        if let Some(c) = self.detach(i) {
            self.t.close(c);
        }
    }

    /// Takes user `i`'s connection off its link (counted closed), leaving the link empty.
    fn detach(&mut self, i: usize) -> Option<T::Conn> {
        let u = &mut self.users[i];
        let conn = u.link.conn.take();
        if std::mem::take(&mut u.link.connected) {
            self.tally.connection_closed();
        }
        u.link.unread = false;
        u.link.hup = false;
        u.link.pending.clear();
        u.link.uses = 0;
        conn
    }

    /// The server said it closes user `i`'s connection: wait (briefly) for its close before
    /// closing ours, so the TIME_WAIT lands on the server's side (the side that closes first
    /// keeps it) and the generator's ports stay free at high connection rates, as with ab.
    pub(super) fn linger(&mut self, i: usize, now: Instant) {
        let Some(mut c) = self.detach(i) else {
            return;
        };
        let closed = matches!(
            self.t.read(&mut c, &mut self.scratch),
            Ok(crate::Io::Closed) | Err(_)
        );
        let u = &mut self.users[i];
        let gen = u.link.generation;
        if let Some((old, _, _)) = u.link.draining.take() {
            self.close_lingering(old);
        }
        if closed {
            self.tally.server_closed += 1;
            self.t.close(c);
        } else {
            self.users[i].link.draining = Some((c, gen, now + LINGER));
        }
    }

    /// An event for user `i`'s lingering connection of generation `gen`: closed once the server
    /// closed it.
    pub(super) fn drain_lingering(&mut self, i: usize, gen: u32, now: Instant) {
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
                self.close_lingering(c);
            }
        }
    }

    /// Closes a connection the server said it closes, counting it as closed by the server when
    /// its close (or reset) has come: then herd's close is the passive one and no TIME_WAIT is
    /// left on herd's side.
    pub(super) fn close_lingering(&mut self, mut c: T::Conn) {
        let closed = matches!(
            self.t.read(&mut c, &mut self.scratch),
            Ok(crate::Io::Closed) | Err(_)
        );
        self.tally.server_closed += u64::from(closed);
        self.t.close(c);
    }

    /// Fails every exchange whose deadline has come.
    pub(super) fn fire_deadlines(&mut self, now: Instant) {
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
    pub(super) fn cut_off(&mut self, why: &str) {
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
}
