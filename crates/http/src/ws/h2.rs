//! [`WsH2`]: WebSockets over one HTTP/2 connection (RFC 8441), as `--http2` asks for them. The
//! connection opens (TCP, TLS offering `h2` by ALPN, or h2c by prior knowledge), the server's
//! SETTINGS must offer extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL = 1: a server that
//! does not ends the run with what to do instead), and each of the connection's `--streams`
//! sockets opens as a stream: `:method CONNECT`, `:protocol websocket`, its `200` opens it, and
//! RFC 6455's frames ride in its DATA frames from then on. Each socket is a [`Socket`], as over
//! HTTP/1.1; a message goes to the socket idle the longest, so each carries its share.

use super::socket::Socket;
use super::WebSocket;
use crate::wire::{Conn, Wire};
use herd_engine::{Failure, Io, Note, Opened, Ready, Request, Response, Session, Ticket};
use herd_h2::{ClientSession, Event, Settings, StreamEnd};
use herd_metrics::{ErrorKind, SocketEvent};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One socket: a stream of the connection once its CONNECT went.
struct Slot {
    s: Socket,
    /// Its stream: 0 until its CONNECT goes (again, after the last one ended).
    stream: i32,
    /// When its CONNECT went, until the `200` came: `None` and a stream, it is open.
    asked: Option<Instant>,
}

impl Slot {
    fn open(&self) -> bool {
        self.stream != 0 && self.asked.is_none()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// TCP, TLS.
    Connecting,
    /// The preface is out; the server's SETTINGS are awaited (whether it offers extended
    /// CONNECT). The connect and TLS phases' times, for the open note.
    Settling(Duration, Option<Duration>),
    Open,
    Finished,
}

pub struct WsH2 {
    ws: Arc<WebSocket>,
    h2: ClientSession,
    tls: bool,
    started: Instant,
    phase: Phase,
    slots: Vec<Slot>,
    /// Sockets with no message in flight, the longest idle first.
    idle: VecDeque<usize>,
    /// Frames waiting for the socket: `out[at..]`.
    out: Vec<u8>,
    at: usize,
    /// No new messages: the server said GOAWAY.
    closing: bool,
    /// A session that could not even be made.
    broken: Option<Failure>,
}

impl WsH2 {
    pub(crate) fn new(
        ws: Arc<WebSocket>,
        settings: &Settings,
        sockets: usize,
        started: Instant,
        tls: bool,
    ) -> Self {
        let (h2, broken) = match ClientSession::new(settings) {
            Ok(h2) => (h2, None),
            Err(e) => (
                // nghttp2 fails to make a session only without memory; this one is born
                // broken and never driven.
                ClientSession::new(&Settings::default()).expect("an HTTP/2 session"),
                Some(Failure::new(ErrorKind::Other, e.to_string())),
            ),
        };
        let sockets = sockets.max(1);
        WsH2 {
            slots: (0..sockets)
                .map(|_| Slot {
                    s: Socket::new(Arc::clone(&ws)),
                    stream: 0,
                    asked: None,
                })
                .collect(),
            idle: (0..sockets).collect(),
            ws,
            h2,
            tls,
            started,
            phase: Phase::Connecting,
            out: Vec::new(),
            at: 0,
            closing: false,
            broken,
        }
    }

    fn finish(&mut self, out: &mut Vec<Note>) {
        if self.phase != Phase::Finished {
            self.phase = Phase::Finished;
            out.push(Note::Closed);
        }
    }

    /// Every message fails with `why`; the connection is finished.
    fn broke(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for slot in &mut self.slots {
            slot.s.fail_all(why, out);
        }
        self.finish(out);
    }

    /// Opens socket `i`'s stream: its extended CONNECT.
    fn connect(&mut self, i: usize, now: Instant) -> Result<(), Failure> {
        let c = &self.ws.connect;
        let headers: Vec<(&[u8], &[u8])> = c
            .headers
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        let request = herd_h2::Request {
            method: b"CONNECT",
            scheme: c.scheme.as_bytes(),
            authority: c.authority.as_bytes(),
            path: c.path.as_bytes(),
            headers: &headers,
            body: b"",
            open: true,
            protocol: Some(b"websocket"),
        };
        let stream = self
            .h2
            .submit(&request, i, true)
            .map_err(|e| Failure::new(ErrorKind::H2Protocol, e.to_string()))?;
        self.slots[i].stream = stream;
        self.slots[i].asked = Some(now);
        Ok(())
    }

    /// Socket `i` is over (refused, closed, broken): its messages fail with `why`, its stream
    /// is reset, and it opens again when a message next goes to it.
    fn lost(&mut self, i: usize, why: &Failure, out: &mut Vec<Note>) {
        let slot = &mut self.slots[i];
        slot.s.fail_all(why, out);
        slot.s.out.clear();
        slot.s.pinger = None;
        let _ = self.h2.cancel(slot.stream);
        slot.stream = 0;
        slot.asked = None;
        // Its messages are over: it is idle (it may have been already, or its refusal's
        // answers emptied its queue).
        if !self.idle.contains(&i) {
            self.idle.push_back(i);
        }
    }

    /// The server's answer to socket `i`'s CONNECT.
    fn answered(&mut self, i: usize, status: u16, now: Instant, out: &mut Vec<Note>) {
        let Some(asked) = self.slots[i].asked else {
            return;
        };
        if status == 200 {
            let slot = &mut self.slots[i];
            slot.asked = None;
            out.push(Note::Handshake(now.saturating_duration_since(asked)));
            slot.s.opened(now);
            return;
        }
        out.push(Note::Socket(SocketEvent::Refused(status)));
        if status >= 400 {
            // Counted by its status, as any response of 400 and above is.
            let slot = &mut self.slots[i];
            for w in slot.s.queue.drain(..) {
                let resp = Response {
                    status,
                    keep_alive: true,
                    first_byte: Some(now),
                    ..w.response()
                };
                out.push(Note::Response(w.ticket, resp));
            }
        }
        let why = Failure::new(
            ErrorKind::WsHandshake,
            format!("the server answered the WebSocket's extended CONNECT with {status}, not 200"),
        );
        self.lost(i, &why, out);
    }

    /// Bytes of socket `i`'s stream.
    fn data(&mut self, i: usize, bytes: &[u8], now: Instant, out: &mut Vec<Note>) {
        let slot = &mut self.slots[i];
        if !slot.open() {
            return;
        }
        let had = slot.s.queue.len();
        match slot.s.take(bytes, now, out) {
            Ok(()) if had > 0 && slot.s.queue.is_empty() => self.idle.push_back(i),
            Ok(()) => {}
            Err(f) => self.lost(i, &f, out),
        }
    }

    /// What the server's frames meant.
    fn settle(&mut self, now: Instant, out: &mut Vec<Note>) {
        // Copied out: a socket's answer may reset a stream (a call into the session).
        let (kept, events) = {
            let events = self.h2.events();
            let kept = events.kept.to_vec();
            (kept, events.events.collect::<Vec<Event>>())
        };
        for e in events {
            match e {
                Event::Status { exchange, status } => self.answered(exchange, status, now, out),
                Event::Data {
                    exchange,
                    kept: Some(range),
                    ..
                } => self.data(exchange, &kept[range], now, out),
                Event::Closed {
                    exchange,
                    stream_id,
                    end,
                    ..
                } if self
                    .slots
                    .get(exchange)
                    .is_some_and(|s| s.stream == stream_id) =>
                {
                    let open = self.slots[exchange].open();
                    if open {
                        out.push(Note::Socket(SocketEvent::Closed(1006)));
                    }
                    let why = ended(end, open);
                    self.lost(exchange, &why, out);
                }
                Event::GoAway { .. } => self.closing = true,
                _ => {}
            }
        }
    }

    /// The server's SETTINGS came: the sockets open, or the run learns the server offers
    /// none on HTTP/2.
    fn settled(
        &mut self,
        times: (Duration, Option<Duration>),
        t: &Wire,
        conn: &Conn,
        now: Instant,
        out: &mut Vec<Note>,
    ) {
        if !self.h2.connect_protocol() {
            let f = Failure::mismatched(
                ErrorKind::WsHandshake,
                "--http2: the server does not offer WebSockets over HTTP/2 (its SETTINGS lack \
                 RFC 8441's SETTINGS_ENABLE_CONNECT_PROTOCOL); run without --http2 to open each \
                 socket with HTTP/1.1's Upgrade, or enable WebSockets over HTTP/2 on the server",
            );
            return self.broke(&f, out);
        }
        self.phase = Phase::Open;
        out.push(Note::Open(Opened {
            connect: times.0,
            tls: times.1,
            protocol: if self.tls {
                "websocket/h2"
            } else {
                "websocket/h2c"
            },
            resumption: None,
            negotiated: herd_engine::Transport::negotiated(t, conn),
            upgrade: None,
        }));
        // As many sockets as the server lets streams open; messages held on the others go
        // elsewhere, never sent.
        let limit = self.h2.max_streams().max(1);
        if self.slots.len() > limit {
            let why = Failure::new(
                ErrorKind::H2Protocol,
                format!("the server allows {limit} streams on a connection"),
            );
            for mut slot in self.slots.drain(limit..) {
                slot.s.fail_all(&why, out);
            }
            self.idle.retain(|&i| i < limit);
        }
        for i in 0..self.slots.len() {
            if let Err(f) = self.connect(i, now) {
                return self.broke(&f, out);
            }
        }
    }

    /// Hands what each open socket has to send to its stream, and opens again the sockets
    /// that were lost and have a message.
    fn feed(&mut self, now: Instant) -> Result<(), Failure> {
        if self.phase != Phase::Open {
            return Ok(());
        }
        for i in 0..self.slots.len() {
            let slot = &mut self.slots[i];
            if slot.stream == 0 {
                if !slot.s.queue.is_empty() && !self.closing {
                    self.connect(i, now)?;
                }
                continue;
            }
            if !slot.open() {
                continue;
            }
            slot.s.ping(now);
            if !slot.s.out.is_empty() {
                self.h2
                    .write(slot.stream, &slot.s.out, false)
                    .map_err(|e| Failure::new(ErrorKind::H2Protocol, e.to_string()))?;
                slot.s.out.clear();
            }
        }
        Ok(())
    }

    /// Writes the frames nghttp2 has ready.
    fn write_out(&mut self, t: &mut Wire, conn: &mut Conn) -> Result<(), Failure> {
        if self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
        }
        self.h2
            .send(&mut self.out)
            .map_err(|e| Failure::new(ErrorKind::H2Protocol, e.to_string()))?;
        while self.at < self.out.len() {
            match herd_engine::Transport::write(t, conn, &self.out[self.at..])? {
                Io::Done(n) => self.at += n,
                Io::Blocked => return Ok(()),
                Io::Closed => {
                    return Err(Failure::new(
                        ErrorKind::Reset,
                        "the connection accepted no more frames",
                    ))
                }
            }
        }
        Ok(())
    }

    fn read_in(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        loop {
            let n = match herd_engine::Transport::read(t, conn, scratch)? {
                Io::Done(n) => n,
                Io::Blocked => return Ok(()),
                Io::Closed => {
                    for slot in &self.slots {
                        if slot.open() {
                            out.push(Note::Socket(SocketEvent::Closed(1006)));
                        }
                    }
                    return Err(Failure::new(
                        ErrorKind::WsClosed,
                        "the server closed the HTTP/2 connection under its WebSockets (1006)",
                    ));
                }
            };
            if let Err(e) = self.h2.recv(&scratch[..n]) {
                return Err(match self.h2.settled() {
                    false if scratch[..n].starts_with(b"HTTP/1.") => {
                        crate::h2::http1_answer(&scratch[..n])
                    }
                    _ => Failure::new(ErrorKind::H2Protocol, e.to_string()),
                });
            }
            self.settle(now, out);
            if n < scratch.len() && !self.tls {
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
        if self.phase == Phase::Connecting {
            if !(ready.readable || ready.writable) || !herd_engine::Transport::establish(t, conn)? {
                return Ok(());
            }
            if self.tls && conn.alpn() != Some(b"h2") {
                let chose = conn.alpn().map_or("no protocol".into(), |p| {
                    String::from_utf8_lossy(p).into_owned()
                });
                return Err(Failure::mismatched(
                    ErrorKind::Protocol,
                    format!(
                        "--http2: the server did not agree to HTTP/2 by ALPN (it chose {chose}), \
                         so it cannot carry WebSockets on HTTP/2 streams; run without --http2 to \
                         open them with HTTP/1.1's Upgrade"
                    ),
                ));
            }
            let (connect, tls) = Opened::times(t, conn, self.started);
            self.phase = Phase::Settling(connect, tls);
        }
        self.feed(now)?;
        self.write_out(t, conn)?;
        if ready.readable || ready.closed {
            self.read_in(t, conn, now, scratch, out)?;
            if let Phase::Settling(c, tls) = self.phase {
                if self.h2.settled() {
                    self.settled((c, tls), t, conn, now, out);
                }
            }
            if self.phase == Phase::Finished {
                return Ok(());
            }
            // Pongs, replies to closes, SETTINGS and window updates, the sockets' CONNECTs.
            self.feed(now)?;
            self.write_out(t, conn)?;
        }
        Ok(())
    }
}

/// What a socket whose stream ended (`end`) says to its messages; `open`: after its `200`.
fn ended(end: StreamEnd, open: bool) -> Failure {
    let how = match end {
        StreamEnd::Reset(code) => format!("reset it ({})", herd_h2::code_name(code)),
        StreamEnd::Unprocessed => "refused it (GOAWAY)".to_owned(),
        _ => "ended it".to_owned(),
    };
    let (kind, what) = if open {
        (
            ErrorKind::WsClosed,
            "the WebSocket's HTTP/2 stream, without a close frame (1006)",
        )
    } else {
        (ErrorKind::WsHandshake, "the WebSocket's extended CONNECT")
    };
    Failure::new(kind, format!("the server {how}: {what}"))
}

impl Session<Wire> for WsH2 {
    fn room(&self) -> usize {
        match self.phase {
            Phase::Finished => 0,
            _ if self.closing => 0,
            _ => self.idle.len(),
        }
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, _last: bool) {
        // The loop hands over no more than `room`: an idle socket is there.
        let Some(i) = self.idle.pop_front() else {
            return;
        };
        let slot = &mut self.slots[i];
        let open = slot.open();
        slot.s.submit(ticket, req, open);
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
        if let Some(f) = self.broken.take() {
            return self.broke(&f, out);
        }
        if let Err(f) = self.step(t, conn, ready, now, scratch, out) {
            return self.broke(&f, out);
        }
        if self.phase != Phase::Finished && self.closing && self.in_flight() == 0 {
            self.finish(out);
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        let Some(i) = self
            .slots
            .iter()
            .position(|s| s.s.queue.iter().any(|w| w.ticket == ticket))
        else {
            return true;
        };
        if self.ws.field.is_some() {
            // Matched by a field, a message can be given up alone: a late reply matches nothing.
            self.slots[i].s.forget(ticket);
            if self.slots[i].s.queue.is_empty() {
                self.idle.push_back(i);
            }
        } else {
            // In order, a late reply would answer the next message: the socket goes, and
            // opens again on its next message.
            self.slots[i].s.forget(ticket);
            self.lost(
                i,
                &Failure::new(ErrorKind::Timeout, "given up"),
                &mut Vec::new(),
            );
        }
        true
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for slot in &mut self.slots {
            slot.s.fail_all(why, out);
        }
        self.phase = Phase::Finished;
    }

    fn in_flight(&self) -> usize {
        self.slots.iter().map(|s| s.s.queue.len()).sum()
    }

    fn limit(&self) -> Option<usize> {
        let server = self.h2.max_streams();
        (server < self.slots.len()).then_some(server)
    }

    fn unsent(&self) -> herd_metrics::Backlog {
        // Frames held for their socket's `200`, and the connection's bytes the socket has not
        // taken (whose messages are not told apart: many sockets share them).
        let mut b = herd_metrics::Backlog {
            messages: 0,
            bytes: (self.out.len() - self.at.min(self.out.len())) as u64,
        };
        for w in self.slots.iter().flat_map(|s| &s.s.queue) {
            if w.frame.is_some() {
                b.add(herd_metrics::Backlog {
                    messages: 1,
                    bytes: u64::from(w.bytes),
                });
            }
        }
        b
    }

    fn wake_at(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter_map(|s| s.s.pinger.as_ref().and_then(|p| p.wake))
            .min()
    }
}
