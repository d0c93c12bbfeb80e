//! [`WsSession`]: one WebSocket connection's messages, driven by the loop like any session.
//! The connection opens (TCP, tunnel, TLS: the transport's `establish`), then the Upgrade
//! request goes out and the `101` is read; messages handed over before that wait in `held`
//! and leave when the socket is open, each then marked sent. Written frames wait for their
//! replies in `queue`, oldest first.

use super::socket::Socket;
use super::WebSocket;
use crate::error::excerpt;
use crate::wire::{Conn, Wire};
use herd_engine::{Failure, Io, Note, Opened, Ready, Request, Response, Session, Ticket};
use herd_metrics::{ErrorKind, SocketEvent};
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// TCP, a proxy's tunnel, TLS.
    Connecting,
    /// The Upgrade request is out (or going); the `101` is awaited. The connect and TLS
    /// phases' times, for the open note, and when the request went.
    Upgrading(Duration, Option<Duration>, Instant),
    Open,
    /// Nothing more goes either way; `Note::Closed` was said.
    Finished,
}

pub struct WsSession {
    /// The messages, frames and replies; its `out` begins with the Upgrade request.
    s: Socket,
    window: usize,
    started: Instant,
    phase: Phase,
    /// `s.out[..outpos]` is written.
    outpos: usize,
    /// The peer closed its side: read to the end.
    hup: bool,
}

impl WsSession {
    /// A user's own socket, opened by `req`'s Upgrade ([`herd_engine::SocketRole::Open`]),
    /// one message at a time.
    pub(crate) fn upgrade(req: &Request, started: Instant) -> Self {
        let ws = WebSocket::upgrade(Arc::clone(&req.bytes));
        WsSession::new(Arc::new(ws), 1, started)
    }

    pub(crate) fn new(ws: Arc<WebSocket>, window: usize, started: Instant) -> Self {
        WsSession {
            s: Socket::new(ws),
            window: window.max(1),
            started,
            phase: Phase::Connecting,
            outpos: 0,
            hup: false,
        }
    }

    /// Writes what `out` holds until the socket blocks. (A TLS write sends its records
    /// itself; what the socket did not take leaves on the next writable pump's flush.)
    fn write_out(&mut self, t: &mut Wire, conn: &mut Conn) -> Result<(), Failure> {
        use herd_engine::Transport;
        while self.outpos < self.s.out.len() {
            match t.write(conn, &self.s.out[self.outpos..])? {
                Io::Done(n) => self.outpos += n,
                Io::Blocked => return Ok(()),
                Io::Closed => {
                    return Err(Failure::new(
                        ErrorKind::Reset,
                        "the connection accepted no more of the messages",
                    ))
                }
            }
        }
        self.s.out.clear();
        self.outpos = 0;
        Ok(())
    }

    /// Every message waiting fails with `why`; the connection is finished.
    fn fail_all(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for w in self.s.queue.drain(..) {
            out.push(w.failed(why));
        }
        self.finish(out);
    }

    fn finish(&mut self, out: &mut Vec<Note>) {
        if self.phase != Phase::Finished {
            self.phase = Phase::Finished;
            out.push(Note::Closed);
        }
    }

    /// Reads the server's answer to the Upgrade at the start of `input`: how many bytes its
    /// head took, `None` while it is incomplete.
    fn upgraded(
        &mut self,
        t: &Wire,
        conn: &Conn,
        now: Instant,
        times: (Duration, Option<Duration>, Instant),
        out: &mut Vec<Note>,
    ) -> Result<Option<usize>, Failure> {
        let mut headers = [MaybeUninit::<httparse::Header<'_>>::uninit(); 64];
        let mut parsed = httparse::Response::new(&mut []);
        let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut parsed,
            &self.s.input,
            &mut headers,
        ) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if self.s.input.len() < crate::parse::MAX_HEAD => {
                return Ok(None)
            }
            _ => {
                return Err(Failure::new(
                    ErrorKind::WsHandshake,
                    format!(
                        "not an HTTP answer to the WebSocket upgrade: {}",
                        excerpt(&self.s.input)
                    ),
                ))
            }
        };
        let status = parsed.code.unwrap_or(0);
        let header = |name: &str| {
            parsed
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
        };
        if status != 101 {
            out.push(Note::Socket(SocketEvent::Refused(status)));
        }
        if status >= 400 {
            // Counted by its status, as any response of 400 and above is.
            for w in self.s.queue.drain(..) {
                let resp = Response {
                    status,
                    keep_alive: false,
                    first_byte: Some(now),
                    bytes_received: len as u64,
                    ..w.response()
                };
                out.push(Note::Response(w.ticket, resp));
            }
            self.finish(out);
            return Ok(Some(len));
        }
        if status != 101 {
            return Err(Failure::new(
                ErrorKind::WsHandshake,
                format!(
                    "the server answered the WebSocket upgrade with {status} {}, not 101 \
                     Switching Protocols",
                    parsed.reason.unwrap_or("")
                ),
            ));
        }
        if header("sec-websocket-accept").as_deref() != Some(self.s.ws.accept.as_str()) {
            out.push(Note::Socket(SocketEvent::Refused(101)));
            return Err(Failure::new(
                ErrorKind::WsHandshake,
                format!(
                    "the server switched protocols with Sec-WebSocket-Accept {:?}, not the {:?} \
                     its key calls for",
                    header("sec-websocket-accept").unwrap_or_default(),
                    self.s.ws.accept
                ),
            ));
        }
        self.phase = Phase::Open;
        // The Upgrade is an exchange of its own (a workload's `ws: { connect }`): the headers
        // of its `101`, when it keeps its response.
        let opening = self.s.queue.front().filter(|w| w.upgrade).map(|w| {
            let keep = w.keep.then_some(parsed.headers.iter());
            keep.into_iter()
                .flatten()
                .map(|h| {
                    let value = String::from_utf8_lossy(h.value).into_owned();
                    (h.name.to_owned(), value)
                })
                .collect::<herd_engine::ThinVec<_>>()
        });
        if self.outpos >= self.s.out.len() {
            // The Upgrade request's room (~200 bytes, and its headers') is let go: a socket
            // holds only a frame's from now on, ten thousand of them in `bench.py wsrss`.
            self.s.out = Vec::new();
            self.outpos = 0;
        }
        out.push(Note::Open(Opened {
            connect: times.0,
            tls: times.1,
            protocol: "websocket",
            // Counted with the protocol's handshakes, the Upgrade's time apart.
            resumption: Some(herd_engine::Resumption::default()),
            negotiated: herd_engine::Transport::negotiated(t, conn),
            upgrade: Some(now.saturating_duration_since(times.2)),
        }));
        if let Some(headers) = opening {
            self.answer_upgrade(status, headers, len as u64, now, out);
        }
        self.s.opened(now);
        Ok(Some(len))
    }

    /// The Upgrade exchange at the queue's head is answered by `status` (`101`), its head
    /// `len` bytes: its response, and a close frame after it when it was its socket's last.
    fn answer_upgrade(
        &mut self,
        status: u16,
        headers: herd_engine::ThinVec<(String, String)>,
        len: u64,
        now: Instant,
        out: &mut Vec<Note>,
    ) {
        let Some(w) = self.s.queue.pop_front() else {
            return;
        };
        let resp = Response {
            status,
            keep_alive: true,
            first_byte: Some(now),
            bytes_received: len,
            headers,
            ..w.response()
        };
        if w.last {
            // Opened only to be closed: a close frame (1000) goes before the loop closes the
            // connection.
            let mask = self.s.mask();
            super::frame::encode(
                super::frame::CLOSE,
                &1000u16.to_be_bytes(),
                mask,
                &mut self.s.out,
            );
        }
        out.push(Note::Response(w.ticket, resp));
    }

    /// Reads all the connection holds and takes what it can of it.
    fn read_in(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        use herd_engine::Transport;
        loop {
            let n = match t.read(conn, scratch)? {
                Io::Done(n) => n,
                Io::Blocked => return Ok(()),
                Io::Closed => {
                    if self.phase == Phase::Open {
                        out.push(Note::Socket(SocketEvent::Closed(1006)));
                    }
                    return Err(Failure::new(
                        ErrorKind::WsClosed,
                        "the server closed the connection without a close frame (1006)",
                    ));
                }
            };
            let got = &scratch[..n];
            if let Phase::Upgrading(c, tls, at) = self.phase {
                self.s.input.extend_from_slice(got);
                match self.upgraded(t, conn, now, (c, tls, at), out)? {
                    None => continue,
                    Some(len) => {
                        self.s.input.drain(..len);
                        let held = std::mem::take(&mut self.s.input);
                        let used = self.s.frames(&held, now, out)?;
                        self.s.input.extend_from_slice(&held[used..]);
                    }
                }
            } else {
                self.s.take(got, now, out)?;
            }
            if self.phase == Phase::Finished || (n < scratch.len() && !self.hup) {
                return Ok(());
            }
        }
    }

    fn step(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        ready: Ready,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        use herd_engine::Transport;
        if self.phase == Phase::Connecting {
            if !(ready.readable || ready.writable) || !t.establish(conn)? {
                return Ok(());
            }
            let (connect, tls) = Opened::times(t, conn, self.started);
            let at = t.clock().now();
            self.phase = Phase::Upgrading(connect, tls, at);
            self.s.out.extend_from_slice(&self.s.ws.handshake);
            if let Some(w) = self.s.queue.front_mut().filter(|w| w.upgrade) {
                w.sent = Some(at);
            }
        }
        if self.phase == Phase::Open && self.s.pinger.as_ref().is_some_and(|p| p.next <= now) {
            self.s.ping(now);
        }
        if self.outpos < self.s.out.len() {
            self.write_out(t, conn)?;
        } else if ready.writable && !ready.readable {
            // What a TLS write left in its session, the socket now taking it.
            t.flush(conn)?;
        }
        // Not on a write alone (a message just handed over): its reply cannot be in yet, and
        // a read in the same pass would date a fast one at the pass's instant, its send's.
        if ready.readable || ready.closed || self.hup {
            self.read_in(t, conn, now, scratch, out)?;
            // Pongs, a close, frames held for the Upgrade's answer.
            if self.phase != Phase::Finished && self.outpos < self.s.out.len() {
                self.write_out(t, conn)?;
            }
        }
        Ok(())
    }
}

impl Session<Wire> for WsSession {
    fn room(&self) -> usize {
        match self.phase {
            Phase::Finished => 0,
            _ => self.window.saturating_sub(self.s.queue.len()),
        }
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, _last: bool) {
        if req.socket == herd_engine::SocketRole::Open {
            return self.s.submit_upgrade(ticket, req);
        }
        // Framed where it leaves from: straight into `out` once the socket is open.
        self.s.submit(ticket, req, self.phase == Phase::Open);
    }

    fn write_now(&mut self, t: &mut Wire, conn: &mut Conn) -> bool {
        use herd_engine::Transport;
        // An open socket that owes nothing else: the frame just framed into `out` is all of it.
        if self.phase != Phase::Open || self.hup || self.outpos != 0 || self.s.out.is_empty() {
            return false;
        }
        match t.write(conn, &self.s.out) {
            Ok(Io::Done(n)) if n == self.s.out.len() => {
                self.s.out.clear();
                true
            }
            Ok(Io::Done(n)) => {
                self.outpos = n;
                false
            }
            // The pump that follows writes again and reports what this one met.
            _ => false,
        }
    }

    fn pump(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        ready: Ready,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        if self.phase == Phase::Finished {
            return;
        }
        self.hup |= ready.closed;
        if let Some(p) = &mut self.s.pinger {
            p.wake = None;
        }
        if let Err(f) = self.step(t, conn, ready, now, scratch, out) {
            if self.phase == Phase::Open && f.kind == ErrorKind::Reset {
                // Reset under an open socket: ended without a close frame.
                out.push(Note::Socket(SocketEvent::Closed(1006)));
            }
            if self.phase == Phase::Open && !self.s.out.is_empty() {
                // A close frame owed to the server: one try, the connection ends anyway.
                let _ = self.write_out(t, conn);
            }
            self.fail_all(&f, out);
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        // Matched by a field, a message can be given up alone: a late reply matches nothing.
        if self.s.ws.field.is_none() || self.phase != Phase::Open {
            return false;
        }
        self.s.forget(ticket);
        true
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for w in self.s.queue.drain(..) {
            out.push(w.failed(why));
        }
        self.phase = Phase::Finished;
    }

    fn in_flight(&self) -> usize {
        self.s.queue.len()
    }

    fn unsent(&self) -> herd_metrics::Backlog {
        // Frames held for the Upgrade's answer, and those of `out` the socket has not taken
        // (the newest messages' frames; a ping or pong among them is a few bytes).
        let mut b = herd_metrics::Backlog::default();
        for w in self.s.queue.iter().filter(|w| w.frame.is_some()) {
            b.add(herd_metrics::Backlog {
                messages: 1,
                bytes: u64::from(w.bytes),
            });
        }
        if self.phase == Phase::Open {
            let pending = (self.s.out.len() - self.outpos.min(self.s.out.len())) as u64;
            b.bytes += pending;
            let mut covered = 0;
            for w in self.s.queue.iter().rev().filter(|w| w.frame.is_none()) {
                if covered >= pending {
                    break;
                }
                covered += u64::from(w.bytes);
                b.messages += 1;
            }
        }
        b
    }

    fn wake_at(&self) -> Option<Instant> {
        self.s.pinger.as_ref().and_then(|p| p.wake)
    }
}
