//! Requests over time in constant memory: seconds are counted in a short ring (a log is only
//! roughly in time order: nginx writes a line when the response ends) and folded into a
//! histogram of per-second rates as they leave it; minutes and hours of day are kept whole.
//! Lines later than the ring (two servers' logs in one file) are counted in their own seconds
//! aside, up to the series' length, and placed at the end: they are never silently left out.

use crate::time::Timestamp;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, VecDeque};

/// Seconds a line may be late and still count in its own second.
const WINDOW: i64 = 120;
/// The per-second series is kept for charts and `--against` up to this length (2 days).
const SERIES_MAX: usize = 172_800;

pub struct Rate {
    ring: VecDeque<u64>,
    base: i64,
    started: bool,
    hist: Histogram<u64>,
    pub peak_second: (i64, u64),
    pub seconds: Vec<u64>,
    pub first_second: i64,
    pub series_cut: bool,
    pub minutes: BTreeMap<i64, u64>,
    pub hours: [u64; 24],
    /// Lines out of time order by more than the ring that could not be placed (the series was
    /// cut, or too many distinct late seconds): left out of the per-second rate.
    pub late: u64,
    /// Lines out of time order by more than the ring, placed in their own seconds at the end.
    pub reordered: u64,
    late_seconds: BTreeMap<i64, u64>,
    minute: (i64, u64),
    pub first: Option<Timestamp>,
    pub last: Option<Timestamp>,
}

impl Default for Rate {
    fn default() -> Self {
        Rate {
            ring: VecDeque::new(),
            base: 0,
            started: false,
            hist: Histogram::new(3).expect("3 significant figures is valid"),
            peak_second: (0, 0),
            seconds: Vec::new(),
            first_second: 0,
            series_cut: false,
            minutes: BTreeMap::new(),
            hours: [0; 24],
            late: 0,
            reordered: 0,
            late_seconds: BTreeMap::new(),
            minute: (i64::MIN, 0),
            first: None,
            last: None,
        }
    }
}

impl Rate {
    pub fn add(&mut self, t: Timestamp) {
        let sec = t.secs();
        if !self.started {
            self.started = true;
            self.base = sec;
            self.first_second = sec;
        }
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
        // lines come mostly in order: count the current minute aside, not in the map
        let minute = sec.div_euclid(60);
        if minute != self.minute.0 {
            if self.minute.1 > 0 {
                *self.minutes.entry(self.minute.0).or_default() += self.minute.1;
            }
            self.minute = (minute, 0);
        }
        self.minute.1 += 1;
        self.hours[usize::from(t.local_hour())] += 1;
        if sec < self.base {
            if self.late_seconds.len() < SERIES_MAX || self.late_seconds.contains_key(&sec) {
                *self.late_seconds.entry(sec).or_default() += 1;
            } else {
                self.late += 1;
            }
            return;
        }
        let jump_to = sec - WINDOW + 1;
        while self.base < jump_to && !self.ring.is_empty() {
            self.close_oldest();
        }
        if self.base < jump_to {
            // Quiet seconds, counted in bulk: one line dated years later (a log merged from
            // two machines, a clock reset) must not cost a loop turn per second between.
            let gap = (jump_to - self.base) as u64;
            let _ = self.hist.record_n(0, gap);
            let room = (SERIES_MAX - self.seconds.len()) as u64;
            self.seconds
                .extend(std::iter::repeat_n(0, gap.min(room) as usize));
            self.series_cut |= gap > room;
            self.base = jump_to;
        }
        let i = (sec - self.base) as usize;
        while self.ring.len() <= i {
            self.ring.push_back(0);
        }
        self.ring[i] += 1;
    }

    fn close_oldest(&mut self) {
        let n = self.ring.pop_front().unwrap_or(0);
        let _ = self.hist.record(n);
        if n > self.peak_second.1 {
            self.peak_second = (self.base, n);
        }
        if self.seconds.len() < SERIES_MAX {
            self.seconds.push(n);
        } else {
            self.series_cut = true;
        }
        self.base += 1;
    }

    /// Closes the seconds still in the ring; call once at the end.
    pub fn finish(&mut self) {
        if self.minute.1 > 0 {
            *self.minutes.entry(self.minute.0).or_default() += self.minute.1;
            self.minute.1 = 0;
        }
        while !self.ring.is_empty() {
            self.close_oldest();
        }
        self.place_late();
    }

    /// Adds the late lines to their seconds and reads the rates again from the whole series;
    /// when the series was cut or would grow past its length, they are counted as left out.
    fn place_late(&mut self) {
        let late = std::mem::take(&mut self.late_seconds);
        let Some(&earliest) = late.keys().next() else {
            return;
        };
        let n: u64 = late.values().sum();
        let first = self.first_second.min(earliest);
        let len = (self.base - first) as usize;
        if self.series_cut || len > SERIES_MAX {
            self.late += n;
            return;
        }
        let mut seconds = vec![0; len];
        let shift = (self.first_second - first) as usize;
        seconds[shift..shift + self.seconds.len()].copy_from_slice(&self.seconds);
        for (sec, c) in late {
            seconds[(sec - first) as usize] += c;
        }
        self.hist.reset();
        self.peak_second = (first, 0);
        for (i, &c) in seconds.iter().enumerate() {
            let _ = self.hist.record(c);
            if c > self.peak_second.1 {
                self.peak_second = (first + i as i64, c);
            }
        }
        self.seconds = seconds;
        self.first_second = first;
        self.reordered += n;
    }

    /// Requests per second at quantile `q` of all seconds of the span.
    pub fn second_quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    pub fn mean_rps(&self) -> f64 {
        self.hist.mean()
    }

    /// The busiest minute: (minute start in seconds, requests).
    pub fn peak_minute(&self) -> (i64, u64) {
        self.minutes
            .iter()
            .max_by_key(|(m, n)| (**n, -**m))
            .map_or((0, 0), |(m, n)| (m * 60, *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_lines_count_in_their_second_and_quiet_seconds_are_zeros() {
        let mut r = Rate::default();
        for s in [100, 100, 102, 101, 100, 105] {
            r.add(Timestamp::from_secs(s));
        }
        r.finish();
        assert_eq!(r.seconds, vec![3, 1, 1, 0, 0, 1]);
        assert_eq!(r.peak_second, (100, 3));
        assert_eq!(r.second_quantile(1.0), 3);
        assert_eq!(r.peak_minute(), (60, 6));
    }

    /// Found by fuzzing: a line 26 years after the first took a loop turn per second between.
    #[test]
    fn a_line_years_later_costs_no_time_and_its_quiet_seconds_count() {
        let mut r = Rate::default();
        let years = 26 * 365 * 86_400;
        for s in [100, 100, 101, 100 + years] {
            r.add(Timestamp::from_secs(s));
        }
        r.finish();
        assert_eq!(r.seconds.len(), SERIES_MAX);
        assert!(r.series_cut);
        assert_eq!(
            r.hist.len(),
            years as u64 + 1,
            "every second of the span is a sample"
        );
        assert_eq!(r.peak_second, (100, 2));
        assert_eq!(r.second_quantile(1.0), 2);
    }

    #[test]
    fn two_servers_logs_in_one_file_keep_the_rate_of_both() {
        // Server A's hour at 10 req/s, then server B's same hour at 10 req/s: 20 req/s. The
        // second log's lines are an hour "late"; they were left out and the mean halved.
        let mut r = Rate::default();
        for _server in 0..2 {
            for s in 0..3_600 {
                for _ in 0..10 {
                    r.add(Timestamp::from_secs(36_000 + s));
                }
            }
        }
        r.finish();
        assert_eq!(r.late, 0);
        assert_eq!(r.reordered, 36_000 - 10 * super::WINDOW as u64);
        assert_eq!(r.seconds.len(), 3_600);
        assert!(r.seconds.iter().all(|&n| n == 20));
        assert_eq!(r.mean_rps(), 20.0);
        assert_eq!(r.peak_second.1, 20);
    }
}
