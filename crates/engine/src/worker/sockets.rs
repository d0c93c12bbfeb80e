//! Users' own WebSockets in a run of HTTP requests (a workload's `ws:` steps beside its
//! requests, [`crate::SocketRole`]): a user's socket is a connection of its own, opened by its
//! Upgrade exchange and carrying only that user's messages after it. HTTP requests never go
//! on it (it is not among the connections `place.rs` picks from), it is not counted against
//! the cap, and the user's last HTTP connection stays its last: the next request goes there as
//! if the socket were not. Plain runs never come here: `send` turns off on the request's
//! `socket` alone.

use super::links::LinkRef;
use super::user::State;
use super::Loop;
use crate::session::Ticket;
use crate::{Failure, Request, Script, Session, SocketRole, Transport};
use herd_metrics::ErrorKind;
use std::time::Instant;

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// Starts exchanging `req` (an Upgrade or a message) on user `i`'s own socket at `now`.
    pub(super) fn send_on_socket(&mut self, i: usize, req: Request, now: Instant) {
        let role = req.socket;
        let x = self.exchanges.start(i, req, now);
        self.users[i].state = State::Busy;
        self.deadlines.insert(x.slot as usize, now + self.timeout);
        let held = self.socket_of(i);
        match role {
            SocketRole::Open => {
                // A socket the user still holds (its last message was not sent) ends here.
                if let Some((l, g)) = held {
                    self.drop_link(l, g);
                }
                match self.open_socket(x, now) {
                    Ok((l, g)) => {
                        if self.sockets.len() <= i {
                            self.sockets
                                .resize(self.users.len().max(i + 1), LinkRef::NONE);
                        }
                        self.sockets[i] = LinkRef::new(l, g);
                        self.submit_socket(l, x, now);
                    }
                    Err(f) => self.fail(x, f, (0, None), now),
                }
            }
            _ => {
                let room = held.filter(|&(l, g)| {
                    self.links
                        .get(l, g)
                        .and_then(|k| k.session.as_ref())
                        .is_some_and(|s| s.room() > 0)
                });
                match room {
                    Some((l, _)) => self.submit_socket(l, x, now),
                    None => {
                        let f = Failure::new(
                            ErrorKind::WsClosed,
                            "no open WebSocket to send the message on: its Upgrade was refused \
                             or failed, or the socket closed",
                        );
                        self.fail(x, f, (0, None), now);
                    }
                }
            }
        }
    }

    /// User `i`'s socket, while its connection lives.
    fn socket_of(&mut self, i: usize) -> Option<(u32, u32)> {
        let (l, g) = self.sockets.get(i)?.get()?;
        self.links.get(l, g).map(|_| (l, g))
    }

    /// Opens a connection for exchange `x`'s Upgrade, its session the socket's.
    fn open_socket(&mut self, x: Ticket, now: Instant) -> Result<(u32, u32), Failure> {
        let Some(req) = self.exchanges.get(x).and_then(|ex| ex.req.clone()) else {
            return Err(Failure::new(ErrorKind::WsHandshake, "no Upgrade to send"));
        };
        let (slot, generation) = self.links.reserve(now);
        let conn = match self.t.connect(super::links::token(slot, generation)) {
            Ok(conn) => conn,
            Err(f) => {
                self.links.release(slot);
                return Err(f);
            }
        };
        match self.t.socket(&conn, &req, now) {
            Some(session) => {
                self.links.fill(slot, conn, session, now, true);
                Ok((slot, generation))
            }
            None => {
                self.t.close(conn);
                self.links.release(slot);
                Err(Failure::new(
                    ErrorKind::WsHandshake,
                    "this run's connections cannot open a WebSocket (HTTP/1.1's Upgrade is \
                     needed: not over HTTP/2 or HTTP/3)",
                ))
            }
        }
    }

    /// Hands exchange `x` to socket `l`, written at once when its session can. (`submit`'s
    /// rules less what a socket has no use for: calls per connection, the stale retry, the
    /// user's last connection, which stays its HTTP one.)
    fn submit_socket(&mut self, l: u32, x: Ticket, now: Instant) {
        let link = &mut self.links.slots[l as usize];
        let Some(ex) = self.exchanges.get(x) else {
            return;
        };
        let (Some(session), Some(req)) = (link.session.as_mut(), ex.req.as_ref()) else {
            return;
        };
        ex.last_call = req.last;
        link.retiring |= req.last;
        link.uses += 1;
        ex.link = LinkRef::new(l, link.generation);
        ex.carrier = Some(link.serial * self.threads as u64 + self.k as u64).into();
        ex.placed = now;
        ex.on_new = link.opened.is_none();
        ex.written = link.opened.is_some();
        session.submit(x, req, ex.last_call);
        let written = match link.conn.as_mut() {
            Some(conn) if link.opened.is_some() => session.write_now(&mut self.t, conn),
            _ => false,
        };
        if !written {
            self.kicks.push((l, link.generation));
        }
    }

    /// User `i` leaves: a socket it still holds idle closes. (A socket's last exchange, marked
    /// so by the workload, closes it with code 1000; one left open because that message was
    /// not sent closes at the user's next connect, or here: not at each iteration's end,
    /// which would be a check on every plain request.)
    pub(super) fn close_socket(&mut self, i: usize) {
        let Some((l, g)) = self.socket_of(i) else {
            return;
        };
        let idle = self
            .links
            .get(l, g)
            .is_some_and(|k| k.session.as_ref().is_none_or(|s| s.in_flight() == 0));
        if idle {
            self.sockets[i] = LinkRef::NONE;
            self.drop_link(l, g);
        }
    }
}
