//! The exchanges of one worker in flight: a slab with generations, so a note about an exchange
//! already ended never reaches the one that took its slot. Each has its own deadline (kept in
//! `deadlines.rs` by slot) and names its user and, once placed, its connection.

use super::links::{LinkRef, OptU64};
use crate::session::Ticket;
use crate::Request;
use std::time::Instant;

pub(super) struct Exchange {
    pub generation: u32,
    pub live: bool,
    pub user: u32,
    pub req: Option<Request>,
    /// The connection carrying it; `None` while it waits for one.
    pub link: LinkRef,
    /// The last connection it was handed to, by its number in the run (the requests log's
    /// `connection`): kept when that connection fails under it.
    pub carrier: OptU64,
    /// This request is its connection's last (`--calls-per-conn`).
    pub last_call: bool,
    /// It was written when it was handed to a connection ([`Exchange::sent`]); not while
    /// its connection opens.
    pub written: bool,
    /// When it was handed to a connection.
    pub placed: Instant,
    /// It was handed to a connection still opening: that opening is part of its time.
    pub on_new: bool,
    /// The retry after a reused connection closed under it was used (never twice).
    pub retried: bool,
    /// Times it went again because the server never saw it (bounded by `UNSEEN_TRIES`).
    pub unseen_tries: u32,
    /// It went on a connection that had carried a request before: a close with nothing
    /// received may be the server ending that connection (a keep-alive timeout, a proxy that
    /// closes after each response) as the request crossed it, not an answer to it.
    pub reused: bool,
    /// Its connection was reused after sitting idle: a failure with nothing received may be
    /// the server's keep-alive timeout rather than an error.
    pub stale_candidate: bool,
    /// It goes on a new connection (the stale retry).
    pub fresh: bool,
    /// Its end is decided (deadline, cut off): never retried.
    pub ended: bool,
}

impl Exchange {
    /// When it was written; `None` while its connection opens. Kept as a flag beside
    /// `placed` (a request goes out as it is handed to an open connection), not as an
    /// `Option<Instant>` 16 bytes wide in each of ten thousand exchanges.
    pub fn sent(&self) -> Option<Instant> {
        self.written.then_some(self.placed)
    }
}

#[derive(Default)]
pub(super) struct Exchanges {
    pub slots: Vec<Exchange>,
    free: Vec<u32>,
}

impl Exchanges {
    /// A new exchange of user `user` for `req`, started at `now`.
    pub fn start(&mut self, user: usize, req: Request, now: Instant) -> Ticket {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Exchange {
                    generation: 0,
                    live: false,
                    user: 0,
                    req: None,
                    link: LinkRef::NONE,
                    carrier: OptU64::NONE,
                    last_call: false,
                    written: false,
                    placed: now,
                    on_new: false,
                    retried: false,
                    unseen_tries: 0,
                    reused: false,
                    stale_candidate: false,
                    fresh: false,
                    ended: false,
                });
                self.slots.len() as u32 - 1
            }
        };
        let x = &mut self.slots[slot as usize];
        x.generation = x.generation.wrapping_add(1);
        x.live = true;
        x.user = user as u32;
        x.req = Some(req);
        x.link = LinkRef::NONE;
        x.carrier = OptU64::NONE;
        x.last_call = false;
        x.written = false;
        x.placed = now;
        x.on_new = false;
        x.retried = false;
        x.unseen_tries = 0;
        x.reused = false;
        x.stale_candidate = false;
        x.fresh = false;
        x.ended = false;
        Ticket {
            slot,
            generation: x.generation,
        }
    }

    /// The exchange `t` names, if it is still in flight.
    pub fn get(&mut self, t: Ticket) -> Option<&mut Exchange> {
        self.slots
            .get_mut(t.slot as usize)
            .filter(|x| x.live && x.generation == t.generation)
    }

    /// The exchange in `slot`, whatever its generation, if in flight.
    pub fn ticket(&self, slot: u32) -> Option<Ticket> {
        let x = self.slots.get(slot as usize)?;
        x.live.then_some(Ticket {
            slot,
            generation: x.generation,
        })
    }

    /// Exchanges started and not ended.
    pub fn in_flight(&self) -> u64 {
        (self.slots.len() - self.free.len()) as u64
    }

    /// Ends exchange `t`: its request, and its slot freed.
    pub fn end(&mut self, t: Ticket) -> Option<Request> {
        let x = self.get(t)?;
        x.live = false;
        let req = x.req.take();
        self.free.push(t.slot);
        req
    }
}
