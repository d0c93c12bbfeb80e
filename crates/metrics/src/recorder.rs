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
        }
    }

    pub fn record(&mut self, o: &Outcome) {
        self.total.record(o);
        if let Some(s) = self.by_name.get_mut(o.name as usize) {
            s.record(o);
        }
        let sec = o.at.as_secs();
        if sec > self.current.index {
            self.roll(sec);
        }
        // An outcome a little late for its second folds into the current one.
        self.current.record(o);
        if !self.by_name.is_empty() {
            self.current.by_name.record(o);
        }
    }

    /// Closes the current second if `now_sec` is past it.
    pub fn roll(&mut self, now_sec: u64) {
        if now_sec > self.current.index {
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
        self.ready.push(self.current);
        (self.total, self.by_name, self.ready)
    }

    pub fn total(&self) -> &Stats {
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
            + self.ready.iter().map(Second::held_bytes).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;
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
