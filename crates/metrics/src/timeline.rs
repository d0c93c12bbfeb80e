use crate::stats::micros;
use crate::{ErrorKind, Outcome, Verdict};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// What ended in one second of the measurement, from one worker or merged over all of them.
#[derive(Clone, Debug)]
pub struct Second {
    /// Seconds since the measurement started.
    pub index: u64,
    pub ok: u64,
    pub failed: u64,
    pub errors: [u64; ErrorKind::COUNT],
    /// Status counts by class: index 1 = 1xx … 5 = 5xx, 0 = anything else.
    pub status_class: [u64; 6],
    pub bytes_received: u64,
    /// Latency in microseconds, two significant digits: enough for a per-second curve, small
    /// enough to ship one per worker per second.
    pub latency: Histogram<u64>,
}

impl Second {
    pub fn new(index: u64) -> Self {
        Second {
            index,
            ok: 0,
            failed: 0,
            errors: [0; ErrorKind::COUNT],
            status_class: [0; 6],
            bytes_received: 0,
            latency: Histogram::new_with_bounds(1, crate::HISTOGRAM_MAX_US, 2)
                .expect("static histogram bounds are valid"),
        }
    }

    pub fn record(&mut self, o: &Outcome) {
        self.latency.saturating_record(micros(o.latency));
        self.bytes_received += o.bytes_received;
        match o.result {
            Ok(v) => {
                match v {
                    Verdict::Ok => self.ok += 1,
                    Verdict::Failed => self.failed += 1,
                }
                let class = (o.status / 100) as usize;
                self.status_class[if (1..=5).contains(&class) { class } else { 0 }] += 1;
            }
            Err(k) => self.errors[k.index()] += 1,
        }
    }

    /// Requests that ended in this second.
    pub fn requests(&self) -> u64 {
        self.ok + self.failed + self.error_total()
    }

    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    pub fn merge(&mut self, other: &Second) {
        self.ok += other.ok;
        self.failed += other.failed;
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        for (a, b) in self.status_class.iter_mut().zip(other.status_class.iter()) {
            *a += b;
        }
        self.bytes_received += other.bytes_received;
        let _ = self.latency.add(&other.latency);
    }
}

/// Collects the seconds every worker reports and merges those of the same index.
#[derive(Debug, Default)]
pub struct Timeline {
    seconds: BTreeMap<u64, Second>,
}

impl Timeline {
    pub fn add(&mut self, s: Second) {
        match self.seconds.get_mut(&s.index) {
            Some(have) => have.merge(&s),
            None => {
                self.seconds.insert(s.index, s);
            }
        }
    }

    /// The most recent second with data, if any.
    pub fn last(&self) -> Option<&Second> {
        self.seconds.values().next_back()
    }

    pub fn get(&self, index: u64) -> Option<&Second> {
        self.seconds.get(&index)
    }

    /// Every second from 0 to `len - 1`, empty ones included, so a stall shows as zeros rather
    /// than as a gap that plots would bridge. Responses that arrived after the window (requests
    /// in flight at its end) fold into the last second rather than make a stub second of their own.
    pub fn finish(mut self, len: u64) -> Vec<Second> {
        if len == 0 {
            return self.seconds.into_values().collect();
        }
        let mut out: Vec<Second> = (0..len)
            .map(|i| self.seconds.remove(&i).unwrap_or_else(|| Second::new(i)))
            .collect();
        let last = out.last_mut().expect("len > 0");
        for late in self.seconds.values() {
            last.merge(late);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_from_workers_merge_and_gaps_fill() {
        let mut t = Timeline::default();
        for worker in 0..2 {
            let mut s = Second::new(2);
            s.record(&Outcome::completed(
                0,
                Duration::from_millis(worker + 1),
                Duration::ZERO,
                200,
                Verdict::Ok,
            ));
            t.add(s);
        }
        let mut e = Second::new(0);
        e.record(&Outcome::error(
            0,
            Duration::from_millis(1),
            ErrorKind::Reset,
        ));
        t.add(e);
        let mut late = Second::new(7);
        late.record(&Outcome::error(
            0,
            Duration::from_millis(1),
            ErrorKind::Timeout,
        ));
        t.add(late);
        let v = t.finish(4);
        assert_eq!(v.len(), 4);
        assert_eq!(
            v.iter().map(Second::requests).collect::<Vec<_>>(),
            vec![1, 0, 2, 1]
        );
        assert_eq!(v[2].status_class[2], 2);
        assert_eq!(v[0].errors[ErrorKind::Reset.index()], 1);
    }
}
