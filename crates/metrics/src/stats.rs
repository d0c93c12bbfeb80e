use crate::{ErrorKind, ErrorTable, Outcome, Verdict};
use hdrhistogram::Histogram;
use std::time::Duration;

/// Largest value a histogram holds, in microseconds (one hour); larger values are clamped to it.
pub const HISTOGRAM_MAX_US: u64 = 3_600_000_000;

/// A histogram of microseconds from 1 us to one hour at 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, 3).expect("static histogram bounds are valid")
}

pub(crate) fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HISTOGRAM_MAX_US)
}

/// Everything measured about a set of outcomes (the whole run, or one request name).
#[derive(Clone, Debug)]
pub struct Stats {
    pub sent: u64,
    pub completed: u64,
    pub ok: u64,
    pub failed: u64,
    pub errors: ErrorTable,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Latency from the intended send time, in microseconds, every outcome (errors included).
    pub latency: Histogram<u64>,
    /// Service time from the actual send, in microseconds, for requests that were written.
    pub service: Histogram<u64>,
    /// Connection set-up time, in microseconds, for each connection opened.
    pub connect: Histogram<u64>,
    /// Response status counts, indexed by code (0..=999).
    pub status: Box<[u64; 1000]>,
    pub body_min: u64,
    pub body_max: u64,
    pub body_sum: u64,
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
            latency: new_histogram(),
            service: new_histogram(),
            connect: new_histogram(),
            status: Box::new([0; 1000]),
            body_min: u64::MAX,
            body_max: 0,
            body_sum: 0,
        }
    }
}

impl Stats {
    pub fn record(&mut self, o: &Outcome) {
        self.latency.saturating_record(micros(o.latency));
        if let Some(s) = o.service {
            self.sent += 1;
            self.service.saturating_record(micros(s));
        }
        if let Some(c) = o.connect {
            self.connect.saturating_record(micros(c));
        }
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        match o.result {
            Ok(v) => {
                self.completed += 1;
                match v {
                    Verdict::Ok => self.ok += 1,
                    Verdict::Failed => self.failed += 1,
                }
                self.status[(o.status as usize).min(999)] += 1;
                self.body_min = self.body_min.min(o.body_bytes);
                self.body_max = self.body_max.max(o.body_bytes);
                self.body_sum += o.body_bytes;
            }
            Err(kind) => self.errors.add(kind, o.message.as_deref()),
        }
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
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        let _ = self.connect.add(&other.connect);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        self.body_min = self.body_min.min(other.body_min);
        self.body_max = self.body_max.max(other.body_max);
        self.body_sum += other.body_sum;
    }

    /// Status codes that occurred, ascending.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(c, n)| (c as u16, *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
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
        // errors count in latency (the user waited) but were never sent here
        assert_eq!(s.latency.len(), 3);
        assert_eq!(s.service.len(), 2);
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
        assert_eq!(s.latency.len(), 1);
        assert!(s.latency.max() >= HISTOGRAM_MAX_US - HISTOGRAM_MAX_US / 100);
    }
}
