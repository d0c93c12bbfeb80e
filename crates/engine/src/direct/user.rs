//! One user of the direct worker: its connection, where it is in its exchange, and the steps
//! that move it on as its socket allows (finish connecting, write the request, read the
//! response). The loop in `mod.rs` decides when to take a step and what follows it.

use super::connect_failure;
use crate::{Codec, Failure, Parse, Request, Response};
use herd_metrics::ErrorKind;
use mio::net::TcpStream;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Between iterations: in the kick list to start the next one, or (open model) waiting for
    /// an arrival.
    Idle,
    Connecting,
    /// This many bytes of the request written.
    Writing(usize),
    Reading,
    /// No more iterations for this user.
    Done,
}

/// What a step of the state machine came to.
pub(super) enum Step {
    /// Wait for the socket's next edge.
    Blocked,
    /// The request is out: on to the response.
    Sent,
    /// A full response: record it and go on.
    Complete,
    Failed(Failure),
}

pub(super) struct User<P> {
    pub sock: Option<TcpStream>,
    /// Bumped for every new socket and part of its token, so a closed socket's late events
    /// never reach its successor.
    pub generation: u32,
    /// The socket finished connecting (it counts as an open connection).
    pub connected: bool,
    pub state: State,
    /// Exchanges completed on the current connection.
    pub uses: u64,
    /// When the connection's last exchange started.
    pub last_used: Instant,
    /// When the iteration was meant to start: latency is measured from here.
    pub intended: Instant,
    /// When it did start (later than `intended` for an arrival that waited for a free user):
    /// the deadline counts from here.
    pub start: Instant,
    /// When the request was sent; `None` while connecting.
    pub sent: Option<Instant>,
    pub connect_start: Instant,
    pub connect: Option<Duration>,
    pub deadline: Instant,
    /// The stale keep-alive retry was used in this iteration.
    pub retried: bool,
    /// The connection was reused after sitting idle: a failure with nothing received may be
    /// the server's keep-alive timeout rather than an error.
    pub stale_candidate: bool,
    /// The socket may hold bytes no edge will announce: the last read filled the buffer.
    pub unread: bool,
    /// The server closed its side (or the socket failed): read to the end, since no further
    /// edge will come, and never reuse the connection.
    pub hup: bool,
    pub parser: P,
    pub resp: Response,
    /// Bytes received and not yet consumed: a partial head, or the start of the next response.
    pub pending: Vec<u8>,
}

impl<P: Parse> User<P> {
    /// A user not yet connected, idle at `now`.
    pub fn new(parser: P, now: Instant) -> Self {
        User {
            sock: None,
            generation: 0,
            connected: false,
            state: State::Idle,
            uses: 0,
            last_used: now,
            intended: now,
            start: now,
            sent: None,
            connect_start: now,
            connect: None,
            deadline: now,
            retried: false,
            stale_candidate: false,
            unread: false,
            hup: false,
            parser,
            resp: Response::default(),
            pending: Vec::new(),
        }
    }

    /// A connecting socket had an edge: `Ok(true)` once connected (on to writing), `Ok(false)`
    /// while still connecting (a spurious edge), or why it failed.
    pub fn connected(&mut self, addr: SocketAddr) -> Result<bool, Failure> {
        let Some(sock) = self.sock.as_ref() else {
            return Ok(false);
        };
        match sock.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return Err(connect_failure(addr, &e)),
        }
        match sock.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
            Err(e) => return Err(connect_failure(addr, &e)),
        }
        // Requests go out in one write; Nagle would only hold them back.
        let _ = sock.set_nodelay(true);
        let now = Instant::now();
        self.connect = Some(now - self.connect_start);
        self.sent = Some(now);
        self.connected = true;
        self.uses = 0;
        self.state = State::Writing(0);
        Ok(true)
    }

    /// Writes (the rest of) `request`; once it is out, reads on with a fresh parser from
    /// `codec` whatever of the response is already held.
    pub fn write<C: Codec<Parser = P>>(&mut self, request: &Request, codec: &C) -> Step {
        let State::Writing(mut done) = self.state else {
            return Step::Blocked;
        };
        let Some(sock) = self.sock.as_ref() else {
            return Step::Blocked;
        };
        let bytes = &request.bytes;
        while done < bytes.len() {
            match (&*sock).write(&bytes[done..]) {
                Ok(0) => {
                    return Step::Failed(Failure::new(
                        ErrorKind::Reset,
                        "the connection accepted no more of the request",
                    ))
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // The rest goes on the next writable edge; an edge of the response meanwhile
                    // would be missed, so read once the request is out.
                    self.state = State::Writing(done);
                    self.unread = true;
                    return Step::Blocked;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Step::Failed(Failure::io(&e)),
            }
        }
        // Bytes left over from the previous response (a server that answered ahead) belong to
        // this one and count as received.
        self.resp.bytes_received = self.pending.len() as u64;
        self.parser = codec.parser(request);
        self.state = State::Reading;
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            let fed = self.parser.feed(&pending, &mut self.resp);
            self.pending = pending;
            match fed {
                Ok((used, done)) => {
                    self.pending.drain(..used);
                    if done {
                        // The server answered ahead: the whole response was already here.
                        self.resp.bytes_received -= self.pending.len() as u64;
                        return Step::Complete;
                    }
                }
                Err(f) => return Step::Failed(f),
            }
        }
        Step::Sent
    }

    /// Reads what the socket holds and feeds it to the parser.
    pub fn read(&mut self, scratch: &mut [u8]) -> Step {
        let Some(sock) = self.sock.as_ref() else {
            return Step::Blocked;
        };
        loop {
            let n = match (&*sock).read(scratch) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.unread = false;
                    return Step::Blocked;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Step::Failed(Failure::io(&e)),
            };
            if n == 0 {
                // The server closed: that ends a body delimited by the close, or fails the
                // response; either way the connection is done.
                let closed = self.parser.closed(&self.pending, &mut self.resp);
                self.pending.clear();
                self.resp.keep_alive = false;
                return match closed {
                    Ok(()) => Step::Complete,
                    Err(f) => Step::Failed(f),
                };
            }
            self.resp.bytes_received += n as u64;
            let filled = n == scratch.len();
            let fed = if self.pending.is_empty() {
                let got = &scratch[..n];
                self.parser.feed(got, &mut self.resp).map(|(used, done)| {
                    self.pending.extend_from_slice(&got[used..]);
                    done
                })
            } else {
                self.pending.extend_from_slice(&scratch[..n]);
                self.parser
                    .feed(&self.pending, &mut self.resp)
                    .map(|(used, done)| {
                        self.pending.drain(..used);
                        done
                    })
            };
            match fed {
                Err(f) => return Step::Failed(f),
                Ok(true) => {
                    // What is left belongs to the next response.
                    self.resp.bytes_received -= self.pending.len() as u64;
                    self.unread = filled;
                    return Step::Complete;
                }
                // A short read emptied the socket: the rest comes with the next edge (unless
                // the server closed, which announces nothing more).
                Ok(false) if !filled && !self.hup => {
                    self.unread = false;
                    return Step::Blocked;
                }
                Ok(false) => {}
            }
        }
    }
}
