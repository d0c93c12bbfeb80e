//! The open model: the arrivals this thread owns, handed to free users as they fall due, each
//! keeping its intended time. Arrivals that find no free user wait in a bounded queue; past the
//! bound, still waiting when the run ends, or left in the schedule when the run ended far behind
//! it, they count as dropped. However far behind the thread falls (a rate no machine can send),
//! what can only be dropped is counted in one step, never one arrival at a time, so the loop
//! stays responsive to Ctrl-C and its memory flat.

use crate::schedule::Schedule;
use crate::segment::Shard;
use herd_metrics::CompactHistogram;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The loop wakes for arrivals at most this often. Below 10,000 req/s every arrival leaves on
/// its own wake-up; above, they leave in batches at most this late, each keeping its intended
/// time. (Measured against nginx at 5,000 req/s, 100 us took the p50 latency from 150 us to
/// 116 us, the service time being 75 us, for a few per cent of a core.)
pub(crate) const MIN_WAKE: Duration = Duration::from_micros(100);
/// The dispatcher reaching the end of the run this late gives up handing out the rest of the
/// schedule and counts it as dropped; a little late it still hands arrivals out.
pub(crate) const BEHIND: Duration = Duration::from_millis(100);
/// Most arrivals handed out in one pass of the loop: the sockets, the deadlines and Ctrl-C are
/// looked at between passes however far behind the schedule is.
pub(crate) const PER_PASS: usize = 1024;

pub(crate) struct Dispatch {
    schedule: Schedule,
    start: Instant,
    /// This thread's next arrival: its index among the arrivals this shard plays (the whole
    /// schedule without a shard) and its intended instant (`None` once the schedule is over).
    index: u64,
    /// The shard whose arrivals these are: the `j`th of them is the schedule's `nth(j)`.
    shard: Option<Shard>,
    next: Option<Instant>,
    /// This thread takes every `step`th arrival.
    step: u64,
    /// Arrivals with a lower index fall in the warm-up: dropped, they are not counted.
    warm: u64,
    /// Most users (connections) this thread opens.
    pub cap: usize,
    /// Due arrivals waiting for a free user, oldest first: their index in the schedule and
    /// their intended instant.
    queue: VecDeque<(u64, Instant)>,
    bound: usize,
    /// Users with nothing to do (most recently freed last), their connections kept open.
    pub idle: VecDeque<usize>,
    /// Every user is made before any is reused, and the idle take arrivals oldest first
    /// ([`crate::Plan::in_turn`]).
    pub in_turn: bool,
    /// Arrivals that will never be sent and are counted so.
    pub dropped: u64,
    /// No arrival is taken any more; free users end.
    pub closed: bool,
    pub send_lag: CompactHistogram,
    last_wake: Instant,
}

/// What the dispatcher does with a due arrival.
pub(crate) enum Hand {
    /// Start this idle user on it.
    Idle(usize),
    /// Start a new user (connection) on it.
    New,
    /// It waits in the queue.
    Held,
    /// The queue is full and every user busy: it, and everything else due, was dropped.
    Dropped,
}

impl Dispatch {
    /// Thread `k` of `threads` taking its share of `schedule`, which starts at `start`; the
    /// warm-up lasts `warmup`.
    pub fn new(
        schedule: Schedule,
        start: Instant,
        warmup: Duration,
        k: usize,
        threads: usize,
        cap: u64,
    ) -> Self {
        let index = k as u64;
        let next = schedule.at(index).map(|o| start + o);
        let cap = cap.max(1) as usize;
        let warm = schedule.count_before(warmup);
        Dispatch {
            schedule,
            start,
            index,
            shard: None,
            next,
            step: threads as u64,
            warm,
            cap,
            queue: VecDeque::new(),
            // Past this, an arrival can only be dropped, so it is counted at once rather than
            // held in memory.
            bound: (cap * 64).max(10_000),
            idle: VecDeque::new(),
            in_turn: false,
            dropped: 0,
            closed: false,
            send_lag: CompactHistogram::dense(),
            last_wake: start,
        }
    }

    /// Plays only `shard`'s arrivals of the schedule (k6's striping: the shards' union is the
    /// whole schedule, each arrival at its own global instant).
    pub fn sharded(mut self, shard: Option<Shard>) -> Self {
        if let Some(s) = &shard {
            self.warm = s.stripe().scale(self.warm);
        }
        self.shard = shard;
        self.next = self.at(self.index);
        self
    }

    /// The index in the whole schedule of this shard's `j`th arrival.
    fn global(&self, j: u64) -> u64 {
        self.shard.as_ref().map_or(j, |s| s.stripe().nth(j))
    }

    /// When this shard's `j`th arrival is intended.
    fn at(&self, j: u64) -> Option<Instant> {
        self.schedule.at(self.global(j)).map(|o| self.start + o)
    }

    /// How many of this shard's arrivals are among the schedule's first `global`.
    fn local(&self, global: u64) -> u64 {
        self.shard
            .as_ref()
            .map_or(global, |s| s.stripe().scale(global))
    }

    /// The next arrival, its index in the whole schedule and its intended instant, if it is
    /// due at `now`; the run's `end` passed by `BEHIND` drops the rest of the schedule instead.
    pub fn due(&mut self, now: Instant, end: Option<Instant>) -> Option<(u64, Instant)> {
        if self.closed {
            return None;
        }
        let at = self.next.filter(|at| *at <= now)?;
        if end.is_some_and(|e| now >= e + BEHIND) {
            // So far behind that the run is over: the rest can only be dropped.
            self.skip(Duration::MAX);
            return None;
        }
        let global = self.global(self.index);
        self.index += self.step;
        self.next = self.at(self.index);
        Some((global, at))
    }

    /// Drops, in one step, every arrival of this thread intended before `offset` from the start
    /// that was not handed out yet, counting those after the warm-up.
    fn skip(&mut self, offset: Duration) {
        let due = self.local(self.schedule.due_before(offset));
        let owned = |from: u64| -> u64 {
            // indices in [from, due) that this thread owns (≡ index mod step, >= index)
            let from = from.max(self.index);
            let first = from + (self.step - (from - self.index) % self.step) % self.step;
            if due > first {
                (due - first).div_ceil(self.step)
            } else {
                0
            }
        };
        let skipped = owned(self.index);
        self.dropped += owned(self.warm);
        self.index += skipped * self.step;
        self.next = self.at(self.index);
    }

    /// Passes over, uncounted, every arrival intended before `offset` (a late start: they are
    /// the plan's missed arrivals, see `Plan::missed`).
    pub fn miss(&mut self, offset: Duration) {
        if offset.is_zero() {
            return;
        }
        let dropped = self.dropped;
        self.skip(offset);
        self.dropped = dropped;
    }

    /// Decides where the due arrival `at` goes, given how many users this thread has, at `now`.
    pub fn hand(&mut self, index: u64, at: Instant, users: usize, now: Instant) -> Hand {
        if self.in_turn && users < self.cap {
            Hand::New
        } else if let Some(i) = match self.in_turn {
            true => self.idle.pop_front(),
            false => self.idle.pop_back(),
        } {
            Hand::Idle(i)
        } else if users < self.cap {
            Hand::New
        } else if self.queue.len() < self.bound {
            self.queue.push_back((index, at));
            Hand::Held
        } else {
            // Full, and every user busy: this arrival and all others already due can only be
            // dropped. Counting them in one step is what keeps an impossible rate from
            // spinning here.
            // `due` already moved past the arrival in hand.
            let measured = self.index - self.step >= self.warm;
            self.dropped += u64::from(measured);
            self.skip(now.saturating_duration_since(self.start) + Duration::from_nanos(1));
            Hand::Dropped
        }
    }

    /// Due arrivals waiting for a free user.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The oldest arrival waiting for a free user.
    pub fn waiting(&mut self) -> Option<(u64, Instant)> {
        self.queue.pop_front()
    }

    /// Whether the queue should close at `now`: the schedule is over and, with a duration, the
    /// run's end has come (arrivals still waiting then are dropped), or, with only a request
    /// count, every arrival was taken.
    pub fn over(&self, now: Instant, end: Option<Instant>) -> bool {
        self.next.is_none()
            && match end {
                Some(e) => now >= e,
                None => self.queue.is_empty(),
            }
    }

    /// Closes the queue at `now`: arrivals still waiting, and those the schedule meant to start
    /// by `now` that were never handed out, are dropped; returns the users left idle, who end
    /// now. An interrupt (Ctrl-C, the dashboard's Stop) drops nothing: what it left unsent was
    /// cut short by the user, not refused by a saturated server, and is no more scheduled than
    /// the arrivals after it.
    pub fn close(
        &mut self,
        measure_start: Instant,
        now: Instant,
        interrupted: bool,
    ) -> VecDeque<usize> {
        self.closed = true;
        if interrupted {
            self.miss(now.saturating_duration_since(self.start) + Duration::from_nanos(1));
        } else {
            self.skip(now.saturating_duration_since(self.start) + Duration::from_nanos(1));
            self.dropped += self
                .queue
                .iter()
                .filter(|(_, at)| *at >= measure_start)
                .count() as u64;
        }
        self.queue.clear();
        std::mem::take(&mut self.idle)
    }

    /// When the loop must wake next for the schedule: the next arrival, no sooner than
    /// `MIN_WAKE` after the last wake-up, or the run's end once the schedule is over.
    pub fn wake(&self, end: Option<Instant>) -> Option<Instant> {
        if self.closed {
            return None;
        }
        match self.next {
            Some(next) => Some(next.max(self.last_wake + MIN_WAKE)),
            None => end,
        }
    }

    /// The loop woke for the schedule at `now`.
    pub fn woke(&mut self, now: Instant) {
        if self.next.is_some_and(|n| n <= now) {
            self.last_wake = now;
        }
    }

    /// How late arrival `at` was handed out at `now`, in microseconds.
    pub fn lag(now: Instant, at: Instant) -> u64 {
        now.saturating_duration_since(at).as_micros() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(rate: f64, secs: u64, cap: u64) -> (Dispatch, Instant) {
        let start = Instant::now();
        let s = Schedule::new(rate, Some(Duration::from_secs(secs)), None);
        (Dispatch::new(s, start, Duration::ZERO, 0, 1, cap), start)
    }

    #[test]
    fn hands_out_what_is_due_and_no_more() {
        let (mut d, start) = dispatch(10.0, 1, 4); // arrivals every 100 ms
        let now = start + Duration::from_millis(250);
        let got: Vec<_> = std::iter::from_fn(|| d.due(now, None).map(|(_, at)| at)).collect();
        assert_eq!(
            got,
            [0, 100, 200].map(|ms| start + Duration::from_millis(ms))
        );
    }

    #[test]
    fn in_turn_every_user_is_made_first_then_the_longest_idle_goes() {
        let (mut d, start) = dispatch(1000.0, 1, 3);
        d.in_turn = true;
        // Two users exist and one is idle: a third is made all the same (a socket each).
        d.idle.push_back(0);
        assert!(matches!(d.hand(0, start, 2, start), Hand::New));
        // Then the idle ones in the order they were freed: each socket on its share.
        d.idle.push_back(2);
        d.idle.push_back(1);
        let order: Vec<_> = (0..3)
            .map(|i| match d.hand(i, start, 3, start) {
                Hand::Idle(u) => u,
                _ => usize::MAX,
            })
            .collect();
        assert_eq!(order, [0, 2, 1]);
        assert!(matches!(d.hand(3, start, 3, start), Hand::Held));
    }

    #[test]
    fn free_users_first_then_new_ones_then_the_queue() {
        let (mut d, start) = dispatch(1000.0, 1, 2);
        d.idle.push_back(7);
        assert!(matches!(d.hand(0, start, 1, start), Hand::Idle(7)));
        assert!(matches!(d.hand(0, start, 1, start), Hand::New));
        assert!(matches!(d.hand(0, start, 2, start), Hand::Held));
        assert_eq!(d.waiting(), Some((0, start)));
        assert_eq!(d.waiting(), None);
    }

    #[test]
    fn what_still_waits_at_the_end_is_dropped_and_counted() {
        let start = Instant::now();
        let s = Schedule::new(1000.0, Some(Duration::from_secs(1)), None);
        let mut d = Dispatch::new(s, start, Duration::from_millis(5), 0, 1, 1);
        let warm = start + Duration::from_millis(5);
        d.hand(0, start, 1, start); // a warm-up arrival: not counted when dropped
        d.hand(0, warm, 1, warm);
        d.hand(0, warm, 1, warm);
        d.idle.push_back(3);
        // closed at the start: nothing of the schedule was due yet but what was queued
        assert_eq!(d.close(warm, start, false), [3]);
        assert_eq!(d.dropped, 2);
        assert!(d.waiting().is_none() && d.due(warm, None).is_none());
    }

    #[test]
    fn far_behind_the_end_the_rest_of_the_schedule_is_dropped_in_one_step() {
        let (mut d, start) = dispatch(100.0, 1, 1);
        let end = start + Duration::from_secs(1);
        assert!(d.due(end + BEHIND, Some(end)).is_none());
        assert_eq!(d.dropped, 100);
        assert!(d.over(end + BEHIND, Some(end)));
        // An absurd rate: a trillion arrivals counted without a trillion steps.
        let (mut d, start) = dispatch(1e12, 1, 1);
        let end = start + Duration::from_secs(1);
        assert!(d.due(end + BEHIND, Some(end)).is_none());
        let held =
            Schedule::new(1e12, Some(Duration::from_secs(1)), None).due_before(Duration::MAX);
        assert_eq!(d.dropped, held);
    }

    #[test]
    fn a_full_queue_drops_everything_due_at_once() {
        let (mut d, start) = dispatch(1e9, 1, 1);
        d.bound = 2;
        let now = start + Duration::from_millis(1); // a million arrivals due
        let mut handed = 0;
        while let Some((g, at)) = d.due(now, None) {
            handed += 1;
            if let Hand::Dropped = d.hand(g, at, 1, now) {
                break;
            }
        }
        assert_eq!(handed, 3, "two held, the third found the queue full");
        // Everything due by `now` is gone: the held two wait, the rest are counted.
        assert!(
            (1_000_000..=1_000_001).contains(&(d.dropped + 2)),
            "{}",
            d.dropped
        );
        assert!(d.due(now, None).is_none());
    }

    #[test]
    fn over_when_the_schedule_ends_and_then_the_run() {
        let (mut d, start) = dispatch(10.0, 1, 1);
        let end = start + Duration::from_secs(1);
        while d.due(end, None).is_some() {}
        assert!(!d.over(end - Duration::from_millis(1), Some(end)));
        assert!(d.over(end, Some(end)));
        // With only a request count, the queue must empty first.
        d.hand(0, start, 1, start);
        assert!(!d.over(end, None));
        d.waiting();
        assert!(d.over(end, None));
    }

    #[test]
    fn threads_share_the_schedule() {
        let start = Instant::now();
        let s = Schedule::new(10.0, Some(Duration::from_secs(1)), None);
        let mut a = Dispatch::new(s.clone(), start, Duration::ZERO, 0, 2, 1);
        let mut b = Dispatch::new(s, start, Duration::ZERO, 1, 2, 1);
        let end = start + Duration::from_secs(1);
        let n = |d: &mut Dispatch| std::iter::from_fn(|| d.due(end, None)).count();
        assert_eq!((n(&mut a), n(&mut b)), (5, 5));
    }

    #[test]
    fn shards_play_disjoint_arrivals_that_make_up_the_schedule() {
        let start = Instant::now();
        let s = Schedule::new(1000.0, Some(Duration::from_secs(1)), None);
        let end = start + Duration::from_secs(1);
        let mut all = Vec::new();
        for i in 0..3 {
            for k in 0..2 {
                let shard = Shard::new(i, 3).unwrap();
                let mut d =
                    Dispatch::new(s.clone(), start, Duration::ZERO, k, 2, 1).sharded(Some(shard));
                all.extend(std::iter::from_fn(|| d.due(end, None).map(|(_, at)| at)));
            }
        }
        all.sort();
        let whole: Vec<_> = (0..1000).map(|i| start + s.at(i).unwrap()).collect();
        assert_eq!(all, whole, "every arrival once, at its own instant");
        // Dropped in one step, a shard counts only its own.
        let mut d = Dispatch::new(s, start, Duration::ZERO, 0, 1, 1)
            .sharded(Some(Shard::new(1, 3).unwrap()));
        d.skip(Duration::MAX);
        assert_eq!(d.dropped, 333);
    }

    #[test]
    fn a_poisson_schedules_shards_play_its_arrivals_at_their_own_instants() {
        use crate::process::Process;
        let start = Instant::now();
        let s =
            Schedule::new(1000.0, Some(Duration::from_secs(2)), None).spaced(Process::Poisson, 3);
        let end = start + Duration::from_secs(2);
        let mut all = Vec::new();
        for i in 0..3 {
            for k in 0..2 {
                let shard = Shard::new(i, 3).unwrap();
                let mut d =
                    Dispatch::new(s.clone(), start, Duration::ZERO, k, 2, 1).sharded(Some(shard));
                all.extend(std::iter::from_fn(|| d.due(end, None)));
            }
        }
        all.sort();
        let whole: Vec<_> = (0..)
            .map_while(|i| s.at(i).map(|o| (i, start + o)))
            .collect();
        assert_eq!(all, whole, "every arrival once, at its own instant");
        // Dropped in one step, the shards' counts add up to the whole.
        let dropped: u64 = (0..3)
            .map(|i| {
                let mut d = Dispatch::new(s.clone(), start, Duration::ZERO, 0, 1, 1)
                    .sharded(Some(Shard::new(i, 3).unwrap()));
                d.skip(Duration::MAX);
                d.dropped
            })
            .sum();
        assert_eq!(dropped, whole.len() as u64);
    }

    #[test]
    fn skipping_counts_only_this_threads_arrivals() {
        let start = Instant::now();
        let s = Schedule::new(1000.0, Some(Duration::from_secs(1)), None);
        let mut d = Dispatch::new(s, start, Duration::ZERO, 1, 3, 1);
        d.skip(Duration::MAX);
        // indices 1, 4, ..., 997 of 0..1000
        assert_eq!(d.dropped, 333);
    }
}
