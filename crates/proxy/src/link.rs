//! One proxied connection: its two sockets, their readiness, and the two pipes between
//! them; reading, stepping the toxics and writing until nothing moves.

use std::io::{self, ErrorKind, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::Instant;

use mio::net::TcpStream;

use crate::h2_follow::{Found, H2Conn};
use crate::http_fault::RequestScan;
use crate::pipe::Pipe;
use crate::stage::{CloseCause, Item};
use crate::stats::Stats;

/// Bytes a direction may hold (read, not yet written) before reading from its source stops.
const HOLD_MAX: u64 = 4 << 20;

pub(crate) struct Link {
    pub(crate) proxy: usize,
    pub(crate) serial: u64,
    pub(crate) stats: Arc<Stats>,
    pub(crate) client: TcpStream,
    pub(crate) upstream: TcpStream,
    pub(crate) connected: bool,
    /// Readable and writable flags of [client, upstream] (edge-triggered readiness).
    pub(crate) readable: [bool; 2],
    pub(crate) writable: [bool; 2],
    /// A side whose poll said its peer's end (or an error) came: read it to the end, never
    /// stop at a short read (the end comes after the bytes, with no new readiness).
    pub(crate) ending: [bool; 2],
    /// [upstream: client -> server, downstream: server -> client]
    pub(crate) pipes: [Pipe; 2],
    pub(crate) timer_at: Option<Instant>,
    /// The first instant a toxic holds something for, from the last pump.
    pub(crate) wake: Option<Instant>,
    pub(crate) requests: RequestScan,
    /// An h2c connection's frames, followed from its preface (`h2_follow`).
    pub(crate) h2: Option<Box<H2Conn>>,
}

pub(crate) enum End {
    Open,
    /// Open, and it could move more: its turn ended so that others get theirs.
    More,
    Close,
    Reset,
}

impl Link {
    fn side(&mut self, i: usize) -> &mut TcpStream {
        if i == 0 {
            &mut self.client
        } else {
            &mut self.upstream
        }
    }

    /// Reads, steps the toxics and writes, both ways, until nothing moves.
    pub(crate) fn pump(&mut self, now: Instant, scratch: &mut [u8]) -> End {
        if !self.connected {
            if !self.writable[1] {
                return End::Open;
            }
            match (self.upstream.take_error(), self.upstream.peer_addr()) {
                (Ok(None), Ok(_)) => self.connected = true,
                (Ok(None), Err(e)) if e.kind() == ErrorKind::NotConnected => {
                    self.writable[1] = false;
                    return End::Open;
                }
                _ => {
                    Stats::add(&self.stats.upstream_failures, 1);
                    return End::Close;
                }
            }
        }
        self.wake = None;
        for _ in 0..16 {
            let mut moved = false;
            for dir in 0..2 {
                match self.flow(dir, now, scratch) {
                    Ok((m, End::Open)) => moved |= m,
                    Ok((_, end)) => return end,
                    Err(_) => return End::Close,
                }
            }
            if self.pipes[0].dst_done && self.pipes[1].dst_done {
                return End::Close;
            }
            if !moved {
                return End::Open;
            }
        }
        End::More
    }

    /// Requests going up, for the `http` toxics of the responses coming down; an h2c
    /// connection's preface starts following its frames.
    fn follow_requests(&mut self, bytes: &[u8]) {
        let mut found = Vec::new();
        let keep = self.pipes[1].has_http();
        if let Some(seen) = self.requests.scan(bytes, keep, &mut found) {
            self.h2 = Some(Box::new(H2Conn::new(seen)));
        }
        for r in &found {
            self.pipes[1].note_request(r);
        }
    }

    /// Bytes read from an h2c connection's `dir` side: through its follower, which may hold
    /// or drop client frames and put frames in for the client (the `http2` toxics). With no
    /// such toxic the bytes go on as they came, only followed.
    fn h2_read(&mut self, dir: usize, bytes: &[u8], now: Instant) -> io::Result<()> {
        let Some(h2) = self.h2.as_mut() else {
            return Ok(());
        };
        let mut out = std::mem::take(&mut h2.out);
        let mut found = Found::default();
        let mut to_client = Vec::new();
        let (close, changed) = if dir == 0 {
            let pipe = &mut self.pipes[1];
            let quiet = h2.up_quiet(pipe.h2_faulty());
            if quiet {
                h2.up(bytes, &mut |_| None, None, &mut found);
            } else {
                h2.up(
                    bytes,
                    &mut |req| pipe.h2_choose(req),
                    Some(&mut out),
                    &mut found,
                );
            }
            (h2.down_now(&mut to_client), !quiet)
        } else if h2.down_quiet() {
            (h2.down(bytes, None, &mut found), false)
        } else {
            (h2.down(bytes, Some(&mut out), &mut found), true)
        };
        Stats::add(&self.stats.h2_resets, found.resets);
        Stats::add(&self.stats.h2_goaways, found.goaways);
        self.forward(dir, if changed { &out } else { bytes }, now)?;
        if !to_client.is_empty() {
            self.pipes[1].push(Item::Data {
                bytes: to_client,
                stamp: now,
            });
        }
        if close {
            self.pipes[1].push(Item::Close);
        }
        out.clear();
        if let Some(h2) = self.h2.as_mut() {
            h2.out = out;
        }
        Ok(())
    }

    /// Bytes for `dir`'s destination: written at once when nothing waits before them and no
    /// toxic is in the way, else queued.
    fn forward(&mut self, dir: usize, bytes: &[u8], now: Instant) -> io::Result<()> {
        let dst = 1 - dir;
        let stream = self.pipes[dir].stream;
        let mut from = 0;
        if self.pipes[dir].direct() && self.writable[dst] {
            from = self.write_some(dst, bytes)?;
            Stats::add(&self.stats.sent[stream.index()], from as u64);
        }
        if from < bytes.len() {
            self.pipes[dir].push(Item::Data {
                bytes: bytes[from..].to_vec(),
                stamp: now,
            });
        }
        Ok(())
    }

    /// One direction: `dir` 0 reads the client and writes upstream, 1 the other way.
    fn flow(&mut self, dir: usize, now: Instant, scratch: &mut [u8]) -> io::Result<(bool, End)> {
        let src = dir;
        let mut moved = false;
        let stream = self.pipes[dir].stream;
        while self.readable[src] && !self.pipes[dir].src_done && self.pipes[dir].buffered < HOLD_MAX
        {
            match self.side(src).read(scratch) {
                Ok(0) => {
                    self.pipes[dir].src_done = true;
                    self.pipes[dir].push(Item::Eof);
                    moved = true;
                }
                Ok(n) => {
                    moved = true;
                    // A short read emptied the socket (edge-triggered epoll on a stream
                    // socket): the next bytes bring a new readiness, so the read that would
                    // only say WouldBlock is saved (a third of the relay's calls per request).
                    if n < scratch.len() && !self.ending[src] {
                        self.readable[src] = false;
                    }
                    Stats::add(&self.stats.received[stream.index()], n as u64);
                    if dir == 0 && self.h2.is_none() {
                        self.follow_requests(&scratch[..n]);
                    }
                    if self.h2.is_some() {
                        self.h2_read(dir, &scratch[..n], now)?;
                    } else {
                        self.forward(dir, &scratch[..n], now)?;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.readable[src] = false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // A side that fails is a side that ended: the other gets the end after
                    // what is on its way, as toxiproxy's copy does.
                    self.readable[src] = false;
                    self.pipes[dir].src_done = true;
                    self.pipes[dir].push(Item::Eof);
                    moved = true;
                }
            }
        }
        if self.pipes[dir].has_stages() {
            let s = self.pipes[dir].step(now);
            if s.reset {
                Stats::add(&self.stats.resets, 1);
                return Ok((moved, End::Reset));
            }
            Stats::add(&self.stats.dropped_chunks, s.dropped_chunks);
            Stats::add(&self.stats.http_faults, s.http_hits);
            for c in s.closes {
                match c {
                    CloseCause::Limit => Stats::add(&self.stats.limited, 1),
                    CloseCause::Timeout => Stats::add(&self.stats.timed_out, 1),
                }
            }
            self.wake = match (self.wake, s.wake) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let (m, end) = self.write_out(dir)?;
        Ok((moved || m, end))
    }

    /// Writes what waits in a direction's last queue.
    fn write_out(&mut self, dir: usize) -> io::Result<(bool, End)> {
        let dst = 1 - dir;
        let Link {
            client,
            upstream,
            writable,
            pipes,
            stats,
            ..
        } = self;
        let sock = if dst == 0 { client } else { upstream };
        let pipe = &mut pipes[dir];
        let sent = &stats.sent[pipe.stream.index()];
        let mut moved = false;
        while writable[dst] {
            let from = pipe.written_front;
            match pipe.out().front() {
                None => break,
                Some(Item::Data { bytes, .. }) => {
                    let len = bytes.len();
                    let n = write_to(sock, &mut writable[dst], &bytes[from..])?;
                    Stats::add(sent, n as u64);
                    pipe.buffered = pipe.buffered.saturating_sub(n as u64);
                    moved |= n > 0;
                    if from + n == len {
                        pipe.out().pop_front();
                        pipe.written_front = 0;
                    } else {
                        pipe.written_front = from + n;
                    }
                }
                Some(Item::Eof) => {
                    pipe.out().pop_front();
                    pipe.dst_done = true;
                    let _ = sock.shutdown(Shutdown::Write);
                    moved = true;
                }
                Some(Item::Close) => return Ok((true, End::Close)),
                Some(Item::Reset) => return Ok((true, End::Reset)),
            }
        }
        Ok((moved, End::Open))
    }

    fn write_some(&mut self, dst: usize, bytes: &[u8]) -> io::Result<usize> {
        let Link {
            client,
            upstream,
            writable,
            ..
        } = self;
        let sock = if dst == 0 { client } else { upstream };
        write_to(sock, &mut writable[dst], bytes)
    }
}

/// Writes as much as the socket takes; clears the writable flag when it is full.
fn write_to(sock: &mut TcpStream, writable: &mut bool, bytes: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        match sock.write(&bytes[done..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                *writable = false;
                break;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
