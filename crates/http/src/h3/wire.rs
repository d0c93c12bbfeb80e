//! HTTP/3 as the engine's [`Transport`]: each connection is a UDP socket on the thread's mio
//! poll and an [`H3Connection`] kept here, beside the socket, so that [`Transport::wait`] can
//! feed it datagrams and fire its timers (quinn's loss, ack and idle timers join the loop's own
//! wake-up on one timerfd), and every connection's datagrams go out once per loop turn, at the
//! top of `wait`: the requests the sessions submitted since the last turn leave together. The
//! connection's [`H3Session`] hands it requests and turns its events into the loop's notes.

use super::config::H3Config;
use super::connection::H3Connection;
use super::request::H3Request;
use super::session::H3Session;
use crate::alarm::{Wakeup, ALARM};
use crate::{HttpError, Target, TlsOptions};
use herd_engine::{Clock, Event, Failure, Io, Request, SystemClock, Transport};
use herd_metrics::ErrorKind;
use mio::net::UdpSocket;
use mio::{Interest, Poll, Token};
use std::io;
use std::sync::Arc;
use std::time::Instant;

/// Distinct requests whose frames are kept (a workload's names; dynamic requests beyond this
/// are translated again).
const TRANSLATED: usize = 256;

/// HTTP/3 toward one target, built once per run; [`H3Transport::wire`] gives each thread its own.
pub struct H3Transport {
    config: H3Config,
}

impl H3Transport {
    pub fn new(target: &Target, options: TlsOptions) -> Result<H3Transport, HttpError> {
        Ok(H3Transport {
            config: H3Config::new(target, options, super::IDLE_TIMEOUT)?,
        })
    }

    pub fn wire(&self) -> Result<H3Wire, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create a poll: {e}"))?;
        let wakeup = Wakeup::register(poll.registry());
        Ok(H3Wire {
            config: self.config.clone(),
            poll,
            events: mio::Events::with_capacity(1024),
            wakeup,
            slots: Vec::new(),
            free: Vec::new(),
            translated: Vec::new(),
            buf: vec![0; 64 * 1024],
            out: Vec::with_capacity(64 * 1024),
        })
    }
}

pub(crate) struct Slot {
    socket: UdpSocket,
    pub(crate) h3: H3Connection,
    token: usize,
    /// Why the socket failed (ICMP port unreachable), for the session to report.
    pub(crate) dead: Option<Failure>,
    told: bool,
}

/// A connection: its place among the thread's slots.
pub struct H3Conn {
    slot: usize,
}

pub struct H3Wire {
    config: H3Config,
    poll: Poll,
    events: mio::Events,
    wakeup: Wakeup,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Requests already laid out as frames, by their shared bytes.
    translated: Vec<(Arc<[u8]>, H3Request)>,
    buf: Vec<u8>,
    out: Vec<u8>,
}

impl H3Wire {
    pub(crate) fn slot(&mut self, conn: &H3Conn) -> &mut Slot {
        self.slots[conn.slot]
            .as_mut()
            .expect("a live connection's slot")
    }

    /// `req` as frames: laid out once per distinct request (a workload's names), again for
    /// requests made anew each time beyond that.
    pub(crate) fn frames(&mut self, req: &Request) -> Result<H3Request, Failure> {
        if let Some((_, f)) = self
            .translated
            .iter()
            .find(|(b, _)| Arc::ptr_eq(b, &req.bytes))
        {
            return Ok(f.clone().keeping_response(req.keep_response));
        }
        let frames = match &req.parts {
            Some(parts) => H3Request::from_parts(parts, req.head),
            None => H3Request::from_http1(&req.bytes, "https")
                .map_err(|e| Failure::new(ErrorKind::Other, e.to_string()))?,
        };
        if self.translated.len() >= TRANSLATED {
            self.translated.clear();
        }
        self.translated
            .push((Arc::clone(&req.bytes), frames.clone()));
        Ok(frames.keeping_response(req.keep_response))
    }

    /// Sends every connection's pending datagrams; a full socket buffer drops the rest of a
    /// turn's datagrams, which QUIC's loss recovery resends.
    fn flush(&mut self, now: Instant) {
        for s in self.slots.iter_mut().flatten() {
            while let Some(out) = s.h3.poll_transmit(now, &mut self.out) {
                let seg = out.segment.unwrap_or(out.len).max(1);
                for d in self.out[..out.len].chunks(seg) {
                    match s.socket.send(d) {
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                            s.dead.get_or_insert_with(unreachable);
                        }
                        Err(_) => break,
                    }
                }
            }
        }
    }
}

fn unreachable() -> Failure {
    Failure::new(
        ErrorKind::ConnectRefused,
        "nothing listens on the server's UDP port (ICMP port unreachable)",
    )
}

impl Transport for H3Wire {
    type Conn = H3Conn;
    type Session = H3Session;

    fn connect(&mut self, token: usize) -> Result<H3Conn, Failure> {
        let mut socket = UdpSocket::bind(self.config.local()).map_err(|e| Failure::io(&e))?;
        socket
            .connect(self.config.remote())
            .map_err(|e| Failure::io(&e))?;
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
            h3,
            token,
            dead: None,
            told: false,
        });
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
            while let Some(out) = s.h3.poll_transmit(now, &mut self.out) {
                let _ = s.socket.send(&self.out[..out.segment.unwrap_or(out.len)]);
            }
        }
        let _ = self.poll.registry().deregister(&mut s.socket);
        self.free.push(conn.slot);
    }

    fn wait(&mut self, until: Instant, out: &mut Vec<Event>) -> Result<(), Failure> {
        let now = Instant::now();
        self.flush(now);
        let timer = self
            .slots
            .iter_mut()
            .flatten()
            .filter_map(|s| s.h3.poll_timeout())
            .min();
        let until = timer.map_or(until, |t| t.min(until));
        let timeout = self.wakeup.timeout(until, now);
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::io(&e)),
        }
        let now = Instant::now();
        for ev in self.events.iter() {
            if ev.token() == ALARM {
                self.wakeup.fired();
                continue;
            }
            let Some(Some(s)) = self.slots.get_mut(ev.token().0) else {
                continue;
            };
            loop {
                match s.socket.recv(&mut self.buf) {
                    Ok(n) => s.h3.handle_datagram(now, &self.buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                        s.dead.get_or_insert_with(unreachable);
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        for s in self.slots.iter_mut().flatten() {
            if s.h3.poll_timeout().is_some_and(|t| t <= now) {
                s.h3.handle_timeout(now);
            }
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

    fn session(&self, _: &H3Conn, window: usize, _started: Instant) -> H3Session {
        H3Session::new(window)
    }

    fn clock(&self) -> &dyn Clock {
        &SystemClock
    }
}
