use crate::alike::Alike;
use crate::{Outcome, Second, Stats};

/// One worker's measurements: totals, per request name, and the second in progress.
///
/// Finished seconds queue up in `ready` until the worker hands them to the collector; a worker
/// calls [`Recorder::roll`] on its own ticks so a second closes even when nothing completes in it
/// (a stalled server must show as a quiet second, not vanish).
#[derive(Debug)]
pub struct Recorder {
    total: Stats,
    by_name: Vec<Stats>,
    current: Second,
    ready: Vec<Second>,
    /// Values of usual responses recorded once for several histograms, added into `total`
    /// and `current` before they are read (`alike.rs`).
    alike: Alike,
}

impl Recorder {
    /// A recorder for `names` request names (1 for a plain run: then only totals are kept).
    pub fn new(names: usize) -> Self {
        let by_name = if names > 1 {
            (0..names).map(|_| Stats::default()).collect()
        } else {
            Vec::new()
        };
        Recorder {
            // Recorded on every request: dense, no search on the hot path.
            total: Stats::dense(),
            by_name,
            current: Second::new(0),
            ready: Vec::new(),
            alike: Alike::new(),
        }
    }

    pub fn record(&mut self, o: &Outcome) {
        if let Some(s) = self.by_name.get_mut(o.name as usize) {
            s.record(o);
        }
        let sec = o.at.as_secs();
        if sec > self.current.index {
            self.roll(sec);
        }
        // An outcome a little late for its second folds into the current one.
        if !self.alike.record(o, &mut self.total, &mut self.current) {
            self.total.record(o);
            self.current.record(o);
        }
        if !self.by_name.is_empty() {
            self.current.by_name.record(o);
        }
    }

    /// Records what a WebSocket's connection told at `at` (since the measurement started),
    /// apart from its messages.
    pub fn record_socket(&mut self, at: std::time::Duration, e: crate::SocketEvent) {
        let sec = at.as_secs();
        if sec > self.current.index {
            self.roll(sec);
        }
        self.total.ws.get_or_insert_default().record(e);
        self.current.ws.get_or_insert_default().record(e);
    }

    /// Sets the send backlog of second `sec` to `b`: the last one set in a second is the one it
    /// closed with. A second closed and not yet taken still takes it; one handed over does not.
    pub fn record_backlog(&mut self, sec: u64, b: crate::Backlog) {
        if sec > self.current.index {
            self.roll(sec);
        }
        // The run's sockets exist from here on, though none pinged: its backlog is a figure.
        self.total.ws.get_or_insert_default();
        let second = match sec == self.current.index {
            true => Some(&mut self.current),
            false => self.ready.iter_mut().rev().find(|s| s.index == sec),
        };
        if let Some(s) = second {
            s.ws.get_or_insert_default().backlog = Some(b);
        }
    }

    /// Closes the current second if `now_sec` is past it.
    pub fn roll(&mut self, now_sec: u64) {
        if now_sec > self.current.index {
            self.alike.settle_second(&mut self.current);
            let done = std::mem::replace(&mut self.current, Second::new(now_sec));
            self.ready.push(done);
        }
    }

    /// Finished seconds since the last call.
    pub fn take_ready(&mut self) -> Vec<Second> {
        std::mem::take(&mut self.ready)
    }

    /// Ends recording: totals, per-name stats, and every second not yet taken.
    pub fn finish(mut self) -> (Stats, Vec<Stats>, Vec<Second>) {
        self.alike.settle(&mut self.total);
        self.alike.settle_second(&mut self.current);
        self.ready.push(self.current);
        (self.total, self.by_name, self.ready)
    }

    /// The totals so far.
    pub fn total(&mut self) -> &Stats {
        self.alike.settle(&mut self.total);
        &self.total
    }

    /// Bytes this recorder holds: what a worker thread pays for its measurements. It grows with
    /// what was recorded, not with the number of request names.
    pub fn held_bytes(&self) -> usize {
        let stats = std::mem::size_of::<Stats>();
        std::mem::size_of::<Self>()
            + self.total.heap_bytes()
            + stats * self.by_name.capacity()
            + self.by_name.iter().map(Stats::heap_bytes).sum::<usize>()
            + self.current.held_bytes()
            + self.alike.heap_bytes()
            + self.ready.iter().map(Second::held_bytes).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CompactHistogram, Verdict};
    use std::time::Duration;

    #[test]
    fn seconds_close_on_later_outcomes_and_on_ticks() {
        let mut r = Recorder::new(1);
        let mut o = Outcome::completed(
            0,
            Duration::from_millis(1),
            Duration::ZERO,
            200,
            Verdict::Ok,
        );
        o.at = Duration::from_millis(300);
        r.record(&o);
        o.at = Duration::from_millis(1_200);
        r.record(&o);
        assert_eq!(
            r.take_ready()
                .iter()
                .map(|s| (s.index, s.requests()))
                .collect::<Vec<_>>(),
            vec![(0, 1)]
        );
        r.roll(3);
        let (total, by_name, rest) = r.finish();
        assert_eq!(total.completed, 2);
        assert!(by_name.is_empty());
        assert_eq!(
            rest.iter()
                .map(|s| (s.index, s.requests()))
                .collect::<Vec<_>>(),
            vec![(1, 1), (3, 0)]
        );
    }

    #[test]
    fn recorder_memory_follows_records_not_request_names() {
        let names = 20_000;
        let r = Recorder::new(names);
        // Nothing recorded: a few hundred bytes per name (counters, no histogram, no table).
        let empty = r.held_bytes();
        assert!(empty <= names * 600, "{empty} bytes for {names} idle names");
        let mut r = r;
        for name in 0..names as u32 {
            let mut o = Outcome::completed(
                name,
                Duration::from_micros(800 + u64::from(name)),
                Duration::from_micros(700),
                200,
                Verdict::Ok,
            );
            o.at = Duration::from_millis(500);
            r.record(&o);
        }
        // One response each: two one-bucket histograms and one status per name, plus the
        // totals (one dense histogram at most).
        let one = r.held_bytes() - empty;
        assert!(
            one <= names * 64 + 400_000,
            "{one} more bytes for one response per name"
        );
        let (total, by_name, _) = r.finish();
        assert_eq!(total.completed, names as u64);
        assert_eq!(by_name[19_999].latency.len(), 1);
    }

    #[test]
    fn usual_responses_recorded_once_leave_every_histogram_as_recording_each_value_does() {
        // The reference records every outcome into each histogram on its own.
        let mut r = Recorder::new(1);
        let mut total = Stats::dense();
        let mut seconds: Vec<Second> = (0..3).map(Second::new).collect();
        let us = Duration::from_micros;
        for i in 0..4_000u64 {
            let service = us(90 + i % 977 * 13);
            let latency = if i % 3 == 0 {
                service + us(i % 50)
            } else {
                service
            };
            let mut o = Outcome::completed(0, latency, service, 200, Verdict::Ok);
            if i % 17 == 0 {
                o = Outcome::error(0, latency, crate::ErrorKind::Reset);
            }
            o.at = Duration::from_millis(i * 3 / 4);
            if o.result.is_ok() {
                o.phases.waiting = Some(service);
                o.phases.receiving = Some(Duration::ZERO);
            }
            if i % 7 == 0 {
                o.phases.waiting = Some(service / 2);
                o.phases.receiving = Some(service - service / 2);
            }
            if i % 11 == 0 {
                o.phases.blocked = Some(latency - service);
            }
            if i % 101 == 0 {
                o.connect = Some(us(40));
                o.phases.tls = Some(us(25));
            }
            r.record(&o);
            total.record(&o);
            seconds[o.at.as_secs() as usize].record(&o);
        }
        let mid = r.total().clone();
        assert_eq!(mid.latency.to_histogram(), total.latency.to_histogram());
        let (t, _, got) = r.finish();
        let h = |c: &CompactHistogram| c.to_histogram();
        for (a, b) in [
            (&t.latency, &total.latency),
            (&t.service, &total.service),
            (&t.waiting, &total.waiting),
            (&t.receiving, &total.receiving),
            (&t.blocked, &total.blocked),
            (&t.tls, &total.tls),
            (&t.connect, &total.connect),
            (&t.time_to_error, &total.time_to_error),
        ] {
            assert_eq!(h(a), h(b));
            assert_eq!((a.min(), a.max(), a.len()), (b.min(), b.max(), b.len()));
        }
        assert_eq!(
            (t.sent, t.completed, t.ok, t.errors.total(), t.bytes_sent),
            (
                total.sent,
                total.completed,
                total.ok,
                total.errors.total(),
                total.bytes_sent
            )
        );
        assert_eq!(got.len(), seconds.len());
        for (a, b) in got.iter().zip(&seconds) {
            assert_eq!(a.latency.histogram(), b.latency.histogram());
            assert_eq!(a.service.histogram(), b.service.histogram());
            assert_eq!(
                (a.ok, a.errors, a.status_class),
                (b.ok, b.errors, b.status_class)
            );
        }
    }

    #[test]
    fn per_name_stats_only_when_names_exist() {
        let mut r = Recorder::new(2);
        r.record(&Outcome::completed(
            1,
            Duration::from_millis(1),
            Duration::ZERO,
            200,
            Verdict::Ok,
        ));
        let (total, by_name, _) = r.finish();
        assert_eq!(total.completed, 1);
        assert_eq!((by_name[0].completed, by_name[1].completed), (0, 1));
    }
}
