//! Where a request goes: the connection its user used last when that one has room (so one
//! user to one connection behaves as it always did), else the least busy connection with
//! room when users share them, else a new connection up to the cap, else a first-come,
//! first-served wait for a place.

use super::links::{token, LinkRef, STALE_AFTER};
use super::user::State;
use super::Loop;
use crate::session::Ticket;
use crate::Session;
use crate::{Failure, Script, Transport};
use std::time::Instant;

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// Starts exchanging `req` for user `i` at `now`.
    pub(super) fn send(&mut self, i: usize, req: crate::Request, now: Instant) {
        if req.socket != crate::SocketRole::None {
            return self.send_on_socket(i, req, now);
        }
        let x = self.exchanges.start(i, req, now);
        self.users[i].state = State::Busy;
        self.deadlines.insert(x.slot as usize, now + self.timeout);
        if self.waiting.is_empty() {
            if !self.place(x, now) {
                self.waiting.push_back(x);
                if self.window > 1 && self.open.is_none() {
                    // No place: the window, or the servers' lower limit?
                    self.learn_limit();
                }
            }
        } else {
            // First come, first served: a user whose request just ended does not take the
            // place its connection freed from those already waiting.
            self.waiting.push_back(x);
            self.unqueue(now);
        }
    }

    /// Hands exchange `x` to a connection with room, or to a new one: `false` when every
    /// connection is full and the cap is reached (it waits for a place).
    pub(super) fn place(&mut self, x: Ticket, now: Instant) -> bool {
        let Some(ex) = self.exchanges.get(x) else {
            return true;
        };
        let (user, fresh) = (ex.user as usize, ex.fresh);
        let mut pick = None;
        if !fresh {
            if let Some((l, g)) = self.users[user].link.get() {
                if self.has_room(l, g) {
                    pick = Some(l);
                }
            }
            if pick.is_none() && self.sharing {
                pick = match self.open.as_ref().is_some_and(|d| d.in_turn) {
                    true => self.least_bound(),
                    false => self.least_busy(),
                };
            }
        }
        let l = match pick {
            Some(l) => l,
            None if self.links.live < self.cap => match self.open(now) {
                Ok(l) => l,
                Err(f) => {
                    self.fail(x, f, (0, None), now);
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
            !k.linger
                && !k.retiring
                && !k.server_closes
                && k.session.as_ref().is_some_and(|s| s.room() > 0)
        })
    }

    /// The open connection with room and the fewest exchanges in flight (the first idle one).
    fn least_busy(&self) -> Option<u32> {
        let mut best: Option<(usize, u32)> = None;
        for (l, k) in self.links.slots.iter().enumerate() {
            let Some(s) = k.session.as_ref() else {
                continue;
            };
            if k.linger || k.retiring || k.server_closes || k.socket || s.room() == 0 {
                continue;
            }
            let busy = s.in_flight();
            if busy == 0 {
                // None is less busy than idle: the scan of a thousand connections stops here.
                return Some(l as u32);
            }
            if best.is_none_or(|(b, _)| busy < b) {
                best = Some((busy, l as u32));
            }
        }
        best.map(|(_, l)| l)
    }

    /// In turn (a WebSocket's sockets at `--message-rate`, many to a connection): the open
    /// connection with room that the fewest users share, while it has fewer than its window;
    /// `None` (a new connection, up to the cap) once every one has its window of users.
    fn least_bound(&self) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for (l, k) in self.links.slots.iter().enumerate() {
            let Some(s) = k.session.as_ref() else {
                continue;
            };
            if k.linger || k.retiring || k.server_closes || k.socket || s.room() == 0 {
                continue;
            }
            if best.is_none_or(|(b, _)| k.bound < b) {
                best = Some((k.bound, l as u32));
            }
        }
        match best {
            Some((bound, _)) if bound as usize >= self.window && self.links.live < self.cap => None,
            Some((_, l)) => Some(l),
            None => None,
        }
    }

    /// Opens a new connection.
    fn open(&mut self, now: Instant) -> Result<u32, Failure> {
        let (slot, generation) = self.links.reserve(now);
        match self.t.connect(token(slot, generation)) {
            Ok(conn) => {
                let mut session = self.t.session(&conn, self.window, now);
                if self.open.is_none() && self.window > 1 {
                    session.refill_in_batches();
                }
                self.links.fill(slot, conn, session, now, false);
                Ok(slot)
            }
            Err(f) => {
                self.links.release(slot);
                Err(f)
            }
        }
    }

    /// Submits exchange `x` on connection `l` and writes it when its session can at once;
    /// else the write follows in a pump.
    fn submit(&mut self, l: u32, x: Ticket, now: Instant) {
        let calls = self.shared.plan.calls_per_conn;
        let link = &mut self.links.slots[l as usize];
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let (Some(session), Some(req)) = (link.session.as_mut(), ex.req.as_ref()) else {
            return;
        };
        ex.last_call = calls.is_some_and(|k| link.uses + 1 >= k) || req.last;
        link.retiring |= ex.last_call;
        ex.reused = link.opened.is_some() && link.uses > 0;
        ex.stale_candidate = ex.reused && now >= link.stale_at;
        link.uses += 1;
        link.stale_at = now + STALE_AFTER;
        ex.link = LinkRef::new(l, link.generation);
        ex.carrier = Some(link.serial * self.threads as u64 + self.k as u64).into();
        ex.placed = now;
        ex.on_new = link.opened.is_none();
        ex.written = link.opened.is_some();
        session.submit(x, req, ex.last_call);
        let now_on = LinkRef::new(l, link.generation);
        let was = std::mem::replace(&mut self.users[ex.user as usize].link, now_on);
        if was != now_on {
            link.bound += 1;
        }
        let written = match link.conn.as_mut() {
            Some(conn) if link.opened.is_some() => session.write_now(&mut self.t, conn),
            _ => false,
        };
        // A pipeline's batch is submitted request by request as its users are answered: one
        // pump writes them all, not one pump per request (15 of 16 found nothing due).
        if !written && self.kicks.last() != Some(&(l, link.generation)) {
            self.kicks.push((l, link.generation));
        }
        // The user left the connection it had: one fewer shares it.
        if was != now_on {
            if let Some(old) = was.get().and_then(|(ol, og)| self.links.get(ol, og)) {
                old.bound = old.bound.saturating_sub(1);
            }
        }
    }

    /// Exchanges waiting for a place take the places freed.
    pub(super) fn unqueue(&mut self, now: Instant) {
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
}
