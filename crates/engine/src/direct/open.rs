//! The open model on the direct worker: the arrivals this thread owns, handed to free users as
//! they fall due, each keeping its intended time. The same rules as the async worker's
//! dispatcher: arrivals that find no free user wait in a bounded queue (past the bound, or still
//! waiting when the run ends, they count as dropped), and one that finds the run over by
//! `BEHIND` drops the rest of the schedule. It waits for the next arrival on a timerfd, as the
//! async worker does, but wakes more often.

use crate::precise::Alarm;
use crate::schedule::Schedule;
use crate::worker::BEHIND;
use hdrhistogram::Histogram;
use herd_metrics::new_histogram;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The alarm wakes the loop at most this often. Below 10,000 req/s every arrival leaves on its
/// own wake-up; above, they leave in batches at most this late, each keeping its intended time.
/// (The async worker's wake-ups cost more, and it batches by 250 us; measured against nginx at
/// 5,000 req/s, 100 us here took the p50 latency from 150 us to 116 us, the service time being
/// 75 us, for a few per cent of a core.)
const MIN_WAKE: Duration = Duration::from_micros(100);

pub(super) struct Dispatch {
    schedule: Schedule,
    start: Instant,
    /// This thread's next arrival: its index in the schedule and its intended instant
    /// (`None` once the schedule is over).
    index: u64,
    next: Option<Instant>,
    /// This thread takes every `step`th arrival.
    step: u64,
    /// Most users (connections) this thread opens.
    cap: usize,
    /// Due arrivals waiting for a free user, oldest first.
    queue: VecDeque<Instant>,
    bound: usize,
    /// Users with nothing to do (most recently freed last), their connections kept open.
    pub idle: Vec<usize>,
    /// Arrivals that will never be sent and are counted so: past the queue's bound, left in
    /// the queue at the end, or left in the schedule when the run ended far behind it.
    pub dropped: u64,
    /// No arrival is taken any more; free users end.
    pub closed: bool,
    pub send_lag: Histogram<u64>,
    /// The precise wake-up for the next arrival (None: the poll's millisecond timeout).
    pub alarm: Option<Alarm>,
    armed: Option<Instant>,
    last_wake: Instant,
}

/// What the dispatcher does with a due arrival.
pub(super) enum Hand {
    /// Start this idle user on it.
    Idle(usize),
    /// Start a new user (connection) on it.
    New,
    /// It waits in the queue, or was dropped.
    Held,
}

impl Dispatch {
    /// Thread `k` of `threads` taking its share of `schedule`, which starts at `start`.
    pub fn new(schedule: Schedule, start: Instant, k: usize, threads: usize, cap: u64) -> Self {
        let index = k as u64;
        let next = schedule.at(index).map(|o| start + o);
        let cap = cap.max(1) as usize;
        Dispatch {
            schedule,
            start,
            index,
            next,
            step: threads as u64,
            cap,
            queue: VecDeque::new(),
            // As the async worker: past this, an arrival can only be dropped, so it is counted
            // at once rather than held in memory.
            bound: (cap * 64).max(10_000),
            idle: Vec::new(),
            dropped: 0,
            closed: false,
            send_lag: new_histogram(),
            alarm: Alarm::new(),
            armed: None,
            last_wake: start,
        }
    }

    /// The next arrival if it is due at `now`; the run's `end` passed by `BEHIND` drops the rest
    /// of the schedule instead.
    pub fn due(
        &mut self,
        now: Instant,
        end: Option<Instant>,
        measure_start: Instant,
    ) -> Option<Instant> {
        if self.closed {
            return None;
        }
        let at = self.next.filter(|at| *at <= now)?;
        if end.is_some_and(|e| now >= e + BEHIND) {
            // So far behind that the run is over: the rest can only be dropped.
            while let Some(at) = self.next {
                self.dropped += u64::from(at >= measure_start);
                self.advance();
            }
            return None;
        }
        self.advance();
        Some(at)
    }

    fn advance(&mut self) {
        self.index += self.step;
        self.next = self.schedule.at(self.index).map(|o| self.start + o);
    }

    /// Decides where the due arrival `at` goes, given how many users this thread has.
    pub fn hand(&mut self, at: Instant, users: usize, measure_start: Instant) -> Hand {
        if let Some(i) = self.idle.pop() {
            Hand::Idle(i)
        } else if users < self.cap {
            Hand::New
        } else {
            if self.queue.len() < self.bound {
                self.queue.push_back(at);
            } else if at >= measure_start {
                self.dropped += 1;
            }
            Hand::Held
        }
    }

    /// The oldest arrival waiting for a free user.
    pub fn waiting(&mut self) -> Option<Instant> {
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

    /// Closes the queue: arrivals still waiting are dropped; returns the users left idle, who
    /// end now.
    pub fn close(&mut self, measure_start: Instant) -> Vec<usize> {
        self.closed = true;
        self.dropped += self.queue.iter().filter(|at| **at >= measure_start).count() as u64;
        self.queue.clear();
        std::mem::take(&mut self.idle)
    }

    /// When the loop must wake next for the schedule, at `now`: the next arrival (no sooner
    /// than `MIN_WAKE` after the last wake-up), or the run's end once the schedule is over.
    /// With a timerfd it is armed here and `None` returned: its expiry wakes the poll.
    pub fn wake(&mut self, now: Instant, end: Option<Instant>) -> Option<Instant> {
        if self.closed {
            return None;
        }
        let Some(next) = self.next else {
            return end;
        };
        let at = next.max(self.last_wake + MIN_WAKE);
        let Some(alarm) = &self.alarm else {
            return Some(at);
        };
        if at <= now {
            return Some(at);
        }
        // An alarm set for sooner wakes the loop early, and it is set again then.
        if self.armed.is_none_or(|a| a > at) {
            if !alarm.set(at - now) {
                return Some(at);
            }
            self.armed = Some(at);
        }
        None
    }

    /// The alarm went off at `now`.
    pub fn woke(&mut self, now: Instant) {
        if let Some(alarm) = &self.alarm {
            alarm.take();
        }
        self.armed = None;
        self.last_wake = now;
    }

    /// How late arrival `at` was handed out at `now`.
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
        (Dispatch::new(s, start, 0, 1, cap), start)
    }

    #[test]
    fn hands_out_what_is_due_and_no_more() {
        let (mut d, start) = dispatch(10.0, 1, 4); // arrivals every 100 ms
        let now = start + Duration::from_millis(250);
        let got: Vec<_> = std::iter::from_fn(|| d.due(now, None, start)).collect();
        assert_eq!(
            got,
            [0, 100, 200].map(|ms| start + Duration::from_millis(ms))
        );
    }

    #[test]
    fn free_users_first_then_new_ones_then_the_queue() {
        let (mut d, start) = dispatch(1000.0, 1, 2);
        d.idle.push(7);
        assert!(matches!(d.hand(start, 1, start), Hand::Idle(7)));
        assert!(matches!(d.hand(start, 1, start), Hand::New));
        assert!(matches!(d.hand(start, 2, start), Hand::Held));
        assert_eq!(d.waiting(), Some(start));
        assert_eq!(d.waiting(), None);
    }

    #[test]
    fn what_still_waits_at_the_end_is_dropped_and_counted() {
        let (mut d, start) = dispatch(1000.0, 1, 1);
        let warm = start + Duration::from_millis(5);
        d.hand(start, 1, warm); // a warm-up arrival: not counted when dropped
        d.hand(warm, 1, warm);
        d.hand(warm, 1, warm);
        d.idle.push(3);
        assert_eq!(d.close(warm), vec![3]);
        assert_eq!(d.dropped, 2);
        assert!(d.waiting().is_none() && d.due(warm, None, warm).is_none());
    }

    #[test]
    fn far_behind_the_end_the_rest_of_the_schedule_is_dropped() {
        let (mut d, start) = dispatch(100.0, 1, 1);
        let end = start + Duration::from_secs(1);
        assert!(d.due(end + BEHIND, Some(end), start).is_none());
        assert_eq!(d.dropped, 100);
        assert!(d.over(end + BEHIND, Some(end)));
    }

    #[test]
    fn over_when_the_schedule_ends_and_then_the_run() {
        let (mut d, start) = dispatch(10.0, 1, 1);
        let end = start + Duration::from_secs(1);
        while d.due(end, None, start).is_some() {}
        assert!(!d.over(end - Duration::from_millis(1), Some(end)));
        assert!(d.over(end, Some(end)));
        // With only a request count, the queue must empty first.
        d.hand(start, 1, start);
        assert!(!d.over(end, None));
        d.waiting();
        assert!(d.over(end, None));
    }

    #[test]
    fn threads_share_the_schedule() {
        let start = Instant::now();
        let s = Schedule::new(10.0, Some(Duration::from_secs(1)), None);
        let mut a = Dispatch::new(s.clone(), start, 0, 2, 1);
        let mut b = Dispatch::new(s, start, 1, 2, 1);
        let end = start + Duration::from_secs(1);
        let n = |d: &mut Dispatch| std::iter::from_fn(|| d.due(end, None, start)).count();
        assert_eq!((n(&mut a), n(&mut b)), (5, 5));
    }
}
