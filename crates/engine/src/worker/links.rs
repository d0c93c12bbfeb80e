//! The connections of one worker: a slab of links with generations. A link's slot and
//! generation make its poll token, so a closed connection's late events never reach the one
//! that took its slot. A link carries as many exchanges as its session has room for; users
//! hold none of it.

use crate::session::Opened;
use std::time::{Duration, Instant};

/// A reused connection idle this long that fails with nothing received is taken to have been
/// closed by the server's keep-alive timeout: the request is retried once on a new one, whatever
/// its method (one that is safe to repeat is retried after any reuse).
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);

/// What the loop keeps of an open connection's opening: the parts of [`Opened`] its
/// exchanges and counts read later, so ten thousand connections do not each hold the rest.
/// The durations are kept as nanoseconds (exactly: u64 holds 584 years), 8 bytes each where a
/// `Duration` is 16 and an `Option<Duration>` 16 more.
#[derive(Clone, Copy)]
pub(super) struct Up {
    /// When it opened: the send instant of the exchanges that waited for it.
    pub at: Instant,
    connect_ns: u64,
    tls_ns: u64,
    has_tls: bool,
    pub protocol: &'static str,
    /// Its TLS facts were told when it opened (QUIC's come later, with a session ticket).
    pub told: bool,
}

impl Up {
    pub fn new(o: &Opened, at: Instant) -> Self {
        // Requests the server took as early data (0-RTT) left with the handshake's first
        // flight, not at its end: their service time starts there.
        let early = o.resumption.is_some_and(|r| r.early_data == Some(true));
        let at = match o.tls {
            Some(tls) if early => at.checked_sub(tls).unwrap_or(at),
            _ => at,
        };
        Up {
            at,
            connect_ns: o.connect.as_nanos() as u64,
            tls_ns: o.tls.map_or(0, |t| t.as_nanos() as u64),
            has_tls: o.tls.is_some(),
            protocol: o.protocol,
            told: o.negotiated.is_some(),
        }
    }

    /// TCP set-up (and a proxy's tunnel), TLS apart.
    pub fn connect(&self) -> Duration {
        Duration::from_nanos(self.connect_ns)
    }

    /// The TLS handshake, for a connection that had one.
    pub fn tls(&self) -> Option<Duration> {
        self.has_tls.then(|| Duration::from_nanos(self.tls_ns))
    }
}

pub(super) struct Link<C, S> {
    pub conn: Option<C>,
    pub session: Option<S>,
    /// Bumped each time the slot takes a new connection: part of its token.
    pub generation: u32,
    /// How it opened, once it has (it then counts as open).
    pub opened: Option<Up>,
    /// An exchange carried its opening (connect, TLS) into the measurements: the others that
    /// waited for it (HTTP/2's first streams) do not count the connection again.
    pub opening_told: bool,
    /// Exchanges handed to it.
    pub uses: u64,
    /// From when an exchange handed to it counts as sent after a long idle (its last one's
    /// hand-over + `STALE_AFTER`): kept as that instant, one comparison per request where a
    /// duration since the last one cost ~60 instructions.
    pub stale_at: Instant,
    /// Its last call went out (`--calls-per-conn`): it takes no more.
    pub retiring: bool,
    /// A response said the server closes it: once empty, it waits for the server's close.
    pub server_closes: bool,
    /// Waiting for the server's close (until the time the loop's `lingering` queue holds); it
    /// no longer counts against the cap.
    pub linger: bool,
    /// Connections this worker had filled before this one: its number in the requests log.
    pub serial: u64,
    /// Users whose last exchange it carried: with `Plan::in_turn` a new user goes to the
    /// connection fewest users share, so each carries its share of the schedule.
    pub bound: u32,
    /// Its user's own WebSocket ([`crate::SocketRole`]): only that user's messages go on it,
    /// and it is not counted in `live` (the cap is on the run's other connections).
    pub socket: bool,
}

pub(super) struct Links<C, S> {
    pub slots: Vec<Link<C, S>>,
    free: Vec<u32>,
    /// Connections carrying or able to carry exchanges (opening, open, not lingering).
    pub live: usize,
    /// Connections filled so far.
    filled: u64,
}

impl<C, S> Default for Links<C, S> {
    fn default() -> Self {
        Links {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            filled: 0,
        }
    }
}

/// The token a connection's events carry: its slot and generation.
pub(super) fn token(slot: u32, generation: u32) -> usize {
    slot as usize | ((generation as usize) << 32)
}

/// An `Option<u64>` in 8 bytes (the option is 16), `u64::MAX` standing for `None`: users and
/// exchanges, ten thousand of each, hold a few, and none of their values comes near it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct OptU64(u64);

impl OptU64 {
    pub const NONE: OptU64 = OptU64(u64::MAX);

    pub fn get(self) -> Option<u64> {
        (self != Self::NONE).then_some(self.0)
    }
}

impl From<Option<u64>> for OptU64 {
    fn from(v: Option<u64>) -> Self {
        OptU64(v.unwrap_or(u64::MAX))
    }
}

/// A connection's slot and generation, or none, in 8 bytes (an `Option<(u32, u32)>` is 12):
/// its [`token`] in an [`OptU64`] (slot and generation `u32::MAX`, never a real slot, are none).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct LinkRef(OptU64);

impl LinkRef {
    pub const NONE: LinkRef = LinkRef(OptU64::NONE);

    pub fn new(slot: u32, generation: u32) -> Self {
        LinkRef(Some(token(slot, generation) as u64).into())
    }

    pub fn get(self) -> Option<(u32, u32)> {
        self.0.get().map(|t| untoken(t as usize))
    }

    pub fn take(&mut self) -> Option<(u32, u32)> {
        std::mem::replace(self, Self::NONE).get()
    }
}

/// The slot and generation a [`token`] names.
pub(super) fn untoken(token: usize) -> (u32, u32) {
    ((token & 0xffff_ffff) as u32, (token >> 32) as u32)
}

impl<C, S> Links<C, S> {
    /// A free slot for a new connection and the generation it will have.
    pub fn reserve(&mut self, now: Instant) -> (u32, u32) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Link {
                    conn: None,
                    session: None,
                    generation: 0,
                    opened: None,
                    opening_told: false,
                    uses: 0,
                    stale_at: now + STALE_AFTER,
                    retiring: false,
                    server_closes: false,
                    linger: false,
                    serial: 0,
                    bound: 0,
                    socket: false,
                });
                self.slots.len() as u32 - 1
            }
        };
        let l = &mut self.slots[slot as usize];
        l.generation = l.generation.wrapping_add(1);
        (slot, l.generation)
    }

    /// Gives back a slot reserved for a connection that could not even start.
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Puts a new connection in its reserved slot; `socket`: a user's own WebSocket, not
    /// counted in `live`.
    pub fn fill(&mut self, slot: u32, conn: C, session: S, now: Instant, socket: bool) {
        let l = &mut self.slots[slot as usize];
        l.socket = socket;
        l.conn = Some(conn);
        l.session = Some(session);
        l.opened = None;
        l.opening_told = false;
        l.uses = 0;
        l.stale_at = now + STALE_AFTER;
        l.retiring = false;
        l.server_closes = false;
        l.linger = false;
        l.bound = 0;
        l.serial = self.filled;
        self.filled += 1;
        self.live += usize::from(!socket);
    }

    /// The link in `slot` if it still holds the connection of `generation`.
    pub fn get(&mut self, slot: u32, generation: u32) -> Option<&mut Link<C, S>> {
        self.slots
            .get_mut(slot as usize)
            .filter(|l| l.generation == generation && l.conn.is_some())
    }

    /// Empties `slot`: its connection and whether it had opened.
    pub fn take(&mut self, slot: u32) -> Option<(C, bool)> {
        let l = self.slots.get_mut(slot as usize)?;
        let conn = l.conn.take()?;
        l.session = None;
        if !std::mem::take(&mut l.linger) && !l.socket {
            self.live -= 1;
        }
        l.generation = l.generation.wrapping_add(1);
        self.free.push(slot);
        Some((conn, l.opened.take().is_some()))
    }

    /// `slot` now waits for the server's close.
    pub fn linger(&mut self, slot: u32) {
        let l = &mut self.slots[slot as usize];
        if !l.linger {
            l.linger = true;
            self.live -= usize::from(!l.socket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Up;
    use crate::session::Opened;
    use crate::Resumption;
    use std::time::{Duration, Instant};

    fn opened(early_data: Option<bool>) -> Opened {
        Opened {
            connect: Duration::ZERO,
            tls: Some(Duration::from_millis(5)),
            protocol: "h3",
            resumption: Some(Resumption {
                resumed: true,
                early_data,
            }),
            negotiated: None,
            upgrade: None,
        }
    }

    #[test]
    fn an_opening_keeps_its_connect_and_tls_times_to_the_nanosecond() {
        let mut o = opened(None);
        o.connect = Duration::new(3, 123_456_789);
        let up = Up::new(&o, Instant::now());
        assert_eq!((up.connect(), up.tls()), (o.connect, o.tls));
        o.tls = None;
        assert_eq!(Up::new(&o, Instant::now()).tls(), None);
        o.tls = Some(Duration::ZERO);
        assert_eq!(Up::new(&o, Instant::now()).tls(), Some(Duration::ZERO));
    }

    #[test]
    fn requests_taken_in_0rtt_were_sent_when_the_handshake_began_others_at_its_end() {
        let end = Instant::now() + Duration::from_secs(1);
        let began = end - Duration::from_millis(5);
        assert_eq!(Up::new(&opened(Some(true)), end).at, began);
        // Refused early data went again after the handshake; without 0-RTT it waited for it.
        assert_eq!(Up::new(&opened(Some(false)), end).at, end);
        assert_eq!(Up::new(&opened(None), end).at, end);
    }
}
