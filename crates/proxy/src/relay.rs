//! The relay loop: every proxy's listeners and connections on one mio poll, as herd's client
//! loop runs its connections (no thread per connection, no blocking call).
//!
//! Each pass: apply what the API changed (before any readiness is handled, so nothing the API
//! answered for is escaped), accept, read, step the toxics, write, and sleep until the next
//! readiness or the first instant a toxic holds bytes for.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};

use crate::link::{End, Link};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use crate::alarm::{Wakeup, ALARM};
use crate::http_fault::RequestScan;
use crate::pipe::Pipe;
use crate::registry::Shared;
use crate::stats::Stats;
use crate::toxic::{Stream, Toxic};

pub(crate) const WAKER: Token = Token(usize::MAX);
const LISTENER_BIT: usize = 1 << (usize::BITS - 2);
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
    wakeup: Wakeup,
    scratch: Vec<u8>,
}

impl Relay {
    pub fn new(poll: Poll, shared: Arc<Shared>, seed: u64) -> Relay {
        let wakeup = Wakeup::register(poll.registry(), ALARM);
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
            wakeup,
            scratch: vec![0; SCRATCH],
        }
    }

    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = if self.again.is_empty() {
                let next = self.timers.peek().map(|Reverse((at, _, _))| *at);
                next.map(|at| self.wakeup.timeout(at, Instant::now()))
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
                if t == ALARM {
                    self.wakeup.fired();
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
                    if ev.is_read_closed() || ev.is_error() {
                        link.ending[side] = true;
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
                ending: [false; 2],
                pipes,
                timer_at: None,
                wake: None,
                requests: RequestScan::default(),
                h2: None,
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
