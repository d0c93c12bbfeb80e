//! [`Ordered`]: the session of a protocol whose responses come back in the order of their
//! requests over one byte stream (HTTP/1.1), one at a time or pipelined. A window of K is
//! h2load's `--h1 -m K`, a sliding window: a new request goes out as soon as one completes,
//! and the requests waiting to be written leave together in one write. In the closed model
//! the window refills in batches ([`Session::refill_in_batches`]): new requests wait until
//! the whole window is answered and then leave in one write, as wrk's pipelining script
//! refills its 16 at once, since a generator faster than the server would otherwise write one
//! request per response.
//! Responses are matched in order against the queue, each read by its own parser (so HEAD,
//! 1xx, 204 and 304 never desynchronise it), each timed against its own request.
//!
//! The protocol is the [`Parse`] given: the real one in `herd-http`, a one-line one for the
//! engine's fake transport.

use crate::in_flight::InFlight;
use crate::session::{Failed, Note, Opened, Ready, Ticket};
use crate::Session;
use crate::{Buf, Failure, Io, Parse, Request, Response, Transport};
use herd_metrics::ErrorKind;
use std::sync::Arc;
use std::time::Instant;

/// One request in the pipeline.
struct Entry<P> {
    ticket: Ticket,
    bytes: Arc<[u8]>,
    parser: P,
    resp: Response,
}

/// Requests written in order on a byte stream and their responses read in order.
pub struct Ordered<P> {
    /// u32 here and in `batch`: 8 bytes less in a session held per connection.
    window: u32,
    queue: InFlight<Entry<P>>,
    /// The first `sent` entries are written; `staged` of them are in `outbuf` (several leave
    /// in one write) or being written straight from their bytes (one, `partial` written).
    sent: usize,
    staged: usize,
    /// Requests written together; empty with a window of one. This and `pending` are
    /// [`Buf`]s: 8 bytes each in a session held per connection, and mostly empty.
    outbuf: Buf,
    outpos: usize,
    partial: usize,
    /// Received and not yet consumed: a partial head, or what a server sent ahead.
    pending: Buf,
    started: Instant,
    open: bool,
    /// The server said it closes (or the last call went out): no more requests.
    closing: bool,
    /// The peer closed its side: read to the end.
    hup: bool,
    /// A read may find bytes no event will announce (the buffer filled, or a write blocked).
    unread: bool,
    finished: bool,
    /// A batch's last answer came with requests waiting for it: they go at the loop's next
    /// pump of this session ([`Session::wake_at`]), with those of the users it just answered.
    owed: bool,
    /// While requests are in flight, new ones are written once this many wait (1: at once).
    batch: u32,
}

impl<P: Parse> Ordered<P> {
    /// A session with up to `window` requests in flight (1: one at a time), for a
    /// connection whose opening began at `started`.
    pub fn new(window: usize, started: Instant) -> Self {
        Ordered {
            window: u32::try_from(window).unwrap_or(u32::MAX).max(1),
            queue: InFlight::with_capacity(window),
            sent: 0,
            staged: 0,
            outbuf: Buf::new(),
            outpos: 0,
            partial: 0,
            pending: Buf::new(),
            started,
            open: false,
            closing: false,
            hup: false,
            unread: false,
            finished: false,
            owed: false,
            batch: 1,
        }
    }

    /// Whether the requests not yet written go now: nothing is in flight, enough of them
    /// wait, the last call is among them, or a write is half done.
    fn due(&self) -> bool {
        self.sent == 0
            || self.queue.len() - self.sent >= self.batch as usize
            || self.closing
            || self.outpos < self.outbuf.len()
            || self.partial > 0
    }

    /// Writes what is due, then hands bytes a server sent ahead to the requests just written.
    fn send<T: Transport + ?Sized>(
        &mut self,
        t: &mut T,
        conn: &mut T::Conn,
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        let before = self.sent;
        self.write_out(t, conn, now)?;
        if self.sent > before && !self.pending.is_empty() {
            let held = std::mem::take(&mut self.pending);
            let used = self.absorb(&held, now, out)?;
            self.pending.extend_from_slice(&held[used..]);
        }
        Ok(())
    }

    /// Writes what is queued: `Ok(true)` when the socket took all of it.
    fn write_out<T: Transport + ?Sized>(
        &mut self,
        t: &mut T,
        conn: &mut T::Conn,
        now: Instant,
    ) -> Result<bool, Failure> {
        // A batch may have waited since the loop handed its requests over: their service
        // time starts now.
        let held = self.batch > 1;
        loop {
            let io = if self.outpos < self.outbuf.len() {
                t.write(conn, &self.outbuf[self.outpos..])?
            } else {
                let left = self.queue.len() - self.sent;
                if left == 0 {
                    return Ok(true);
                }
                if left > 1 && self.partial == 0 {
                    // Several requests leave together, in one system call.
                    self.outbuf.clear();
                    self.outpos = 0;
                    for e in self.queue.range_mut(self.sent..) {
                        self.outbuf.extend_from_slice(&e.bytes);
                        if held {
                            e.resp.sent = Some(now);
                        }
                    }
                    self.staged = self.queue.len();
                    continue;
                }
                let e = &mut self.queue[self.sent];
                if held && self.partial == 0 {
                    e.resp.sent = Some(now);
                }
                t.write(conn, &e.bytes[self.partial..])?
            };
            match io {
                Io::Done(n) if self.outpos < self.outbuf.len() => {
                    self.outpos += n;
                    if self.outpos == self.outbuf.len() {
                        self.outbuf.clear();
                        self.outpos = 0;
                        self.sent = self.staged;
                    }
                }
                Io::Done(n) => {
                    self.partial += n;
                    if self.partial == self.queue[self.sent].bytes.len() {
                        self.partial = 0;
                        self.sent += 1;
                        self.staged = self.sent;
                    }
                }
                Io::Blocked => {
                    // The rest goes on the next writable event; a response's event meanwhile
                    // would be missed, so read once the requests are out.
                    self.unread = true;
                    return Ok(false);
                }
                Io::Closed => {
                    return Err(Failure::new(
                        ErrorKind::Reset,
                        "the connection accepted no more of the request",
                    ))
                }
            }
        }
    }

    /// Feeds `got` (just read, or what was held) to the responses in order, reporting each
    /// one complete.
    fn absorb(&mut self, got: &[u8], now: Instant, out: &mut Vec<Note>) -> Result<usize, Failure> {
        let mut at = 0;
        while at < got.len() && self.sent > 0 {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            if front.resp.first_byte.is_none() {
                // Several responses in one read share its instant. The response carries it:
                // no `Note::FirstByte` per response, which the loop has no use for.
                front.resp.first_byte = Some(now);
            }
            let before = front.resp.events.as_deref().map(|ev| ev.events);
            let (used, done) = front.parser.feed(&got[at..], now, &mut front.resp)?;
            at += used;
            front.resp.bytes_received += used as u64;
            if !done {
                if let Some(ev) = front.resp.events.as_deref() {
                    // The head just said it is a stream, or events counted: the loop's wait
                    // for the next one starts over.
                    if before.is_none_or(|n| n < ev.events) {
                        out.push(Note::Stream(front.ticket, ev.last));
                    }
                }
                break;
            }
            self.complete(out);
        }
        Ok(at)
    }

    /// The front request has its full response.
    fn complete(&mut self, out: &mut Vec<Note>) {
        let Some(e) = self.queue.pop_front() else {
            return;
        };
        self.sent -= 1;
        self.staged = self.staged.saturating_sub(1);
        let keep_alive = e.resp.keep_alive;
        out.push(Note::Response(e.ticket, e.resp));
        if !keep_alive && !self.closing {
            self.closing = true;
        }
        if !keep_alive {
            // A server that announces its close acts on nothing after this response.
            self.fail_rest(
                &Failure::new(
                    ErrorKind::Eof,
                    "the server closed the connection after an earlier response",
                ),
                true,
                out,
            );
        }
    }

    /// Reports every request still queued as failed with `why`; `announced`: the server said
    /// it closes, so none of them was seen.
    fn fail_rest(&mut self, why: &Failure, announced: bool, out: &mut Vec<Note>) {
        for (k, e) in self.queue.drain(..).enumerate() {
            out.push(Note::Failed(Failed {
                ticket: e.ticket,
                failure: why.clone(),
                received: e.resp.bytes_received,
                unseen: announced || k >= self.sent,
                sent: None,
            }));
        }
        self.sent = 0;
        self.staged = 0;
        self.partial = 0;
        self.outbuf.clear();
        self.outpos = 0;
    }

    /// The connection broke with `f`: the front request fails with it, the rest as
    /// outstanding, and the connection is finished.
    fn broke(&mut self, f: Failure, out: &mut Vec<Note>) {
        if let Some(e) = self.queue.pop_front() {
            let unseen = self.sent == 0;
            self.sent = self.sent.saturating_sub(1);
            out.push(Note::Failed(Failed {
                ticket: e.ticket,
                failure: f.clone(),
                received: e.resp.bytes_received,
                unseen,
                sent: None,
            }));
        }
        let rest = Failure::new(
            f.kind,
            format!(
                "the connection failed with this request outstanding: {}",
                f.message
            ),
        );
        self.fail_rest(&rest, false, out);
        self.finish(out);
    }

    /// The server closed: that ends a body delimited by the close, or fails the response.
    fn closed(&mut self, out: &mut Vec<Note>) {
        let pending = std::mem::take(&mut self.pending);
        if self.sent > 0 {
            if let Some(mut e) = self.queue.pop_front() {
                self.sent -= 1;
                e.resp.bytes_received += pending.len() as u64;
                match e.parser.closed(&pending, &mut e.resp) {
                    Ok(()) => {
                        e.resp.keep_alive = false;
                        out.push(Note::Response(e.ticket, e.resp));
                    }
                    Err(failure) => out.push(Note::Failed(Failed {
                        ticket: e.ticket,
                        received: e.resp.bytes_received,
                        failure,
                        unseen: false,
                        sent: None,
                    })),
                }
            }
        }
        if !self.queue.is_empty() {
            let n = self.queue.len();
            let why = Failure::new(
                ErrorKind::Eof,
                format!("the server closed the connection with {n} requests outstanding"),
            );
            self.fail_rest(&why, self.closing, out);
        }
        self.finish(out);
    }

    fn finish(&mut self, out: &mut Vec<Note>) {
        self.closing = true;
        if !self.finished {
            self.finished = true;
            out.push(Note::Closed);
        }
    }

    /// Reads all the connection holds and feeds it to the responses.
    fn read_in<T: Transport + ?Sized>(
        &mut self,
        t: &mut T,
        conn: &mut T::Conn,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        loop {
            let n = match t.read(conn, scratch) {
                Ok(Io::Done(n)) => n,
                Ok(Io::Blocked) => {
                    self.unread = false;
                    return;
                }
                Ok(Io::Closed) => return self.closed(out),
                Err(f) => return self.broke(f, out),
            };
            let got = &scratch[..n];
            let fed = if self.pending.is_empty() {
                self.absorb(got, now, out).map(|used| {
                    self.pending.extend_from_slice(&got[used..]);
                })
            } else {
                let mut held = std::mem::take(&mut self.pending);
                held.extend_from_slice(got);
                let fed = self.absorb(&held, now, out);
                if let Ok(used) = fed {
                    held.consume(used);
                }
                self.pending = held;
                fed.map(|_| ())
            };
            if let Err(f) = fed {
                return self.broke(f, out);
            }
            // A short read emptied the socket: the rest comes with the next event (unless the
            // server closed, which announces nothing more).
            if n < scratch.len() && !self.hup {
                self.unread = false;
                return;
            }
        }
    }
}

impl<T: Transport + ?Sized, P: Parse> Session<T> for Ordered<P> {
    fn room(&self) -> usize {
        if self.closing {
            0
        } else {
            self.window as usize - self.queue.len()
        }
    }

    fn submit(&mut self, ticket: Ticket, req: &Request, last: bool) {
        let bytes = match (&req.closing, last) {
            (Some(closing), true) => Arc::clone(closing),
            _ => Arc::clone(&req.bytes),
        };
        if last {
            self.closing = true;
        }
        self.queue.push_back(Entry {
            ticket,
            bytes,
            parser: P::for_request(req),
            resp: Response::default(),
        });
    }

    fn write_now(&mut self, t: &mut T, conn: &mut T::Conn) -> bool {
        // One request at a time on an open connection that owes nothing: no batch, nothing
        // half written, nothing unread or held, the server still there.
        let idle = self.open
            && !self.finished
            && !self.hup
            && !self.unread
            && self.window == 1
            && self.sent + 1 == self.queue.len()
            && self.partial == 0
            && self.outpos >= self.outbuf.len()
            && self.pending.is_empty();
        if !idle {
            return false;
        }
        let e = &self.queue[self.sent];
        match t.write(conn, &e.bytes) {
            Ok(Io::Done(n)) if n == e.bytes.len() => {
                self.sent += 1;
                self.staged = self.sent;
                true
            }
            Ok(Io::Done(n)) => {
                self.partial = n;
                false
            }
            // The pump that follows writes again and reports what this one met: a socket
            // that failed fails again (TLS holds what it took, but nothing leaves a broken
            // socket), one that blocked waits for its event.
            _ => false,
        }
    }

    fn pump(
        &mut self,
        t: &mut T,
        conn: &mut T::Conn,
        ready: Ready,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        if self.finished {
            return;
        }
        self.hup |= ready.closed;
        let mut writable = ready.writable;
        if !self.open {
            if !(ready.readable || ready.writable) {
                return;
            }
            match t.establish(conn) {
                Ok(true) => {
                    self.open = true;
                    let (connect, tls) = Opened::times(t, conn, self.started);
                    out.push(Note::Open(Opened {
                        connect,
                        tls,
                        protocol: "http/1.1",
                        resumption: None,
                        negotiated: t.negotiated(conn),
                        upgrade: None,
                    }));
                    writable = true;
                }
                Ok(false) => return,
                Err(f) => {
                    // Nothing was written: every request is unseen, but a connection that
                    // never opened is the failure itself, not a reason to try again.
                    for e in self.queue.drain(..) {
                        out.push(Note::Failed(Failed {
                            ticket: e.ticket,
                            failure: f.clone(),
                            received: 0,
                            unseen: false,
                            sent: None,
                        }));
                    }
                    self.sent = 0;
                    return self.finish(out);
                }
            }
        }
        if ready.timer && self.owed {
            writable = true;
        }
        if writable && self.sent < self.queue.len() && self.due() {
            self.owed = false;
            if let Err(f) = self.send(t, conn, now, out) {
                return self.broke(f, out);
            }
        } else if writable && !ready.readable {
            if let Err(f) = t.flush(conn) {
                return self.broke(f, out);
            }
        }
        let outstanding = self.sent > 0 || self.closing;
        if (ready.readable || self.unread || self.hup) && (outstanding || self.hup) {
            self.read_in(t, conn, now, scratch, out);
            // The last answer of a batch came: what waited for it goes at the loop's next pump,
            // not now. The users this read answered submit their next requests first, so the
            // batch leaves whole: written now, it left without them, they waited behind it for
            // the next, and every batch after it was split in two (wrk's script writes its 16
            // at once; this wrote 1.12 times per 16 requests against nginx's static file). A
            // pump comes even when none of them submits (their users think): `wake_at`.
            self.owed =
                self.batch > 1 && !self.finished && self.sent == 0 && !self.queue.is_empty();
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        // An instant already past: the loop's next pass, after what this one brought.
        self.owed.then_some(self.started)
    }

    fn refill_in_batches(&mut self) {
        // Each write costs the generator more than its system call: the segment crosses
        // loopback in the writer's context and wakes the server. Three quarters took `--pipeline
        // 16` from 0.123 writes per request to 0.084 (half left it above wrk's); the whole
        // window, as wrk's script, takes it to 1/16 and, the server then answering 16 at a
        // time, halves the reads (0.64 to 0.37 per request against nginx's static file) and the
        // waits in epoll: herd's CPU per request on the static file read 0.85 x wrk's (bench/
        // RESULTS.md, session 13; 1.27 in session 12).
        self.batch = self.window.max(1);
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        self.fail_rest(why, false, out);
        self.finished = true;
        self.closing = true;
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }
}
