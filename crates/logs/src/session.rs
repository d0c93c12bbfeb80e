//! Clients and sessions: a client is an address and a user agent; a session is a client's run of
//! page requests with no gap longer than the idle time (30 min, as web analytics count visits).
//! Think time is the gap between a session's page requests; static files are left out, since a
//! browser fetches them within milliseconds of their page. Sessions that ended are dropped as
//! the log's time moves on, so memory follows the clients active at once.

use crate::distinct::Distinct;
use crate::record::Record;
use ahash::AHashMap;
use hdrhistogram::Histogram;
use std::hash::{BuildHasher, Hash, Hasher};

struct Live {
    start: i64,
    last: i64,
    requests: u64,
}

pub struct Sessions {
    idle_us: i64,
    live: AHashMap<u64, Live>,
    pub clients: Distinct,
    /// Think times in milliseconds.
    pub think_ms: Histogram<u64>,
    /// Page requests per session.
    pub lengths: Histogram<u64>,
    /// Session durations in seconds (first to last page request).
    pub durations_s: Histogram<u64>,
    pub sessions: u64,
    pub assets: u64,
    last_sweep: i64,
    hasher: ahash::RandomState,
}

fn hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

impl Sessions {
    pub fn new(idle_s: u64) -> Sessions {
        Sessions {
            idle_us: idle_s as i64 * 1_000_000,
            live: AHashMap::new(),
            clients: Distinct::default(),
            think_ms: hist(),
            lengths: hist(),
            durations_s: hist(),
            sessions: 0,
            assets: 0,
            last_sweep: i64::MIN,
            hasher: ahash::RandomState::with_seeds(1, 2, 3, 4),
        }
    }

    pub fn idle_s(&self) -> u64 {
        (self.idle_us / 1_000_000) as u64
    }

    pub fn add(&mut self, r: &Record, asset: bool) {
        if asset {
            self.assets += 1;
            return;
        }
        let mut h = self.hasher.build_hasher();
        r.client.hash(&mut h);
        r.user_agent.hash(&mut h);
        let key = h.finish();
        self.clients.add(key);
        let now = r.time.micros;
        match self.live.get_mut(&key) {
            Some(s) if now - s.last <= self.idle_us => {
                let gap = now - s.last;
                if gap >= 0 {
                    let _ = self.think_ms.record((gap / 1000) as u64);
                    s.last = now;
                }
                s.requests += 1;
            }
            Some(s) => {
                let old = std::mem::replace(
                    s,
                    Live {
                        start: now,
                        last: now,
                        requests: 1,
                    },
                );
                self.end(&old);
                self.sessions += 1;
            }
            None => {
                self.live.insert(
                    key,
                    Live {
                        start: now,
                        last: now,
                        requests: 1,
                    },
                );
                self.sessions += 1;
            }
        }
        if now.saturating_sub(self.last_sweep) > 60_000_000 {
            self.sweep(now);
        }
    }

    fn end(&mut self, s: &Live) {
        let _ = self.lengths.record(s.requests);
        let _ = self
            .durations_s
            .record(((s.last - s.start) / 1_000_000).max(0) as u64);
    }

    fn sweep(&mut self, now: i64) {
        self.last_sweep = now;
        let idle = self.idle_us;
        let mut ended = Vec::new();
        self.live.retain(|_, s| {
            let keep = now.saturating_sub(s.last) <= idle;
            if !keep {
                ended.push((s.start, s.last, s.requests));
            }
            keep
        });
        for (start, last, requests) in ended {
            self.end(&Live {
                start,
                last,
                requests,
            });
        }
    }

    /// Ends every session still open; call once at the end.
    pub fn finish(&mut self) {
        self.sweep(i64::MAX);
    }
}
