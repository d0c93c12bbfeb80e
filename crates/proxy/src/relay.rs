//! The relay loop: every proxy's listeners and connections on one mio poll, as herd's client
//! loop runs its connections (no thread per connection, no blocking call).
//!
//! Each pass: apply what the API changed (before any readiness is handled, so nothing the API
//! answered for is escaped), accept, read, step the toxics, write, and sleep until the next
//! readiness or the first instant a toxic holds bytes for.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use crate::http_fault::RequestScan;
use crate::pipe::Pipe;
use crate::registry::Shared;
use crate::stage::{CloseCause, Item};
use crate::stats::Stats;
use crate::toxic::{Stream, Toxic};

pub(crate) const WAKER: Token = Token(usize::MAX);
const LISTENER_BIT: usize = 1 << (usize::BITS - 2);
/// Bytes a direction may hold (read, not yet written) before reading from its source stops.
const HOLD_MAX: u64 = 4 << 20;
const SCRATCH: usize = 64 * 1024;

/// A proxy as the loop runs it.
struct Live {
    name: String,
    epoch: u64,
    toxics_version: u64,
    toxics: Vec<Toxic>,
    upstream: SocketAddr,
    stats: Arc<Stats>,
    listener: Option<(usize, TcpListener)>,
    accepted: u64,
}

struct Link {
    proxy: usize,
    serial: u64,
    stats: Arc<Stats>,
    client: TcpStream,
    upstream: TcpStream,
    connected: bool,
    /// Readable and writable flags of [client, upstream] (edge-triggered readiness).
    readable: [bool; 2],
    writable: [bool; 2],
    /// [upstream: client -> server, downstream: server -> client]
    pipes: [Pipe; 2],
    timer_at: Option<Instant>,
    /// The first instant a toxic holds something for, from the last pump.
    wake: Option<Instant>,
    requests: RequestScan,
}

enum End {
    Open,
    /// Open, and it could move more: its turn ended so that others get theirs.
    More,
    Close,
    Reset,
}

pub(crate) struct Relay {
    poll: Poll,
    shared: Arc<Shared>,
    seed: u64,
    generation: u64,
    proxies: Slab<Live>,
    by_name: HashMap<String, usize>,
    links: Slab<Link>,
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    /// Connections that had more to move when their turn ended: driven again next pass.
    again: Vec<usize>,
    scratch: Vec<u8>,
}

impl Relay {
    pub fn new(poll: Poll, shared: Arc<Shared>, seed: u64) -> Relay {
        Relay {
            poll,
            shared,
            seed,
            generation: 0,
            proxies: Slab::new(),
            by_name: HashMap::new(),
            links: Slab::new(),
            timers: BinaryHeap::new(),
            again: Vec::new(),
            scratch: vec![0; SCRATCH],
        }
    }

    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = if self.again.is_empty() {
                self.timers
                    .peek()
                    .map(|Reverse((at, _, _))| at.saturating_duration_since(Instant::now()))
            } else {
                Some(std::time::Duration::ZERO)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != ErrorKind::Interrupted {
                    eprintln!("herd proxy: poll failed: {e}");
                    return;
                }
            }
            self.apply_changes();
            let mut touched = std::mem::take(&mut self.again);
            for ev in events.iter() {
                let t = ev.token();
                if t == WAKER {
                    continue;
                }
                if t.0 & LISTENER_BIT != 0 {
                    self.accept(t.0 & !LISTENER_BIT);
                    continue;
                }
                let (key, side) = (t.0 / 2, t.0 % 2);
                if let Some(link) = self.links.get_mut(key) {
                    if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                        link.readable[side] = true;
                    }
                    if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                        link.writable[side] = true;
                    }
                    touched.push(key);
                }
            }
            let now = Instant::now();
            while let Some(Reverse((at, key, serial))) = self.timers.peek().copied() {
                if at > now {
                    break;
                }
                self.timers.pop();
                if let Some(link) = self.links.get_mut(key) {
                    if link.serial == serial && link.timer_at == Some(at) {
                        link.timer_at = None;
                        touched.push(key);
                    }
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for key in touched {
                self.drive(key, now);
            }
        }
    }

    /// What the API changed since the last pass: proxies gone, stopped or restarted, new
    /// ones, new toxic chains on every open connection.
    fn apply_changes(&mut self) {
        let generation = self.shared.generation();
        if generation == self.generation {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let mut reg = shared.lock();
        let gone: Vec<usize> = self
            .proxies
            .iter()
            .filter(|(_, l)| {
                reg.proxies
                    .get(&l.name)
                    .is_none_or(|e| e.epoch != l.epoch || !e.enabled)
            })
            .map(|(k, _)| k)
            .collect();
        for key in gone {
            self.stop(key);
        }
        let now = Instant::now();
        for e in reg.proxies.values_mut() {
            match self.by_name.get(&e.name) {
                None if e.enabled => {
                    if let Some(l) = e.listener.take() {
                        self.start(e, l);
                    }
                }
                Some(&key) if self.proxies[key].toxics_version != e.toxics_version => {
                    let live = &mut self.proxies[key];
                    live.toxics = e.toxics.clone();
                    live.toxics_version = e.toxics_version;
                    self.sync_links(key, now);
                }
                _ => {}
            }
        }
        drop(reg);
        self.generation = generation;
        self.shared.mark_applied(generation);
    }

    fn start(&mut self, e: &crate::registry::Entry, l: std::net::TcpListener) {
        let entry = self.proxies.vacant_entry();
        let key = entry.key();
        let mut listener = TcpListener::from_std(l);
        let token = Token(LISTENER_BIT | key);
        if let Err(err) = self
            .poll
            .registry()
            .register(&mut listener, token, Interest::READABLE)
        {
            eprintln!("herd proxy: {}: cannot watch its listener: {err}", e.name);
            return;
        }
        entry.insert(Live {
            name: e.name.clone(),
            epoch: e.epoch,
            toxics_version: e.toxics_version,
            toxics: e.toxics.clone(),
            upstream: e.upstream_addr,
            stats: Arc::clone(&e.stats),
            listener: Some((key, listener)),
            accepted: 0,
        });
        self.by_name.insert(e.name.clone(), key);
    }

    fn stop(&mut self, key: usize) {
        let mut live = self.proxies.remove(key);
        self.by_name.remove(&live.name);
        if let Some((_, mut l)) = live.listener.take() {
            let _ = self.poll.registry().deregister(&mut l);
        }
        let links: Vec<usize> = self
            .links
            .iter()
            .filter(|(_, l)| l.proxy == key)
            .map(|(k, _)| k)
            .collect();
        for k in links {
            self.end(k, End::Close);
        }
    }

    fn accept(&mut self, proxy: usize) {
        loop {
            let Some(live) = self.proxies.get_mut(proxy) else {
                return;
            };
            let Some((_, listener)) = live.listener.as_ref() else {
                return;
            };
            let (client, _) = match listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of descriptors or the like: try again on the next readiness.
                    eprintln!("herd proxy: {}: accept failed: {e}", live.name);
                    return;
                }
            };
            live.accepted += 1;
            let serial = live.accepted;
            Stats::add(&live.stats.accepted, 1);
            let upstream = match TcpStream::connect(live.upstream) {
                Ok(s) => s,
                Err(_) => {
                    Stats::add(&live.stats.upstream_failures, 1);
                    Stats::add(&live.stats.closed, 1);
                    continue;
                }
            };
            let _ = client.set_nodelay(true);
            let _ = upstream.set_nodelay(true);
            let now = Instant::now();
            let mut pipes = [Pipe::new(Stream::Upstream), Pipe::new(Stream::Downstream)];
            let seed = self.seed;
            let name = live.name.clone();
            for p in &mut pipes {
                p.sync(&live.toxics, |t| stage_seed(seed, &name, serial, t), now);
            }
            let stats = Arc::clone(&live.stats);
            let entry = self.links.vacant_entry();
            let key = entry.key();
            let mut link = Link {
                proxy,
                serial,
                stats,
                client,
                upstream,
                connected: false,
                readable: [false; 2],
                writable: [false; 2],
                pipes,
                timer_at: None,
                wake: None,
                requests: RequestScan::default(),
            };
            let reg = self.poll.registry();
            let both = Interest::READABLE | Interest::WRITABLE;
            if reg
                .register(&mut link.client, Token(key * 2), both)
                .is_err()
                || reg
                    .register(&mut link.upstream, Token(key * 2 + 1), both)
                    .is_err()
            {
                Stats::add(&link.stats.closed, 1);
                continue;
            }
            entry.insert(link);
        }
    }

    /// Puts the proxy's toxic chain on each of its open connections.
    fn sync_links(&mut self, proxy: usize, now: Instant) {
        let live = &self.proxies[proxy];
        let keys: Vec<usize> = self
            .links
            .iter()
            .filter(|(_, l)| l.proxy == proxy)
            .map(|(k, _)| k)
            .collect();
        for key in &keys {
            let link = &mut self.links[*key];
            let serial = link.serial;
            for p in &mut link.pipes {
                p.sync(
                    &live.toxics,
                    |t| stage_seed(self.seed, &live.name, serial, t),
                    now,
                );
            }
        }
        for key in keys {
            self.drive(key, now);
        }
    }

    /// Moves what can move on a connection, then ends it or sets its timer.
    fn drive(&mut self, key: usize, now: Instant) {
        let Some(link) = self.links.get_mut(key) else {
            return;
        };
        let end = link.pump(now, &mut self.scratch);
        match end {
            End::More => self.again.push(key),
            End::Open => {
                let wake = link.wake;
                if let Some(w) = wake {
                    if link.timer_at.is_none_or(|t| w < t) {
                        link.timer_at = Some(w);
                        self.timers.push(Reverse((w, key, link.serial)));
                    }
                }
            }
            end => self.end(key, end),
        }
    }

    fn end(&mut self, key: usize, how: End) {
        let mut link = self.links.remove(key);
        let reg = self.poll.registry();
        let _ = reg.deregister(&mut link.client);
        let _ = reg.deregister(&mut link.upstream);
        if let End::Reset = how {
            for s in [&link.client, &link.upstream] {
                let _ = socket2::SockRef::from(s).set_linger(Some(std::time::Duration::ZERO));
            }
        }
        Stats::add(&link.stats.closed, 1);
    }
}

/// The seed of one toxic on one connection: the run's seed, the proxy, the connection's
/// number in the proxy's order of accepts, the toxic's name.
fn stage_seed(seed: u64, proxy: &str, serial: u64, toxic: &Toxic) -> u64 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for b in proxy
        .bytes()
        .chain([0])
        .chain(toxic.name.bytes())
        .chain([0, toxic.stream.index() as u8])
        .chain(serial.to_le_bytes())
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
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
    fn pump(&mut self, now: Instant, scratch: &mut [u8]) -> End {
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

    /// Requests going up, for the `http` toxics of the responses coming down.
    fn follow_requests(&mut self, bytes: &[u8]) {
        let mut found = Vec::new();
        let keep = self.pipes[1].has_http();
        self.requests.scan(bytes, keep, &mut found);
        for r in &found {
            self.pipes[1].note_request(r);
        }
    }

    /// One direction: `dir` 0 reads the client and writes upstream, 1 the other way.
    fn flow(&mut self, dir: usize, now: Instant, scratch: &mut [u8]) -> io::Result<(bool, End)> {
        let (src, dst) = (dir, 1 - dir);
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
                    Stats::add(&self.stats.received[stream.index()], n as u64);
                    if dir == 0 {
                        self.follow_requests(&scratch[..n]);
                    }
                    let mut from = 0;
                    if self.pipes[dir].direct() && self.writable[dst] {
                        from = self.write_some(dst, &scratch[..n])?;
                        Stats::add(&self.stats.sent[stream.index()], from as u64);
                    }
                    if from < n {
                        self.pipes[dir].push(Item::Data {
                            bytes: scratch[from..n].to_vec(),
                            stamp: now,
                        });
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
