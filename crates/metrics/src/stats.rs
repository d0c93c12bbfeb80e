use crate::compact::HISTOGRAM_MAX_US;
use crate::{CompactHistogram, ErrorKind, ErrorTable, Outcome, Verdict};
use std::time::Duration;

pub(crate) fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HISTOGRAM_MAX_US)
}

/// Everything measured about a set of outcomes (the whole run, or one request name).
///
/// A `Stats` that recorded nothing holds no heap memory beyond its error table's fixed slots:
/// there is one per request name per worker thread, and a URL file may have thousands of names.
#[derive(Clone, Debug)]
pub struct Stats {
    pub sent: u64,
    pub completed: u64,
    pub ok: u64,
    pub failed: u64,
    pub errors: ErrorTable,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Latency from the intended send time to the end of the response, in microseconds: every
    /// response, whatever its status; requests that got none are in `time_to_error`.
    pub latency: CompactHistogram,
    /// Service time from the actual send to the end of the response, in microseconds: every
    /// response.
    pub service: CompactHistogram,
    /// Connection set-up time, in microseconds, for each connection opened.
    pub connect: CompactHistogram,
    /// The lookup of the target's name, in microseconds: herd resolves it once, before the
    /// first request, so no request carries it (the caller records it; the engine never does).
    pub dns: CompactHistogram,
    /// The phases of [`crate::Phases`], in microseconds, for the requests that had them.
    pub tls: CompactHistogram,
    pub blocked: CompactHistogram,
    pub waiting: CompactHistogram,
    pub receiving: CompactHistogram,
    /// From the intended send time to the failure, in microseconds, for requests that got no
    /// response (refused, reset, timed out, ...).
    pub time_to_error: CompactHistogram,
    /// Response status counts by code.
    pub status: StatusCounts,
    pub body_min: u64,
    pub body_max: u64,
    pub body_sum: u64,
    /// The responses read as event streams, when there were any (boxed: most runs have none,
    /// and there is one `Stats` per request name per thread).
    pub stream: Option<Box<crate::StreamStats>>,
    /// gRPC calls by `grpc-status` and their latency, when there were any (boxed, as
    /// `stream`).
    pub grpc: Option<Box<crate::GrpcStats>>,
    /// WebSocket pings, closes and refused handshakes, when there were any (boxed, as
    /// `stream`).
    pub ws: Option<Box<crate::SocketStats>>,
}

impl Stats {
    /// Stats whose latency and service time record into dense histograms from the start: a
    /// worker's totals, recorded on every request (per-name stats stay compact). The phases
    /// every response has (waiting, receiving) and the one a shared connection gives (blocked)
    /// are dense too: a compact histogram's insert cost ~1% of CPU per request at full speed.
    pub fn dense() -> Self {
        Stats {
            latency: CompactHistogram::dense(),
            service: CompactHistogram::dense(),
            blocked: CompactHistogram::dense(),
            waiting: CompactHistogram::dense(),
            receiving: CompactHistogram::dense(),
            ..Stats::default()
        }
    }
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            sent: 0,
            completed: 0,
            ok: 0,
            failed: 0,
            errors: ErrorTable::default(),
            bytes_sent: 0,
            bytes_received: 0,
            latency: CompactHistogram::new(),
            service: CompactHistogram::new(),
            connect: CompactHistogram::new(),
            dns: CompactHistogram::new(),
            tls: CompactHistogram::new(),
            blocked: CompactHistogram::new(),
            waiting: CompactHistogram::new(),
            receiving: CompactHistogram::new(),
            time_to_error: CompactHistogram::new(),
            status: StatusCounts::default(),
            body_min: u64::MAX,
            body_max: 0,
            body_sum: 0,
            stream: None,
            grpc: None,
            ws: None,
        }
    }
}

impl Stats {
    pub fn record(&mut self, o: &Outcome) {
        self.count(o);
        let p = &o.phases;
        for (h, d) in [
            (&mut self.waiting, p.waiting),
            (&mut self.receiving, p.receiving),
        ] {
            if let Some(d) = d {
                h.saturating_record(micros(d));
            }
        }
        match o.result {
            Ok(_) => {
                self.latency.saturating_record(micros(o.latency));
                if let Some(s) = o.service {
                    self.service.saturating_record(micros(s));
                }
            }
            Err(_) => self.time_to_error.saturating_record(micros(o.latency)),
        }
    }

    /// Records everything of `o` but its latency, service time, waiting and receiving: the
    /// counts, and the histograms few outcomes have (connect, TLS, blocked).
    #[inline]
    pub(crate) fn count(&mut self, o: &Outcome) {
        if o.service.is_some() {
            self.sent += 1;
        }
        if let Some(c) = o.connect {
            self.connect.saturating_record(micros(c));
        }
        let p = &o.phases;
        for (h, d) in [(&mut self.tls, p.tls), (&mut self.blocked, p.blocked)] {
            if let Some(d) = d {
                h.saturating_record(micros(d));
            }
        }
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        if let Some(s) = &o.stream {
            self.stream.get_or_insert_default().record(s);
        }
        match o.result {
            Ok(v) => {
                self.completed += 1;
                match v {
                    Verdict::Ok => self.ok += 1,
                    Verdict::Failed => self.failed += 1,
                }
                if o.status != crate::NO_STATUS {
                    self.status.add(o.status, 1);
                }
                if let Some(code) = o.grpc {
                    let g = self.grpc.get_or_insert_default();
                    g.record(code, micros(o.latency));
                }
                self.body_min = self.body_min.min(o.body_bytes);
                self.body_max = self.body_max.max(o.body_bytes);
                self.body_sum += o.body_bytes;
            }
            Err(kind) => self.errors.add(kind, o.message.as_deref()),
        }
    }

    /// Bytes held on the heap (histograms and status table), the part that grows with use.
    pub fn heap_bytes(&self) -> usize {
        self.latency.heap_bytes()
            + self.service.heap_bytes()
            + self.connect.heap_bytes()
            + self.dns.heap_bytes()
            + self.tls.heap_bytes()
            + self.blocked.heap_bytes()
            + self.waiting.heap_bytes()
            + self.receiving.heap_bytes()
            + self.time_to_error.heap_bytes()
            + self.status.heap_bytes()
            + self.errors.heap_bytes()
            + self.stream.as_ref().map_or(0, |s| s.heap_bytes())
            + self.grpc.as_ref().map_or(0, |g| {
                std::mem::size_of::<crate::GrpcStats>() + g.heap_bytes()
            })
            + self.ws.as_ref().map_or(0, |w| w.heap_bytes())
    }

    /// Records the lookup of the target's name, made before the run.
    pub fn record_lookup(&mut self, d: Duration) {
        self.dns.saturating_record(micros(d));
    }

    /// Requests that ended one way or another: completed plus errors.
    pub fn ended(&self) -> u64 {
        self.completed + self.errors.total()
    }

    pub fn error_count(&self, kind: ErrorKind) -> u64 {
        self.errors.counts[kind.index()]
    }

    /// Adds another set exactly (histograms bucket by bucket).
    pub fn merge(&mut self, other: &Stats) {
        self.sent += other.sent;
        self.completed += other.completed;
        self.ok += other.ok;
        self.failed += other.failed;
        self.errors.merge(&other.errors);
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.connect.add(&other.connect);
        self.dns.add(&other.dns);
        self.tls.add(&other.tls);
        self.blocked.add(&other.blocked);
        self.waiting.add(&other.waiting);
        self.receiving.add(&other.receiving);
        self.time_to_error.add(&other.time_to_error);
        for (code, n) in other.statuses() {
            self.status.add(code, n);
        }
        self.body_min = self.body_min.min(other.body_min);
        self.body_max = self.body_max.max(other.body_max);
        self.body_sum += other.body_sum;
        if let Some(s) = &other.stream {
            self.stream.get_or_insert_default().merge(s);
        }
        if let Some(g) = &other.grpc {
            self.grpc.get_or_insert_default().merge(g);
        }
        if let Some(w) = &other.ws {
            self.ws.get_or_insert_default().merge(w);
        }
    }

    /// Status codes that occurred, ascending.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status.iter()
    }
}

/// Response counts by status code, kept as a short sorted list: a run sees a handful of codes,
/// and a table of 1,000 counters per request name per thread was 8 KiB each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts(Vec<(u16, u64)>);

impl StatusCounts {
    /// Adds `n` responses with `code`; codes above 999 count as 999.
    #[inline]
    pub fn add(&mut self, code: u16, n: u64) {
        // Most runs see one code: twice a request (the totals, the second), no search for it.
        if let Some(first) = self.0.first_mut().filter(|p| p.0 == code) {
            first.1 += n;
            return;
        }
        self.insert(code, n);
    }

    fn insert(&mut self, code: u16, n: u64) {
        let code = code.min(999);
        match self.0.binary_search_by_key(&code, |p| p.0) {
            Ok(i) => self.0[i].1 += n,
            Err(i) => {
                // Most names see one status: room for exactly one, not Vec's default four.
                self.0.reserve_exact(1);
                self.0.insert(i, (code, n));
            }
        }
    }

    /// Codes that occurred, ascending, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.0.iter().copied()
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<(u16, u64)>()
    }
}

impl std::ops::Index<usize> for StatusCounts {
    type Output = u64;

    /// The count for one code, 0 for a code never seen.
    fn index(&self, code: usize) -> &u64 {
        match self.0.binary_search_by_key(&code, |p| usize::from(p.0)) {
            Ok(i) => &self.0[i].1,
            Err(_) => &0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn status_counts_stay_ascending_whichever_code_came_first() {
        // The first code is counted without a search: the others, and codes above 999,
        // still land in order, each once.
        let mut s = StatusCounts::default();
        for code in [404, 404, 200, 503, 1200, 200, 404, 999] {
            s.add(code, 1);
        }
        let all: Vec<_> = s.iter().collect();
        assert_eq!(all, [(200, 2), (404, 3), (503, 1), (999, 2)]);
    }

    #[test]
    fn record_splits_ok_failed_and_errors() {
        let mut s = Stats::default();
        s.record(&Outcome::completed(0, ms(5), ms(4), 200, Verdict::Ok));
        s.record(&Outcome::completed(0, ms(6), ms(4), 503, Verdict::Failed));
        s.record(&Outcome::error(0, ms(7), ErrorKind::Reset));
        assert_eq!(
            (s.completed, s.ok, s.failed, s.errors.total()),
            (2, 1, 1, 1)
        );
        assert_eq!(s.ended(), 3);
        assert_eq!(s.statuses().collect::<Vec<_>>(), vec![(200, 1), (503, 1)]);
        // latency and service time are of responses; the reset is in time_to_error
        assert_eq!(s.latency.len(), 2);
        assert_eq!(s.service.len(), 2);
        assert_eq!(s.time_to_error.len(), 1);
    }

    #[test]
    fn a_messages_reply_is_completed_under_no_status() {
        let mut s = Stats::default();
        let mut second = crate::Second::new(0);
        for o in [
            Outcome::completed(0, ms(5), ms(4), crate::NO_STATUS, Verdict::Ok),
            Outcome::completed(0, ms(5), ms(4), crate::NO_STATUS, Verdict::Ok),
            // An Upgrade refused: its status, as any response's.
            Outcome::completed(0, ms(6), ms(4), 403, Verdict::Failed),
        ] {
            s.record(&o);
            second.record(&o);
        }
        assert_eq!((s.completed, s.ok, s.failed), (3, 2, 1));
        assert_eq!(s.statuses().collect::<Vec<_>>(), vec![(403, 1)]);
        assert_eq!(s.latency.len(), 3);
        assert_eq!((second.ok, second.status_class), (2, [0, 0, 0, 0, 1, 0]));
    }

    #[test]
    fn latency_counts_responses_and_time_to_error_counts_failures() {
        let mut s = Stats::default();
        for i in 0..10 {
            s.record(&Outcome::completed(
                0,
                ms(5),
                ms(4),
                200 + (i % 2) * 300,
                Verdict::Ok,
            ));
        }
        for kind in [
            ErrorKind::Timeout,
            ErrorKind::ConnectRefused,
            ErrorKind::Reset,
        ] {
            s.record(&Outcome::error(0, ms(1_000), kind));
        }
        assert_eq!(s.latency.len(), s.completed);
        assert_eq!(s.service.len(), s.completed);
        assert_eq!(s.time_to_error.len(), s.errors.total());
        assert_eq!((s.completed, s.errors.total()), (10, 3));
        // the failures' long waits do not move the responses' latency
        assert!(s.latency.max() < 6_000, "{}", s.latency.max());
        assert!(s.time_to_error.min() >= 999_000);
    }

    #[test]
    fn merge_is_exact() {
        let mut a = Stats::default();
        let mut b = Stats::default();
        for i in 1..=100 {
            a.record(&Outcome::completed(0, ms(i), ms(i), 200, Verdict::Ok));
            b.record(&Outcome::completed(0, ms(100 + i), ms(i), 200, Verdict::Ok));
        }
        a.merge(&b);
        assert_eq!(a.latency.len(), 200);
        let p50 = a.latency.value_at_quantile(0.5);
        assert!((99_000..=101_000).contains(&p50), "p50 {p50}");
        assert_eq!(a.status[200], 200);
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut s = Stats::default();
        s.record(&Outcome::error(
            0,
            Duration::from_secs(10_000),
            ErrorKind::Timeout,
        ));
        assert_eq!(s.time_to_error.len(), 1);
        assert!(s.time_to_error.max() >= HISTOGRAM_MAX_US - HISTOGRAM_MAX_US / 100);
    }
}
