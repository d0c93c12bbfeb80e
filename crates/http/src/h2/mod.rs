//! HTTP/2 as an engine [`Session`]: one connection, many streams (h2load's `-m`), on nghttp2
//! through herd-h2. The loop's tickets ride in a small slab whose index is the stream's
//! exchange id, so an event finds its exchange without a map.
//!
//! What the server says becomes what the loop needs (notes.rs): a stream's end is a response; a
//! RST_STREAM is a failure classed by its code; a GOAWAY ends the connection's new streams,
//! and those it left unprocessed go back to the loop as `unseen`, sent again elsewhere and
//! counted once.

use crate::wire::{Conn, Wire};
use herd_engine::{Failure, Io, Note, Opened, Parts, Ready, Request, Response, Session, Ticket};
use herd_h2::{ClientSession, Settings};
use herd_metrics::ErrorKind;
use std::sync::Arc;
use std::time::Instant;

mod batch;
mod notes;
mod pace;
mod schedule;
#[cfg(test)]
mod tests;

/// The stream id of an exchange held for its batch (batch.rs): not yet handed to nghttp2.
const HELD: i32 = -1;

struct Stream {
    ticket: Ticket,
    stream_id: i32,
    resp: Response,
    /// Opened before the server's SETTINGS said its stream limit, as the n-th stream in
    /// flight: refused past that limit, it was over a limit herd could not know, and goes
    /// again.
    early: Option<usize>,
    /// The request keeps its response (headers and body, for a script).
    keep: bool,
    /// An event-stream response is read as an LLM's tokens.
    llm: bool,
    /// A body sent in pieces on a schedule, the pieces still to go.
    pace: Option<Box<schedule::Pace>>,
}

/// The session of one HTTP/2 connection.
pub struct H2 {
    h2: ClientSession,
    /// Streams in flight at most (`--streams`), below the server's own limit.
    window: usize,
    streams: Vec<Option<Stream>>,
    free: Vec<usize>,
    in_flight: usize,
    /// Frames waiting for the socket: `out[at..]`.
    out: Vec<u8>,
    at: usize,
    /// Read bytes not yet counted against a stream (frame headers, SETTINGS, PING): they go
    /// to the next stream that hears from the server, so the streams' bytes add up to the
    /// connection's.
    unclaimed: u64,
    started: Instant,
    /// Over TLS, or h2c with prior knowledge.
    tls: bool,
    open: bool,
    /// No new streams: the last call went out, or the server said GOAWAY.
    closing: bool,
    finished: bool,
    /// A session that could not even be made: every exchange fails with it.
    broken: Option<Failure>,
    /// Requests nghttp2 would not take, reported by the next pump.
    /// `unseen`: held for a batch, never sent.
    rejected: Vec<(usize, Failure, bool)>,
    /// Exchanges waiting for their batch ([`Session::refill_in_batches`]): (exchange, what it
    /// asks, whether its response is kept). Their streams open together.
    held: Vec<(usize, Arc<Parts>, bool)>,
    /// When their hold ends (`batch.rs`).
    held_until: Option<Instant>,
    /// The end of a hold that began in this pump, for the loop ([`Session::wake_at`]).
    wake: Option<Instant>,
    /// While streams are open, new ones start once this many wait (1: at once).
    batch: usize,
    /// Streams whose body goes in pieces still, and when the next piece is due.
    paced: usize,
    pace_wake: Option<Instant>,
}

impl H2 {
    pub(crate) fn new(settings: &Settings, window: usize, started: Instant, tls: bool) -> H2 {
        let (h2, broken) = match ClientSession::new(settings) {
            Ok(h2) => (Some(h2), None),
            Err(e) => (None, Some(Failure::new(ErrorKind::Other, e.to_string()))),
        };
        H2 {
            // nghttp2 only fails to make a session without memory; such a session is born
            // finished (below) and the placeholder is never driven.
            h2: h2.unwrap_or_else(|| {
                ClientSession::new(&Settings::default()).expect("an HTTP/2 session")
            }),
            window: window.max(1),
            streams: Vec::new(),
            free: Vec::new(),
            in_flight: 0,
            out: Vec::with_capacity(16 << 10),
            at: 0,
            unclaimed: 0,
            started,
            tls,
            open: false,
            closing: false,
            finished: false,
            broken,
            rejected: Vec::new(),
            held: Vec::new(),
            held_until: None,
            wake: None,
            batch: 1,
            paced: 0,
            pace_wake: None,
        }
    }

    fn take(&mut self, exchange: usize) -> Option<Stream> {
        let stream = self.streams.get_mut(exchange)?.take()?;
        self.free.push(exchange);
        self.in_flight -= 1;
        if stream.pace.is_some() {
            self.paced -= 1;
        }
        Some(stream)
    }

    fn finish(&mut self, out: &mut Vec<Note>) {
        self.closing = true;
        if !self.finished {
            self.finished = true;
            out.push(Note::Closed);
        }
    }

    fn broke(&mut self, f: Failure, out: &mut Vec<Note>) {
        self.fail_all(&f, out);
        self.finish(out);
    }

    /// Writes the frames nghttp2 has ready: `Ok(false)` when the socket is full.
    fn write_out(&mut self, t: &mut Wire, conn: &mut Conn) -> Result<bool, Failure> {
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
                Io::Blocked => return Ok(false),
                Io::Closed => {
                    return Err(Failure::new(
                        ErrorKind::Reset,
                        "the connection accepted no more frames",
                    ))
                }
            }
        }
        Ok(true)
    }
}

impl H2 {
    fn read_in(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        loop {
            let n = match herd_engine::Transport::read(t, conn, scratch) {
                Ok(Io::Done(n)) => n,
                Ok(Io::Blocked) => return,
                Ok(Io::Closed) => return self.broke(closed_with(self.in_flight), out),
                Err(f) => return self.broke(f, out),
            };
            self.unclaimed += n as u64;
            if let Err(e) = self.h2.recv(&scratch[..n]) {
                self.settle(now, out);
                let f = match self.h2.settled() {
                    false if scratch[..n].starts_with(b"HTTP/1.") => http1_answer(&scratch[..n]),
                    _ => Failure::new(ErrorKind::H2Protocol, e.to_string()),
                };
                return self.broke(f, out);
            }
            self.settle(now, out);
            // A short read drained a plain socket; over TLS it may be one record of several
            // that rustls already holds, and no readiness event would come for them.
            if n < scratch.len() && !self.tls {
                return;
            }
        }
    }
}

/// The failure of an h2c connection whose server answered the preface in HTTP/1.1: it does not
/// speak HTTP/2 on this port, and no other connection of the run will fare better.
pub(crate) fn http1_answer(bytes: &[u8]) -> Failure {
    let line = bytes
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or(bytes);
    Failure::mismatched(
        ErrorKind::Protocol,
        format!(
            "--http2: the server speaks HTTP/1.1 on this port, not HTTP/2 over plain TCP (h2c): \
             it answered the HTTP/2 preface with {}; run without --http2, or enable h2c on the \
             server (nginx: `listen ... http2;`), or use https:// where it offers HTTP/2 by ALPN",
            crate::error::excerpt(line)
        ),
    )
}

impl Session<Wire> for H2 {
    fn room(&self) -> usize {
        if self.closing || self.finished {
            return 0;
        }
        // Until the server's SETTINGS say its limit, nghttp2 assumes 100 (h2load and browsers
        // start the same way): a server whose limit is lower refuses the rest, sent again.
        let ours = self.window.saturating_sub(self.in_flight);
        ours.min(self.h2.capacity().saturating_sub(self.held.len()))
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, last: bool) {
        if last {
            // The connection's last call: it closes once this stream is done.
            self.closing = true;
        }
        let exchange = self.free.pop().unwrap_or_else(|| {
            self.streams.push(None);
            self.streams.len() - 1
        });
        let resp = Response {
            keep_alive: true,
            ..Response::default()
        };
        self.in_flight += 1;
        let stream = |stream_id| Stream {
            ticket,
            stream_id,
            resp,
            early: None,
            keep: req.keep_response,
            llm: req.llm,
            pace: None,
        };
        let Some(parts) = &req.parts else {
            self.streams[exchange] = Some(stream(0));
            let f = Failure::new(
                ErrorKind::Other,
                "this request has no HTTP/2 form (method, path, headers): a bug in herd",
            );
            // Reported by the next pump, which the loop does at once.
            self.rejected.push((exchange, f, false));
            return;
        };
        self.streams[exchange] = Some(stream(HELD));
        if self.batch > 1 {
            self.held
                .push((exchange, Arc::clone(parts), req.keep_response));
        } else {
            self.start(exchange, parts, req.keep_response, false);
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
        self.wake = None;
        if self.finished {
            return;
        }
        if let Some(f) = self.broken.take() {
            return self.broke(f, out);
        }
        self.report_rejected(out);
        if !self.open {
            if !(ready.readable || ready.writable) {
                return;
            }
            match herd_engine::Transport::establish(t, conn) {
                Ok(true) => {}
                Ok(false) => return,
                Err(f) => {
                    // A connection that never opened is the failure itself, not a reason to
                    // send its requests elsewhere.
                    self.fail_all(&f, out);
                    return self.finish(out);
                }
            }
            if self.tls && conn.alpn() != Some(b"h2") {
                let chose = conn.alpn().map_or("no protocol".into(), |p| {
                    String::from_utf8_lossy(p).into_owned()
                });
                let f = Failure::mismatched(
                    ErrorKind::Protocol,
                    format!(
                        "--http2: the server did not agree to HTTP/2 by ALPN (it chose {chose}); \
                         run without --http2, or enable HTTP/2 on the server (nginx: \
                         `listen ... ssl http2;` or `http2 on;`)"
                    ),
                );
                self.fail_all(&f, out);
                return self.finish(out);
            }
            self.open = true;
            let (connect, tls) = Opened::times(t, conn, self.started);
            out.push(Note::Open(Opened {
                connect,
                tls,
                protocol: if self.tls { "h2" } else { "h2c" },
                resumption: None,
                negotiated: herd_engine::Transport::negotiated(t, conn),
                upgrade: None,
            }));
        }
        if !self.held.is_empty() && self.due(now) {
            self.release(now);
            self.report_rejected(out);
        }
        self.pace(now);
        if let Err(f) = self.write_out(t, conn) {
            return self.broke(f, out);
        }
        if ready.readable || ready.closed {
            self.read_in(t, conn, now, scratch, out);
            if self.finished {
                return;
            }
            // The last answers of a batch came: what waited for them goes now (the loop's
            // next write may never come, its users thinking).
            if !self.held.is_empty() && self.due(now) {
                self.release(now);
                self.report_rejected(out);
            }
        }
        // Acknowledgements and window updates for what was just read.
        if let Err(f) = self.write_out(t, conn) {
            return self.broke(f, out);
        }
        // Done: the last call answered, or the server's GOAWAY, or nghttp2 ended the session.
        if self.in_flight == 0 && (self.closing || !self.h2.alive()) {
            self.finish(out);
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        let found = self
            .streams
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.ticket == ticket));
        let Some(exchange) = found else {
            return true;
        };
        if let Some(s) = self.take(exchange) {
            if s.stream_id == HELD {
                self.held.retain(|(x, _, _)| *x != exchange);
                if self.held.is_empty() {
                    self.held_until = None;
                }
            } else {
                // RST_STREAM(CANCEL) goes out with the connection's next write.
                let _ = self.h2.cancel(s.stream_id);
            }
        }
        true
    }

    fn refill_in_batches(&mut self) {
        self.batch = self.window.div_ceil(2);
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.wake, self.pace_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        self.fail_all(why, out);
        self.finished = true;
        self.closing = true;
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn limit(&self) -> Option<usize> {
        // Until the server's SETTINGS come, nghttp2's guess (100) holds, as in `room`.
        let server = self.h2.max_streams();
        (server < self.window).then_some(server)
    }
}

/// What a connection the server closed with `open` streams still waiting says.
fn closed_with(open: usize) -> Failure {
    Failure::new(
        ErrorKind::Eof,
        format!(
            "the server closed the connection with {} streams open",
            herd_result::format::count(open as u64)
        ),
    )
}
