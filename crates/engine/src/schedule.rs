//! When each arrival of the open model is intended to start: a pure function of its index, so it
//! is tested as a table with no clock (vegeta's `Pace`, wrk2's `start + n / rate`).

use crate::process::{Process, Work};
use crate::stages::Profile;
use std::sync::Arc;
use std::time::Duration;

/// A fixed-rate schedule of arrivals, numbered 0, 1, 2, … across all threads. Thread `k` of `T`
/// takes arrivals `k, k + T, k + 2T, …`, so the threads together keep one even rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pace: Pace,
    /// No arrival at or after this offset from the start.
    end: Option<Duration>,
    /// No arrival with this index or higher.
    limit: Option<u64>,
    /// A random process's arrivals (none: evenly spaced); not for explicit offsets.
    work: Option<Work>,
}

#[derive(Clone, Debug, PartialEq)]
enum Pace {
    Constant(f64),
    Staged(Profile),
    /// Given offsets, ascending (a web log replayed with its own timing); with a period, played
    /// again and again, each round that much later (`herd replay --loop`).
    Explicit(Arc<[Duration]>, Option<Duration>),
}

impl Schedule {
    /// `rate` arrivals per second; stop before `end` and/or after `limit` arrivals.
    pub fn new(rate: f64, end: Option<Duration>, limit: Option<u64>) -> Self {
        assert!(
            rate > 0.0 && rate.is_finite(),
            "a validated plan has a positive rate"
        );
        Schedule {
            pace: Pace::Constant(rate),
            end,
            limit,
            work: None,
        }
    }

    /// A rate that follows `profile` (stages ramping the rate); ends with the profile.
    pub fn staged(profile: Profile, limit: Option<u64>) -> Self {
        let end = Some(profile.total());
        Schedule {
            pace: Pace::Staged(profile),
            end,
            limit,
            work: None,
        }
    }

    /// Arrivals at the given offsets from the start (ascending), e.g. a log's requests with
    /// their recorded timing; stop before `end` and/or after `limit` arrivals.
    pub fn explicit(offsets: Arc<[Duration]>, end: Option<Duration>, limit: Option<u64>) -> Self {
        Self::repeating(offsets, None, end, limit)
    }

    /// [`Schedule::explicit`] played round after round, each `period` later than the last
    /// (with `None`, once).
    pub fn repeating(
        offsets: Arc<[Duration]>,
        period: Option<Duration>,
        end: Option<Duration>,
        limit: Option<u64>,
    ) -> Self {
        Schedule {
            pace: Pace::Explicit(offsets, period.filter(|p| !p.is_zero())),
            end,
            limit,
            work: None,
        }
    }

    /// The same rate with its arrivals spaced by `process`, drawn from `seed` (explicit offsets
    /// keep their own spacing).
    pub fn spaced(mut self, process: Process, seed: u64) -> Self {
        if !matches!(self.pace, Pace::Explicit(..)) {
            self.work = Work::new(process, seed);
        }
        self
    }

    /// The intended offset of arrival `index` from the start, or `None` when the schedule is over.
    pub fn at(&self, index: u64) -> Option<Duration> {
        if self.limit.is_some_and(|l| index >= l) {
            return None;
        }
        let offset = self.offset(index)?;
        if self.end.is_some_and(|e| offset >= e) {
            return None;
        }
        Some(offset)
    }

    /// Arrival `index`'s offset, end and limit aside.
    fn offset(&self, index: u64) -> Option<Duration> {
        Some(match (&self.pace, &self.work) {
            (Pace::Constant(rate), Some(w)) => Duration::from_secs_f64(w.at(index) / rate),
            (Pace::Staged(p), Some(w)) => p.time_at(w.at(index))?,
            (Pace::Constant(rate), None) => Duration::from_secs_f64(index as f64 / rate),
            (Pace::Staged(p), None) => p.arrival_at(index)?,
            (Pace::Explicit(o, None), _) => *o.get(usize::try_from(index).ok()?)?,
            (Pace::Explicit(o, Some(period)), _) => {
                let n = o.len() as u64;
                if n == 0 {
                    return None;
                }
                let round = u32::try_from(index / n).ok()?;
                o[(index % n) as usize].checked_add(period.checked_mul(round)?)?
            }
        })
    }

    /// How many arrivals of the whole schedule fall before `offset` (its end and limit
    /// included): what a thread far behind can skip in one step instead of one at a time.
    pub fn due_before(&self, offset: Duration) -> u64 {
        let t = self.end.map_or(offset, |e| offset.min(e));
        let n = self.count_before(t);
        let mut n = self.limit.map_or(n, |l| n.min(l));
        // The count is computed in floating point and `at` too, each rounding its own way: a
        // step or two settles the count on exactly the arrivals `at` gives before `t`, so no
        // arrival is ever counted that the schedule does not hold.
        while n > 0 && self.at(n - 1).is_none_or(|o| o >= t) {
            n -= 1;
        }
        while self.at(n).is_some_and(|o| o < t) {
            n += 1;
        }
        n
    }

    /// How many arrivals fall before `offset`: those the warm-up takes.
    pub fn count_before(&self, offset: Duration) -> u64 {
        if self.work.is_some() {
            return self.count_random_before(offset);
        }
        match &self.pace {
            Pace::Constant(rate) => (offset.as_secs_f64() * rate).ceil() as u64,
            Pace::Staged(p) => p.arrivals_before(offset),
            Pace::Explicit(o, None) => o.partition_point(|x| *x < offset) as u64,
            Pace::Explicit(o, Some(period)) => {
                let rounds = offset.as_nanos() / period.as_nanos();
                let rest = offset.saturating_sub(
                    period.saturating_mul(u32::try_from(rounds).unwrap_or(u32::MAX)),
                );
                let whole = (o.len() as u128).saturating_mul(rounds);
                u64::try_from(whole)
                    .unwrap_or(u64::MAX)
                    .saturating_add(o.partition_point(|x| *x < rest) as u64)
            }
        }
    }

    /// [`Schedule::count_before`] for a random process: from the count an even process would
    /// have, a walk of about its square root to the first arrival at or after `offset` (or the
    /// limit: past it nothing is asked).
    fn count_random_before(&self, offset: Duration) -> u64 {
        let limit = self.limit.unwrap_or(u64::MAX);
        let before = |n: u64| n < limit && self.offset(n).is_some_and(|o| o < offset);
        let even = match &self.pace {
            Pace::Constant(rate) => (offset.as_secs_f64() * rate).ceil() as u64,
            Pace::Staged(p) => p.arrivals_before(offset),
            Pace::Explicit(..) => unreachable!("explicit offsets have no process"),
        };
        let mut n = even.min(limit);
        while n > 0 && !before(n - 1) {
            n -= 1;
        }
        while before(n) {
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &Schedule) -> u64 {
        (0..).take_while(|i| s.at(*i).is_some()).count() as u64
    }

    #[test]
    fn rate_times_duration_arrivals_exactly() {
        let table = [
            (5000.0, 5.0, 25_000),
            (1000.0, 10.0, 10_000),
            (3.0, 5.0, 15),
            (0.5, 10.0, 5),
            (7.0, 0.5, 4),
        ];
        for (rate, secs, want) in table {
            let s = Schedule::new(rate, Some(Duration::from_secs_f64(secs)), None);
            assert_eq!(count(&s), want, "rate {rate} for {secs}s");
        }
    }

    #[test]
    fn arrivals_are_evenly_spaced() {
        let s = Schedule::new(4.0, None, None);
        let got: Vec<_> = (0..5).map(|i| s.at(i).unwrap().as_millis()).collect();
        assert_eq!(got, vec![0, 250, 500, 750, 1000]);
    }

    #[test]
    fn limit_and_end_both_stop() {
        let s = Schedule::new(100.0, Some(Duration::from_secs(10)), Some(42));
        assert_eq!(count(&s), 42);
        let s = Schedule::new(100.0, Some(Duration::from_secs(1)), Some(1_000));
        assert_eq!(count(&s), 100);
    }

    #[test]
    fn threads_interleave_into_one_even_rate() {
        // 3 threads taking every third index cover each index exactly once.
        let s = Schedule::new(1000.0, Some(Duration::from_secs(1)), None);
        let mut all: Vec<u64> = (0..3u64)
            .flat_map(|k| {
                (k..)
                    .step_by(3)
                    .take_while(|i| s.at(*i).is_some())
                    .collect::<Vec<_>>()
            })
            .collect();
        all.sort();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn staged_schedule_counts_warmup_by_the_integral() {
        use crate::stages::Stage;
        let p = Profile::new(&[Stage {
            duration: Duration::from_secs(10),
            target: 10.0,
        }]);
        let s = Schedule::staged(p, None);
        assert_eq!(count(&s), 50);
        // t^2/2 arrivals by t: 8 before 4 s (arrival 8 is exactly at 4 s)
        assert_eq!(s.count_before(Duration::from_secs(4)), 8);
    }

    #[test]
    fn due_before_counts_to_the_end_and_the_limit_even_at_absurd_rates() {
        // (a thousand arrivals share each nanosecond; those that round to the end are not in)
        let s = Schedule::new(1e12, Some(Duration::from_secs(1)), None);
        let all = s.due_before(Duration::MAX);
        assert!(
            (999_999_999_000..=1_000_000_000_000).contains(&all),
            "{all}"
        );
        let ms = s.due_before(Duration::from_millis(1));
        assert!((999_999_000..=1_000_000_000).contains(&ms), "{ms}");
        let s = Schedule::new(10.0, None, Some(7));
        assert_eq!(s.due_before(Duration::from_secs(100)), 7);
    }

    #[test]
    fn due_before_counts_only_arrivals_the_schedule_holds() {
        // 600/s for 1.6666666666 s: arrival 1000 falls at the end to within rounding; the
        // count must agree with `at` whatever the floating point says.
        let end = Duration::from_secs_f64(1.6666666666);
        let s = Schedule::new(600.0, Some(end), None);
        let held = (0..).take_while(|i| s.at(*i).is_some()).count() as u64;
        assert_eq!(s.due_before(Duration::MAX), held);
        assert_eq!(s.due_before(end + Duration::from_millis(5)), held);
    }

    #[test]
    fn a_repeating_schedule_plays_its_offsets_round_after_round() {
        let ms = Duration::from_millis;
        let s = Schedule::repeating(vec![ms(0), ms(3)].into(), Some(ms(10)), Some(ms(25)), None);
        let got: Vec<_> = (0..).map_while(|i| s.at(i)).collect();
        assert_eq!(got, vec![ms(0), ms(3), ms(10), ms(13), ms(20), ms(23)]);
        assert_eq!(s.count_before(ms(11)), 3);
        assert_eq!(s.due_before(Duration::MAX), 6);
    }

    #[test]
    fn explicit_offsets_are_the_schedule() {
        let ms = Duration::from_millis;
        let s = Schedule::explicit(
            vec![ms(0), ms(0), ms(5), ms(900)].into(),
            Some(ms(500)),
            None,
        );
        assert_eq!(count(&s), 3, "the end leaves the last one out");
        assert_eq!(s.at(2), Some(ms(5)));
        assert_eq!(s.count_before(ms(1)), 2);
        assert_eq!(s.due_before(Duration::MAX), 3);
    }

    #[test]
    fn a_random_process_keeps_the_rate_and_counts_like_at() {
        use crate::stages::Stage;
        for process in [Process::Poisson, Process::Uniform] {
            // 1000/s for 100 s: 100,000 expected, a Poisson standard deviation of 316.
            let s = Schedule::new(1000.0, Some(Duration::from_secs(100)), None).spaced(process, 1);
            let n = count(&s);
            assert!((98_700..=101_300).contains(&n), "{process:?}: {n}");
            assert_eq!(s.due_before(Duration::MAX), n);
            for t in [0, 1, 999, 50_000, 99_999] {
                let t = Duration::from_millis(t);
                let by_at = (0..)
                    .take_while(|i| s.at(*i).is_some_and(|o| o < t))
                    .count();
                assert_eq!(s.count_before(t), by_at as u64, "{process:?} before {t:?}");
            }
            // Stages ramp a random process as they ramp an even one: 0 -> 100/s over 100 s.
            let p = Profile::new(&[Stage {
                duration: Duration::from_secs(100),
                target: 100.0,
            }]);
            let s = Schedule::staged(p, None).spaced(process, 1);
            let n = count(&s);
            assert!((4_780..=5_220).contains(&n), "{process:?} staged: {n}");
            let early = s.count_before(Duration::from_secs(50));
            assert!(
                (1_150..=1_350).contains(&early),
                "a quarter by half-time: {early}"
            );
        }
    }

    #[test]
    fn a_limit_ends_a_random_schedule_without_an_end() {
        let s = Schedule::new(10.0, None, Some(7)).spaced(Process::Poisson, 1);
        assert_eq!(s.due_before(Duration::MAX), 7);
        assert_eq!(count(&s), 7);
    }

    #[test]
    fn warmup_takes_the_arrivals_before_it() {
        let s = Schedule::new(10.0, None, None);
        assert_eq!(s.count_before(Duration::from_secs(2)), 20);
        assert_eq!(s.count_before(Duration::ZERO), 0);
        assert_eq!(s.count_before(Duration::from_millis(150)), 2); // arrivals at 0 and 100 ms
    }
}
