//! Exchanges on connections: placing a request on a connection (the user's last one when it has
//! room, else the least busy, else a new one up to the cap, else a wait for a free place),
//! pumping sessions and reading their notes, recording outcomes, the retries (the stale
//! keep-alive one, and requests the server never saw), the server's close awaited (`linger`),
//! exact deadlines, and cutting off what is still in flight at the end.

use super::links::token;
use super::record::{outcome, Span};
use super::user::{Resume, State};
use super::{Loop, LINGER, STALE_AFTER};
use crate::script::Last;
use crate::session::{Failed, Note, Ready, Session, Ticket};
use crate::{Failure, Response, Script, Transport};
use herd_metrics::ErrorKind;
use std::time::Instant;

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// Starts exchanging `req` for user `i` at `now`.
    pub(super) fn send(&mut self, i: usize, req: crate::Request, now: Instant) {
        let x = self.exchanges.start(i, req, now);
        self.users[i].state = State::Busy;
        self.deadlines.insert(x.slot as usize, now + self.timeout);
        if !self.place(x, now) {
            self.waiting.push_back(x);
        }
    }

    /// Hands exchange `x` to a connection with room, or to a new one: `false` when every
    /// connection is full and the cap is reached (it waits for a place).
    fn place(&mut self, x: Ticket, now: Instant) -> bool {
        let Some(ex) = self.exchanges.get(x) else {
            return true;
        };
        let (user, fresh) = (ex.user as usize, ex.fresh);
        let mut pick = None;
        if !fresh {
            if let Some((l, g)) = self.users[user].link {
                if self.has_room(l, g) {
                    pick = Some(l);
                }
            }
            if pick.is_none() && self.sharing {
                pick = self.least_busy();
            }
        }
        let l = match pick {
            Some(l) => l,
            None if self.links.live < self.cap => match self.open(now) {
                Ok(l) => l,
                Err(f) => {
                    self.fail(x, f, 0, now);
                    return true;
                }
            },
            None => return false,
        };
        self.submit(l, x, now);
        true
    }

    fn has_room(&mut self, l: u32, g: u32) -> bool {
        self.links.get(l, g).is_some_and(|k| {
            k.linger.is_none()
                && !k.retiring
                && !k.server_closes
                && k.session.as_ref().is_some_and(|s| s.room() > 0)
        })
    }

    /// The open connection with room and the fewest exchanges in flight.
    fn least_busy(&self) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (l, k) in self.links.slots.iter().enumerate() {
            let Some(s) = k.session.as_ref() else {
                continue;
            };
            if k.linger.is_some() || k.retiring || k.server_closes || s.room() == 0 {
                continue;
            }
            let busy = s.in_flight();
            if best.is_none_or(|(b, _)| busy < b) {
                best = Some((busy, l as u32));
            }
        }
        best.map(|(_, l)| l)
    }

    /// Opens a new connection.
    fn open(&mut self, now: Instant) -> Result<u32, Failure> {
        let (slot, generation) = self.links.reserve(now);
        match self.t.connect(token(slot, generation)) {
            Ok(conn) => {
                let session = self.t.session(&conn, self.window, now);
                self.links.fill(slot, conn, session, now);
                Ok(slot)
            }
            Err(f) => {
                self.links.release(slot);
                Err(f)
            }
        }
    }

    /// Submits exchange `x` on connection `l`; the write follows in a pump.
    fn submit(&mut self, l: u32, x: Ticket, now: Instant) {
        let calls = self.shared.plan.calls_per_conn;
        let link = &mut self.links.slots[l as usize];
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let (Some(session), Some(req)) = (link.session.as_mut(), ex.req.as_ref()) else {
            return;
        };
        ex.last_call = calls.is_some_and(|k| link.uses + 1 >= k);
        link.retiring |= ex.last_call;
        ex.stale_candidate = link.opened.is_some()
            && link.uses > 0
            && now.saturating_duration_since(link.last_used) >= STALE_AFTER;
        link.uses += 1;
        link.last_used = now;
        ex.link = Some((l, link.generation));
        ex.on_new = link.opened.is_none();
        ex.sent = link.opened.map(|_| now);
        session.submit(x, req, ex.last_call);
        self.users[ex.user as usize].link = Some((l, link.generation));
        self.kicks.push((l, link.generation));
    }

    /// Pumps connection `l` (of generation `g`) as `ready` allows, then every connection given
    /// a request meanwhile.
    pub(super) fn pump(&mut self, l: u32, g: u32, ready: Ready) {
        self.pump_once(l, g, ready);
        while let Some((l, g)) = self.kicks.pop() {
            self.pump_once(l, g, Ready::WRITE);
        }
    }

    /// Writes what was just submitted.
    pub(super) fn flush_kicks(&mut self) {
        while let Some((l, g)) = self.kicks.pop() {
            self.pump_once(l, g, Ready::WRITE);
        }
    }

    fn pump_once(&mut self, l: u32, g: u32, ready: Ready) {
        let now = self.now();
        let Some(link) = self.links.get(l, g) else {
            return;
        };
        let (Some(conn), Some(session)) = (link.conn.as_mut(), link.session.as_mut()) else {
            return;
        };
        let mut notes = std::mem::take(&mut self.notes);
        session.pump(&mut self.t, conn, ready, now, &mut self.scratch, &mut notes);
        self.settle(l, g, &mut notes, now);
        self.notes = notes;
    }

    /// Acts on what connection `l`'s session reported, in order.
    fn settle(&mut self, l: u32, g: u32, notes: &mut Vec<Note>, now: Instant) {
        let mut closed = false;
        for note in notes.drain(..) {
            match note {
                Note::Open(o) => {
                    if let Some(link) = self.links.get(l, g) {
                        link.opened = Some(o);
                        link.ready_at = Some(now);
                        self.tally.connection_opened();
                    }
                }
                Note::FirstByte(_) => {}
                Note::Response(x, resp) => {
                    if !resp.keep_alive {
                        if let Some(link) = self.links.get(l, g) {
                            link.server_closes = true;
                        }
                    }
                    self.complete(x, resp, now);
                }
                Note::Failed(f) => self.failed(f, now),
                Note::Closed => closed = true,
            }
        }
        if closed {
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
        if !idle || link.linger.is_some() {
            return;
        }
        if link.server_closes {
            // Wait (briefly) for the server's close before closing ours, so the TIME_WAIT
            // lands on the server's side and the generator's ports stay free at high
            // connection rates, as with ab.
            self.links.linger(l, now + LINGER);
            self.lingering.push_back((l, g, now + LINGER));
        } else if link.retiring {
            self.drop_link(l, g);
        }
    }

    /// Closes connection `l` (of generation `g`), counted closed.
    pub(super) fn drop_link(&mut self, l: u32, g: u32) {
        if self.links.get(l, g).is_none() {
            return;
        }
        if let Some((conn, opened)) = self.links.take(l) {
            if opened {
                self.tally.connection_closed();
            }
            self.t.close(conn);
        }
    }

    /// Exchanges waiting for a place take the places freed.
    fn unqueue(&mut self, now: Instant) {
        while let Some(&x) = self.waiting.front() {
            if self.exchanges.get(x).is_none() {
                self.waiting.pop_front();
                continue;
            }
            if !self.place(x, now) {
                return;
            }
            self.waiting.pop_front();
        }
    }

    /// Records exchange `x`'s full response and takes its user on.
    fn complete(&mut self, x: Ticket, mut resp: Response, now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let i = ex.user as usize;
        let (connect, sent) = self.opening(x);
        self.deadlines.remove(x.slot as usize);
        let Some(req) = self.exchanges.end(x) else {
            return;
        };
        let ctx = self.ctx(i, now);
        let verdict = self
            .script
            .judge(&mut self.users[i].script, &req, &resp, ctx);
        let span = self.span(i, sent, now, connect);
        let outcome = outcome(&req, &resp, span, Ok(verdict));
        self.finish(i, now, &outcome);
        let u = &mut self.users[i];
        u.state = State::Free;
        // A think, or the next iteration, is measured from now on.
        u.intended = now;
        self.step(i, Last::Response(&resp), now);
        resp.reset();
    }

    /// The connect time exchange `x` bears (when it waited for its connection to open) and
    /// when it was sent.
    fn opening(&mut self, x: Ticket) -> (Option<std::time::Duration>, Option<Instant>) {
        let Some(ex) = self.exchanges.get(x) else {
            return (None, None);
        };
        let (on_new, sent, link) = (ex.on_new, ex.sent, ex.link);
        let Some((l, g)) = link else {
            return (None, sent);
        };
        match self.links.get(l, g) {
            Some(k) if on_new => {
                let connect = k.opened.map(|o| o.connect + o.tls.unwrap_or_default());
                (connect, k.ready_at)
            }
            _ => (None, sent),
        }
    }

    /// A session reported exchange `f.ticket` failed: sent again when that is safe, else
    /// recorded.
    fn failed(&mut self, f: Failed, now: Instant) {
        let Some(ex) = self.exchanges.get(f.ticket) else {
            return;
        };
        // A request the server never saw goes again as often as that happens (each time a
        // response came first, so the run moves on); the stale retry, a guess, only once.
        let stale = ex.stale_candidate
            && !ex.retried
            && f.received == 0
            && matches!(f.failure.kind, ErrorKind::Eof | ErrorKind::Reset);
        let unseen = f.unseen && ex.req.as_ref().is_some_and(|r| r.idempotent());
        if !ex.ended && !self.stopping && (stale || unseen) {
            ex.retried = true;
            ex.stale_candidate = false;
            ex.fresh = stale;
            ex.link = None;
            ex.sent = None;
            ex.on_new = false;
            if !self.place(f.ticket, now) {
                self.waiting.push_back(f.ticket);
            }
            return;
        }
        self.fail(f.ticket, f.failure, f.received, now);
    }

    /// Records exchange `x` as failed with `f`; its user resumes from the loop.
    pub(super) fn fail(&mut self, x: Ticket, f: Failure, received: u64, now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let i = ex.user as usize;
        let (connect, sent) = self.opening(x);
        self.deadlines.remove(x.slot as usize);
        let Some(req) = self.exchanges.end(x) else {
            return;
        };
        let resp = Response {
            bytes_received: received,
            ..Response::default()
        };
        let span = self.span(i, sent, now, connect);
        let outcome = outcome(&req, &resp, span, Err(f.clone()));
        self.finish(i, now, &outcome);
        let u = &mut self.users[i];
        u.intended = now;
        u.state = State::Free;
        u.resume = Resume::Failed(f);
        self.resume.push(i);
    }

    /// User `i`'s exchange, sent at `sent` and ended at `done`.
    fn span(
        &self,
        i: usize,
        sent: Option<Instant>,
        done: Instant,
        connect: Option<std::time::Duration>,
    ) -> Span {
        Span {
            measure_start: self.measure_start,
            intended: self.users[i].intended,
            sent,
            done,
            connect,
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

    /// Ends exchange `x` with `why` (its deadline, or the end of the run): alone when its
    /// protocol allows, else with its connection, whose other exchanges end the same way.
    fn end_exchange(&mut self, x: Ticket, why: Failure, now: Instant) {
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        ex.ended = true;
        ex.stale_candidate = false;
        let Some((l, g)) = ex.link else {
            return self.fail(x, why, 0, now);
        };
        let Some(link) = self.links.get(l, g) else {
            return self.fail(x, why, 0, now);
        };
        let Some(session) = link.session.as_mut() else {
            return self.fail(x, why, 0, now);
        };
        if session.cancel(x) {
            return self.fail(x, why, 0, now);
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
        let link = self.exchanges.get(x).and_then(|ex| ex.link);
        match link {
            Some((l, g)) => self.links.get(l, g).is_some_and(|k| k.opened.is_none()),
            None => false,
        }
    }

    /// Fails every exchange whose deadline has come.
    pub(super) fn fire_deadlines(&mut self, now: Instant) {
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
