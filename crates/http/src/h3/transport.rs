//! HTTP/3 as the engine's [`Transport`], over the thread's [`H3Wire`] (wire.rs): a connection is
//! a slot of the wire, and its session an [`H3Session`] driving it.

use super::connection::H3Connection;
use super::session::H3Session;
use super::wire::{transmit, H3Conn, H3Wire, Slot};
use crate::alarm::ALARM;
use herd_engine::{Clock, Event, Failure, Io, SystemClock, Transport};
use herd_metrics::ErrorKind;
use mio::net::UdpSocket;
use mio::{Interest, Token};
use quinn_udp::UdpSocketState;
use std::cmp::Reverse;
use std::time::{Duration, Instant};

impl Transport for H3Wire {
    type Conn = H3Conn;
    type Session = H3Session;

    fn connect(&mut self, token: usize) -> Result<H3Conn, Failure> {
        let mut socket = UdpSocket::bind(self.config.local()).map_err(|e| Failure::io(&e))?;
        socket
            .connect(self.config.remote())
            .map_err(|e| Failure::io(&e))?;
        let udp = UdpSocketState::new((&socket).into()).map_err(|e| Failure::io(&e))?;
        let h3 = H3Connection::connect(&self.config, Instant::now())?;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        self.poll
            .registry()
            .register(&mut socket, Token(slot), Interest::READABLE)
            .map_err(|e| Failure::io(&e))?;
        self.slots[slot] = Some(Slot {
            socket,
            udp,
            h3,
            token,
            dead: None,
            told: false,
            ready: false,
            timer: None,
        });
        // Its first flight goes out with the turn.
        self.mark(slot);
        Ok(H3Conn { slot })
    }

    fn establish(&mut self, conn: &mut H3Conn) -> Result<bool, Failure> {
        let s = self.slot(conn);
        match &s.dead {
            Some(f) => Err(f.clone()),
            None => Ok(s.h3.handshake().is_some()),
        }
    }

    /// HTTP/3 moves frames through its session, not bytes through here.
    fn write(&mut self, _: &mut H3Conn, _: &[u8]) -> Result<Io, Failure> {
        Err(Failure::new(
            ErrorKind::Other,
            "an HTTP/3 connection takes requests through its session",
        ))
    }

    fn read(&mut self, _: &mut H3Conn, _: &mut [u8]) -> Result<Io, Failure> {
        Ok(Io::Blocked)
    }

    fn close(&mut self, conn: H3Conn) {
        let Some(mut s) = self.slots[conn.slot].take() else {
            return;
        };
        let now = Instant::now();
        if s.dead.is_none() && !s.h3.is_over() {
            s.h3.close(now);
            transmit(&mut s, self.config.remote(), now, &mut self.out);
        }
        let _ = self.poll.registry().deregister(&mut s.socket);
        self.free.push(conn.slot);
    }

    fn wait(&mut self, until: Instant, out: &mut Vec<Event>) -> Result<(), Failure> {
        let now = Instant::now();
        self.flush(now);
        let until = self.next_timer().map_or(until, |t| t.min(until));
        self.wakeup
            .wait(&mut self.poll, &mut self.events, until)
            .map_err(|e| Failure::io(&e))?;
        let now = Instant::now();
        let mut woken = std::mem::take(&mut self.woken);
        woken.clear();
        for ev in self.events.iter() {
            if ev.token() == ALARM {
                self.wakeup.fired();
            } else {
                woken.push(ev.token().0);
            }
        }
        for &i in &woken {
            self.receive(i, now);
        }
        self.woken = woken;
        while let Some(&Reverse((at, i))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(s) = self.slots[i].as_mut().filter(|s| s.timer == Some(at)) else {
                continue;
            };
            s.timer = None;
            s.h3.handle_timeout(now);
            self.mark(i);
        }
        for &i in &self.ready {
            let Some(s) = self.slots[i].as_mut() else {
                continue;
            };
            let newly_dead = s.dead.is_some() && !s.told;
            if s.h3.has_events() || newly_dead {
                s.told |= s.dead.is_some();
                out.push(Event {
                    token: s.token,
                    readable: true,
                    writable: false,
                    closed: s.dead.is_some(),
                });
            }
        }
        // What the datagrams and timers asked for (acks, the next flight) goes out now, not
        // after the loop's turn.
        self.flush(now);
        Ok(())
    }

    /// QUIC's TLS is 1.3 and its ALPN `h3`; the cipher suite comes with the server's session
    /// tickets, after the handshake: the loop asks when the connection closes.
    fn negotiated(&self, conn: &H3Conn) -> Option<herd_engine::Negotiated> {
        let slot = self.slots.get(conn.slot)?.as_ref()?;
        Some(herd_engine::Negotiated {
            version: "TLSv1.3",
            cipher: self.config.tickets.suite()?,
            alpn: slot.h3.alpn(),
        })
    }

    fn coalesce(&mut self, nap: Duration) {
        self.wakeup.nap(nap);
    }

    fn session(&self, _: &H3Conn, window: usize, _started: Instant) -> H3Session {
        H3Session::new(window)
    }

    fn clock(&self) -> &dyn Clock {
        &SystemClock
    }
}
