//! [`WsSession`]: one WebSocket connection's messages, driven by the loop like any session.
//! The connection opens (TCP, tunnel, TLS: the transport's `establish`), then the Upgrade
//! request goes out and the `101` is read; messages handed over before that wait in `held`
//! and leave when the socket is open, each then marked sent. Written frames wait for their
//! replies in `queue`, oldest first.

use super::frame::{self, Head};
use super::{field_value, WebSocket, MAX_MESSAGE};
use crate::error::excerpt;
use crate::wire::{Conn, Wire};
use herd_engine::{Failed, Failure, Io, Note, Opened, Ready, Request, Response, Session, Ticket};
use herd_metrics::{ErrorKind, SocketEvent};
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A message waiting for its reply: what its [`Response`] will say, made only when the reply
/// comes (a `Response` in the queue was a move of its 88 bytes in and out, and a drop, per
/// message).
struct Waiting {
    ticket: Ticket,
    /// The value of the matched field, with `--match`.
    id: Option<Box<[u8]>>,
    /// The frame, until the socket is open (then it is in `out`).
    frame: Option<Box<[u8]>>,
    /// When the frame went out, where it waited for the socket to open; `None`: when handed
    /// over.
    sent: Option<Instant>,
    /// The frame's bytes on the wire.
    bytes: u32,
    /// Its reply is kept (a workload's checks and extractions read it).
    keep: bool,
    /// The socket's last message (a workload's `ws: close`): closed once it is answered.
    last: bool,
}

impl Waiting {
    fn failed(self, why: &Failure) -> Note {
        Note::Failed(Failed {
            ticket: self.ticket,
            failure: why.clone(),
            received: 0,
            unseen: self.frame.is_some(),
            sent: Some(u64::from(self.bytes)).filter(|_| self.frame.is_none()),
        })
    }

    /// The response this message's reply (or the server's refusal) makes.
    fn response(&self) -> Response {
        Response {
            sent: self.sent,
            bytes_sent: u64::from(self.bytes),
            ..Response::default()
        }
    }
}

/// Pings on a fixed schedule (`--ping-interval`), boxed: a socket that does not ping pays a
/// pointer for them.
struct Pinger {
    every: Duration,
    /// The next ping's intended instant.
    next: Instant,
    seq: u32,
    /// Pings out and not yet answered: their number (their payload) and intended instant.
    out: VecDeque<(u32, Instant)>,
    /// The instant the loop must pump at, named in this pump (`Session::wake_at`).
    wake: Option<Instant>,
}

/// Pings a socket keeps waiting for: more and the oldest are given up (a server may answer
/// only the latest, as RFC 6455 5.5.3 allows).
const PINGS_OUT: usize = 64;

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
    ws: Arc<WebSocket>,
    window: usize,
    started: Instant,
    phase: Phase,
    queue: VecDeque<Waiting>,
    /// Bytes to write: the Upgrade request, frames, pongs, a close.
    out: Vec<u8>,
    outpos: usize,
    /// Received and not yet consumed: a partial head or frame.
    input: Vec<u8>,
    /// A message in fragments: its payload so far, its frames' bytes and first byte's instant.
    parts: Option<(Vec<u8>, u64, Instant)>,
    /// The peer closed its side: read to the end.
    hup: bool,
    /// Masks are drawn from here (xorshift, seeded at random per connection).
    rng: u64,
    pinger: Option<Box<Pinger>>,
}

impl WsSession {
    pub(crate) fn new(ws: Arc<WebSocket>, window: usize, started: Instant) -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0);
        WsSession {
            ws,
            window: window.max(1),
            started,
            phase: Phase::Connecting,
            queue: VecDeque::with_capacity(1),
            out: Vec::new(),
            outpos: 0,
            input: Vec::new(),
            parts: None,
            hup: false,
            rng: h.finish() | 1,
            pinger: None,
        }
    }

    /// Sends the pings due by `now`, each on its own intended instant (a loop that fell
    /// behind sends the ones it owes at once, timed from when they were due).
    fn ping(&mut self, now: Instant) {
        let Some(mut p) = self.pinger.take() else {
            return;
        };
        while p.next <= now {
            p.seq = p.seq.wrapping_add(1);
            let mask = self.mask();
            frame::encode(frame::PING, &p.seq.to_be_bytes(), mask, &mut self.out);
            if p.out.len() == PINGS_OUT {
                p.out.pop_front();
            }
            p.out.push_back((p.seq, p.next));
            p.next += p.every;
            p.wake = Some(p.next);
        }
        self.pinger = Some(p);
    }

    /// A pong: the round trip of the ping it answers (and the older ones given up).
    fn pong(&mut self, payload: &[u8], now: Instant, out: &mut Vec<Note>) {
        let (Some(p), Ok(seq)) = (self.pinger.as_mut(), <[u8; 4]>::try_from(payload)) else {
            return;
        };
        let seq = u32::from_be_bytes(seq);
        if let Some(i) = p.out.iter().position(|&(s, _)| s == seq) {
            let (_, intended) = p.out[i];
            p.out.drain(..=i);
            out.push(Note::Socket(SocketEvent::Pong(
                now.saturating_duration_since(intended),
            )));
        }
    }

    fn mask(&mut self) -> [u8; 4] {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng as u32).to_ne_bytes()
    }

    /// Writes what `out` holds until the socket blocks. (A TLS write sends its records
    /// itself; what the socket did not take leaves on the next writable pump's flush.)
    fn write_out(&mut self, t: &mut Wire, conn: &mut Conn) -> Result<(), Failure> {
        use herd_engine::Transport;
        while self.outpos < self.out.len() {
            match t.write(conn, &self.out[self.outpos..])? {
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
        self.out.clear();
        self.outpos = 0;
        Ok(())
    }

    /// Every message waiting fails with `why`; the connection is finished.
    fn fail_all(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for w in self.queue.drain(..) {
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
            &self.input,
            &mut headers,
        ) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if self.input.len() < crate::parse::MAX_HEAD => {
                return Ok(None)
            }
            _ => {
                return Err(Failure::new(
                    ErrorKind::WsHandshake,
                    format!(
                        "not an HTTP answer to the WebSocket upgrade: {}",
                        excerpt(&self.input)
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
            for w in self.queue.drain(..) {
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
        if header("sec-websocket-accept").as_deref() != Some(self.ws.accept.as_str()) {
            out.push(Note::Socket(SocketEvent::Refused(101)));
            return Err(Failure::new(
                ErrorKind::WsHandshake,
                format!(
                    "the server switched protocols with Sec-WebSocket-Accept {:?}, not the {:?} \
                     its key calls for",
                    header("sec-websocket-accept").unwrap_or_default(),
                    self.ws.accept
                ),
            ));
        }
        self.phase = Phase::Open;
        if let Some(every) = self.ws.ping_interval {
            self.pinger = Some(Box::new(Pinger {
                every,
                next: now + every,
                seq: 0,
                out: VecDeque::new(),
                wake: Some(now + every),
            }));
        }
        if self.outpos >= self.out.len() {
            // The Upgrade request's room (~200 bytes, and its headers') is let go: a socket
            // holds only a frame's from now on, ten thousand of them in `bench.py wsrss`.
            self.out = Vec::new();
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
        for w in &mut self.queue {
            if let Some(f) = w.frame.take() {
                self.out.extend_from_slice(&f);
                w.sent = Some(now);
            }
        }
        Ok(Some(len))
    }

    /// Takes the frames at the start of `bytes`: how many bytes they took.
    fn frames(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<usize, Failure> {
        let mut at = 0;
        while self.phase == Phase::Open {
            let head = frame::decode(&bytes[at..], MAX_MESSAGE)
                .map_err(|why| Failure::new(ErrorKind::Protocol, format!("WebSocket: {why}")))?;
            let Some(h) = head else { break };
            let payload = &bytes[at + h.start..at + h.end];
            self.frame(h, payload, now, out)?;
            at += h.end;
        }
        Ok(at)
    }

    /// One whole frame from the server.
    fn frame(
        &mut self,
        h: Head,
        payload: &[u8],
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        let wire = (h.end) as u64;
        match h.opcode {
            frame::TEXT | frame::BINARY if self.parts.is_some() => Err(Failure::new(
                ErrorKind::Protocol,
                "WebSocket: a new message began inside a fragmented one",
            )),
            frame::TEXT | frame::BINARY if h.fin => {
                self.message(payload, wire, now, out);
                Ok(())
            }
            frame::TEXT | frame::BINARY => {
                self.parts = Some((payload.to_vec(), wire, now));
                Ok(())
            }
            frame::CONTINUATION => {
                let Some((mut whole, bytes, first)) = self.parts.take() else {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        "WebSocket: a continuation frame with no message begun",
                    ));
                };
                if whole.len() as u64 + payload.len() as u64 > MAX_MESSAGE {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        format!("WebSocket: a message over {MAX_MESSAGE} bytes"),
                    ));
                }
                whole.extend_from_slice(payload);
                if h.fin {
                    self.message(&whole, bytes + wire, first, out);
                } else {
                    self.parts = Some((whole, bytes + wire, first));
                }
                Ok(())
            }
            frame::PING => {
                let mask = self.mask();
                frame::encode(frame::PONG, payload, mask, &mut self.out);
                Ok(())
            }
            frame::PONG => {
                self.pong(payload, now, out);
                Ok(())
            }
            _ => {
                let (code, reason) = frame::close_code(payload);
                out.push(Note::Socket(SocketEvent::Closed(code)));
                // Answered with the same code, as RFC 6455 section 5.5.1 asks.
                let mask = self.mask();
                frame::encode(
                    frame::CLOSE,
                    &payload[..payload.len().min(2)],
                    mask,
                    &mut self.out,
                );
                Err(Failure::new(
                    ErrorKind::WsClosed,
                    format!(
                        "the server closed the WebSocket with code {code}{}{}",
                        if reason.is_empty() { "" } else { ": " },
                        String::from_utf8_lossy(reason)
                    ),
                ))
            }
        }
    }

    /// A whole message from the server: the reply to the message it matches, if any (a
    /// message nothing waits for is the server's own, and is not counted).
    fn message(&mut self, payload: &[u8], wire: u64, first: Instant, out: &mut Vec<Note>) {
        let at = match &self.ws.field {
            None => (!self.queue.is_empty()).then_some(0),
            Some(field) => field_value(payload, field)
                .and_then(|id| self.queue.iter().position(|w| w.id.as_deref() == Some(id))),
        };
        let Some(w) = at.and_then(|i| match i {
            0 => self.queue.pop_front(),
            _ => self.queue.remove(i),
        }) else {
            return;
        };
        let mut resp = Response {
            // A message has no status: the 101 was the Upgrade's, once per connection.
            status: herd_metrics::NO_STATUS,
            keep_alive: true,
            first_byte: Some(first),
            bytes_received: wire,
            body_len: payload.len() as u64,
            ..w.response()
        };
        if w.keep {
            resp.body = payload.into();
        }
        if w.last {
            // Its socket's last message: a close frame (1000) goes before the loop closes
            // the connection (the exchange was its last call).
            let mask = self.mask();
            frame::encode(frame::CLOSE, &1000u16.to_be_bytes(), mask, &mut self.out);
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
                self.input.extend_from_slice(got);
                match self.upgraded(t, conn, now, (c, tls, at), out)? {
                    None => continue,
                    Some(len) => {
                        self.input.drain(..len);
                        let held = std::mem::take(&mut self.input);
                        let used = self.frames(&held, now, out)?;
                        self.input.extend_from_slice(&held[used..]);
                    }
                }
            } else if self.input.is_empty() {
                let used = self.frames(got, now, out)?;
                self.input.extend_from_slice(&got[used..]);
            } else {
                let mut held = std::mem::take(&mut self.input);
                held.extend_from_slice(got);
                let used = self.frames(&held, now, out)?;
                held.drain(..used);
                self.input = held;
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
            self.phase = Phase::Upgrading(connect, tls, t.clock().now());
            self.out.extend_from_slice(&self.ws.handshake);
        }
        if self.phase == Phase::Open && self.pinger.as_ref().is_some_and(|p| p.next <= now) {
            self.ping(now);
        }
        if self.outpos < self.out.len() {
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
            if self.phase != Phase::Finished && self.outpos < self.out.len() {
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
            _ => self.window.saturating_sub(self.queue.len()),
        }
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, _last: bool) {
        let mask = self.mask();
        // Framed where it leaves from: straight into `out` once the socket is open.
        let (frame, bytes) = if self.phase == Phase::Open {
            let at = self.out.len();
            frame::encode(frame::TEXT, &req.bytes, mask, &mut self.out);
            (None, self.out.len() - at)
        } else {
            let mut f = Vec::with_capacity(req.bytes.len() + 14);
            frame::encode(frame::TEXT, &req.bytes, mask, &mut f);
            let n = f.len();
            (Some(f.into_boxed_slice()), n)
        };
        let id = self
            .ws
            .field
            .as_deref()
            .and_then(|field| field_value(&req.bytes, field))
            .map(Box::from);
        self.queue.push_back(Waiting {
            ticket,
            id,
            frame,
            sent: None,
            bytes: bytes as u32,
            keep: req.keep_response,
            last: req.last,
        });
    }

    fn write_now(&mut self, t: &mut Wire, conn: &mut Conn) -> bool {
        use herd_engine::Transport;
        // An open socket that owes nothing else: the frame just framed into `out` is all of it.
        if self.phase != Phase::Open || self.hup || self.outpos != 0 || self.out.is_empty() {
            return false;
        }
        match t.write(conn, &self.out) {
            Ok(Io::Done(n)) if n == self.out.len() => {
                self.out.clear();
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
        if let Some(p) = &mut self.pinger {
            p.wake = None;
        }
        if let Err(f) = self.step(t, conn, ready, now, scratch, out) {
            if self.phase == Phase::Open && f.kind == ErrorKind::Reset {
                // Reset under an open socket: ended without a close frame.
                out.push(Note::Socket(SocketEvent::Closed(1006)));
            }
            if self.phase == Phase::Open && !self.out.is_empty() {
                // A close frame owed to the server: one try, the connection ends anyway.
                let _ = self.write_out(t, conn);
            }
            self.fail_all(&f, out);
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        // Matched by a field, a message can be given up alone: a late reply matches nothing.
        if self.ws.field.is_none() || self.phase != Phase::Open {
            return false;
        }
        self.queue.retain(|w| w.ticket != ticket);
        true
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for w in self.queue.drain(..) {
            out.push(w.failed(why));
        }
        self.phase = Phase::Finished;
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }

    fn unsent(&self) -> herd_metrics::Backlog {
        // Frames held for the Upgrade's answer, and those of `out` the socket has not taken
        // (the newest messages' frames; a ping or pong among them is a few bytes).
        let mut b = herd_metrics::Backlog::default();
        for w in self.queue.iter().filter(|w| w.frame.is_some()) {
            b.add(herd_metrics::Backlog {
                messages: 1,
                bytes: u64::from(w.bytes),
            });
        }
        if self.phase == Phase::Open {
            let pending = (self.out.len() - self.outpos.min(self.out.len())) as u64;
            b.bytes += pending;
            let mut covered = 0;
            for w in self.queue.iter().rev().filter(|w| w.frame.is_none()) {
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
        self.pinger.as_ref().and_then(|p| p.wake)
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// A message waiting for its reply holds what its response will say, not a `Response`
    /// (88 bytes moved in and out of the queue and dropped, per message: bench/RESULTS.md,
    /// session 15).
    #[test]
    fn a_waiting_message_stays_small() {
        let waiting = std::mem::size_of::<super::Waiting>();
        assert!(waiting <= 64, "{waiting}");
    }
}
