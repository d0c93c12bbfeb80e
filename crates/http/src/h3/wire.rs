//! HTTP/3 as the engine's [`Transport`]: each connection is a UDP socket on the thread's mio
//! poll and an [`H3Connection`]; quinn's timers join the loop's own wake-up, and every
//! connection's datagrams go out once per loop turn, at the top of [`Transport::wait`], so the
//! requests written since the last turn leave together.
//!
//! The engine's seam is byte-oriented (write request bytes, read response bytes, parse them).
//! Until it carries sessions, HTTP/3 passes through it this way: `write` takes the request's
//! HTTP/1.1 bytes (translated once into frames and cached), the connection decodes the response
//! itself, and `read` hands the finished [`Response`] to this transport's parser through a
//! one-place mailbox, as a single byte. The engine calls `read` and then that connection's
//! parser in one step, so the mailbox never holds two responses.

use super::config::H3Config;
use super::connection::{H3Connection, H3Event};
use super::request::H3Request;
use crate::alarm::Alarm;
use crate::{HttpError, Target, TlsOptions};
use herd_engine::{Clock, Event, Failure, Io, Parse, Request, Response, SystemClock, Transport};
use herd_metrics::ErrorKind;
use mio::net::UdpSocket;
use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};
use std::cell::{Cell, RefCell};
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ALARM: Token = Token(usize::MAX);
const BACKSTOP: Duration = Duration::from_millis(5);
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
        let alarm = Alarm::new().filter(|a| {
            let fd = a.as_raw_fd();
            poll.registry()
                .register(&mut SourceFd(&fd), ALARM, Interest::READABLE)
                .is_ok()
        });
        Ok(H3Wire {
            config: self.config.clone(),
            poll,
            events: mio::Events::with_capacity(1024),
            alarm,
            armed: None,
            slots: Vec::new(),
            free: Vec::new(),
            translated: Vec::new(),
            buf: vec![0; 64 * 1024],
            out: Vec::with_capacity(64 * 1024),
            mailbox: Rc::default(),
            keep_next: Rc::default(),
            last_sent: None,
        })
    }
}

struct Slot {
    socket: UdpSocket,
    h3: H3Connection,
    token: usize,
    exchange: usize,
    done: Option<Response>,
    failed: Option<Failure>,
    dead: Option<Failure>,
    /// The engine was told the connection is over.
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
    alarm: Option<Alarm>,
    armed: Option<Instant>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    translated: Vec<(Arc<[u8]>, H3Request)>,
    buf: Vec<u8>,
    out: Vec<u8>,
    mailbox: Rc<RefCell<Option<Response>>>,
    /// Whether the request just written keeps its response: the engine says so when it asks
    /// for the parser, right after the write.
    keep_next: Rc<Cell<Option<bool>>>,
    last_sent: Option<(usize, usize)>,
}

/// Takes the response the transport decoded (see the module's note).
pub struct H3Parse {
    mailbox: Rc<RefCell<Option<Response>>>,
}

impl Parse for H3Parse {
    fn feed(&mut self, bytes: &[u8], resp: &mut Response) -> Result<(usize, bool), Failure> {
        match self.mailbox.borrow_mut().take() {
            Some(mut got) => {
                got.first_byte = got.first_byte.or(resp.first_byte);
                *resp = got;
                Ok((bytes.len(), true))
            }
            None => Ok((bytes.len(), false)),
        }
    }

    fn closed(&mut self, _: &[u8], _: &mut Response) -> Result<(), Failure> {
        Err(Failure::new(ErrorKind::QuicClosed, "the connection closed"))
    }
}

impl H3Wire {
    fn slot(&mut self, conn: &H3Conn) -> &mut Slot {
        self.slots[conn.slot]
            .as_mut()
            .expect("a live connection's slot")
    }

    fn frames(&mut self, bytes: &[u8]) -> Result<H3Request, Failure> {
        if let Some((_, req)) = self.translated.iter().find(|(b, _)| **b == *bytes) {
            return Ok(req.clone());
        }
        let req = H3Request::from_http1(bytes, "https")
            .map_err(|e| Failure::new(ErrorKind::Other, e.to_string()))?;
        if self.translated.len() >= TRANSLATED {
            self.translated.clear();
        }
        self.translated.push((bytes.into(), req.clone()));
        Ok(req)
    }

    fn apply_keep(&mut self) {
        if let (Some(keep), Some((slot, exchange))) = (self.keep_next.take(), self.last_sent) {
            if let Some(s) = self.slots[slot].as_mut() {
                s.h3.keep_response(exchange, keep);
            }
        }
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

    /// Moves a connection's events into its slot, telling the engine which became ready.
    fn collect(s: &mut Slot, out: &mut Vec<Event>) {
        let mut ready = false;
        while let Some(ev) = s.h3.poll_event() {
            ready = true;
            match ev {
                H3Event::Connected(_) => {}
                H3Event::Done { token, response } if token == s.exchange => s.done = Some(response),
                H3Event::Failed { token, failure } if token == s.exchange => {
                    s.failed = Some(failure)
                }
                H3Event::Closed(failure) => {
                    s.dead = Some(failure.unwrap_or_else(|| {
                        Failure::new(ErrorKind::QuicClosed, "the connection closed")
                    }))
                }
                _ => {}
            }
        }
        let newly_dead = s.dead.is_some() && !s.told;
        if ready || newly_dead {
            s.told |= s.dead.is_some();
            out.push(Event {
                token: s.token,
                readable: true,
                writable: true,
                closed: s.dead.is_some(),
            });
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
    type Parser = H3Parse;

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
            exchange: 0,
            done: None,
            failed: None,
            dead: None,
            told: false,
        });
        Ok(H3Conn { slot })
    }

    fn establish(&mut self, conn: &mut H3Conn) -> Result<bool, Failure> {
        let s = self.slot(conn);
        if let Some(f) = &s.dead {
            return Err(f.clone());
        }
        Ok(s.h3.ready())
    }

    fn write(&mut self, conn: &mut H3Conn, bytes: &[u8]) -> Result<Io, Failure> {
        let req = self.frames(bytes)?;
        let slot = conn.slot;
        let s = self.slot(conn);
        if let Some(f) = &s.dead {
            return Err(f.clone());
        }
        s.exchange += 1;
        s.done = None;
        s.failed = None;
        let exchange = s.exchange;
        if !s.h3.send(exchange, &req, Instant::now())? {
            s.exchange -= 1;
            return Ok(Io::Blocked);
        }
        self.last_sent = Some((slot, exchange));
        Ok(Io::Done(bytes.len()))
    }

    fn read(&mut self, conn: &mut H3Conn, buf: &mut [u8]) -> Result<Io, Failure> {
        self.apply_keep();
        let mailbox = Rc::clone(&self.mailbox);
        let s = self.slot(conn);
        if let Some(resp) = s.done.take() {
            *mailbox.borrow_mut() = Some(resp);
            buf[0] = 0;
            return Ok(Io::Done(1));
        }
        if let Some(f) = s.failed.take() {
            return Err(f);
        }
        if let Some(f) = &s.dead {
            return Err(f.clone());
        }
        Ok(Io::Blocked)
    }

    fn close(&mut self, conn: H3Conn) {
        let Some(mut s) = self.slots[conn.slot].take() else {
            return;
        };
        let now = Instant::now();
        if s.dead.is_none() {
            s.h3.close(now);
            while let Some(out) = s.h3.poll_transmit(now, &mut self.out) {
                let _ = s.socket.send(&self.out[..out.segment.unwrap_or(out.len)]);
            }
        }
        let _ = self.poll.registry().deregister(&mut s.socket);
        self.free.push(conn.slot);
    }

    fn wait(&mut self, until: Instant, out: &mut Vec<Event>) -> Result<(), Failure> {
        self.apply_keep();
        let now = Instant::now();
        self.flush(now);
        let timer = self
            .slots
            .iter_mut()
            .flatten()
            .filter_map(|s| s.h3.poll_timeout())
            .min();
        let until = timer.map_or(until, |t| t.min(until));
        let left = until.saturating_duration_since(now);
        let timeout = match &mut self.alarm {
            _ if left.is_zero() => Duration::ZERO,
            Some(alarm) => {
                if self.armed != Some(until) {
                    alarm.set(left);
                    self.armed = Some(until);
                }
                left + BACKSTOP
            }
            None => left,
        };
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::io(&e)),
        }
        let now = Instant::now();
        for ev in self.events.iter() {
            if ev.token() == ALARM {
                if let Some(alarm) = &self.alarm {
                    alarm.take();
                }
                self.armed = None;
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
            Self::collect(s, out);
        }
        // What the datagrams and timers asked for (acks, the next flight) goes out now, not
        // after the engine's turn.
        self.flush(now);
        Ok(())
    }

    fn parser(&self, req: &Request) -> H3Parse {
        self.keep_next.set(Some(req.keep_response));
        H3Parse {
            mailbox: Rc::clone(&self.mailbox),
        }
    }

    fn clock(&self) -> &dyn Clock {
        &SystemClock
    }
}
