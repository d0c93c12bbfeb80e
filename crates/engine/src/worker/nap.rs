//! How long a wait may sleep before it looks for events (issue 33, the server's view).
//!
//! On loopback the server's kernel delivers each write to herd's socket itself, and when
//! herd's thread is asleep in the poll, it also wakes that thread: on a virtual machine an
//! interrupt between CPUs, paid on the server's CPU. Against a saturated nginx over h2c (10
//! connections x 100 streams), herd's loop was asleep whenever a response came: woken once
//! per 1.6 requests (h2load, busier per request, once per 6), the server spent 1.15x the CPU
//! per request it spent on h2load's. A wait that first sleeps on its own timer a few
//! microseconds, then looks, finds several responses at once and wakes nobody: what a network
//! card's interrupt moderation does when client and server are on different machines.
//!
//! The nap is taken only where it pays and cannot blur what is measured:
//! - the loop was woken more than once per [`WOKEN`] answers in the last window (plain
//!   HTTP/1.1 against the same nginx: once per 5, and a nap there only adds a sleep);
//! - a response that comes during the nap is read up to the nap later, so the nap is at most
//!   a hundredth of the window's answers but the fastest tenth (at most [`MAX`]): a saturated
//!   server's answers take milliseconds; one fast user's 50 µs answers would give 0.5 µs,
//!   below [`MIN`], and the loop never naps. (Not the fastest of all: with a thousand streams
//!   in flight against a saturated server, some answer comes within 300 µs every window.)
//! - event streams (their gaps are timed event by event), errors and windows with no answer
//!   leave it at zero;
//! - a nap that did not keep the loop below that rate of wake-ups, or that cost herd's thread
//!   more CPU time per answer than the waits before it (a short sleep's timer is not free on a
//!   virtual machine: h2c 10 x 10 against nginx read 0.93x h2load's CPU per request napping,
//!   0.83x not), ends, and is not tried again for [`REST`] windows, twice as many after each
//!   further one that does not pay (at most a minute).

use crate::transport::Effort;
use std::time::{Duration, Instant};

/// The nap's share of the answers but the fastest tenth: a hundredth.
const SHARE: u32 = 100;
/// The share of answers that may be faster than a hundredth of the nap: a tenth.
const FAST: u64 = 10;
/// The longest nap.
pub(crate) const MAX: Duration = Duration::from_micros(50);
/// Shorter naps are not taken: on a virtual machine a 5 µs sleep returned without leaving the
/// CPU (4 voluntary context switches in a tenth of a second of 5 µs naps against plain
/// HTTP/1.1) and cost the loop 35-55% more CPU time per answer.
const MIN: Duration = Duration::from_micros(20);
/// How often the nap is decided again, from the answers since the last time.
const WINDOW: Duration = Duration::from_millis(100);
/// A loop woken more than once per this many answers naps.
const WOKEN: u64 = 3;
/// A nap costs the same as the waits before it within 1/SAME of their CPU time per answer:
/// what one window's figure moves by itself.
const SAME: u64 = 20;
/// Windows without a nap after one that did not pay; each further one that did not pay
/// doubles the rest, up to [`LONGEST_REST`].
const REST: u32 = 10;
const LONGEST_REST: u32 = 640;

/// The window in progress, and the nap in force.
#[derive(Debug, Default)]
pub(crate) struct Nap {
    /// When the window began (the loop's first tick), and the loop's effort then.
    since: Option<(Instant, Effort)>,
    /// Answers by latency: `[k]` counts those of 2^(k-1) to 2^k µs (`[0]`: under 1 µs).
    octaves: [u32; 32],
    answers: u64,
    /// An event stream ended in this window.
    stream: bool,
    rest: u32,
    /// The rest after the next nap that does not pay.
    next_rest: u32,
    /// While the loop naps: its CPU time per answer (ns) in the window before the naps began.
    cost: Option<u64>,
}

impl Nap {
    /// An exchange ended with `outcome`.
    pub(crate) fn saw(&mut self, outcome: &herd_metrics::Outcome) {
        if outcome.stream.is_some() {
            self.stream = true;
        } else if outcome.result.is_ok() {
            self.answers += 1;
            let us = outcome.latency.as_micros() as u64;
            self.octaves[(64 - us.leading_zeros() as usize).min(31)] += 1;
        }
    }

    /// At a tick: once a [`WINDOW`] has passed since the last decision, the nap for the next,
    /// from the window that closed. `effort` reads the loop's sleeps and CPU time so far
    /// ([`crate::Transport::effort`]).
    pub(crate) fn due(
        &mut self,
        now: Instant,
        effort: impl FnOnce() -> Effort,
    ) -> Option<Duration> {
        let Some((since, before)) = self.since else {
            self.since = Some((now, effort()));
            return None;
        };
        if now < since + WINDOW {
            return None;
        }
        let after = effort();
        let often = after.sleeps.saturating_sub(before.sleeps) * WOKEN > self.answers;
        let cost = after.cpu.saturating_sub(before.cpu).as_nanos() as u64 / self.answers.max(1);
        let bound = if self.stream {
            Duration::ZERO
        } else {
            (self.fast_tenth() / SHARE).min(MAX)
        };
        let napping = if bound < MIN {
            None
        } else if let Some(before) = self.cost {
            // Naps that did not gather answers, or cost this thread more per answer than
            // the waits before them (beyond a window's noise, [`SAME`]), end.
            if !often && cost <= before + before / SAME {
                self.next_rest = REST;
                Some(before)
            } else {
                self.rest = self.next_rest.max(REST);
                self.next_rest = (self.rest * 2).min(LONGEST_REST);
                None
            }
        } else if self.rest > 0 {
            self.rest -= 1;
            None
        } else {
            often.then_some(cost)
        };
        *self = Nap {
            since: Some((now, after)),
            rest: self.rest,
            next_rest: self.next_rest,
            cost: napping,
            ..Nap::default()
        };
        Some(if napping.is_some() {
            bound
        } else {
            Duration::ZERO
        })
    }

    /// A latency no more than a tenth of the window's answers were faster than (the lower
    /// end of the octave where the fastest tenth ends); zero without answers.
    fn fast_tenth(&self) -> Duration {
        let mut seen = 0;
        for (k, &n) in self.octaves.iter().enumerate() {
            seen += u64::from(n);
            if seen * FAST > self.answers {
                return Duration::from_micros(if k == 0 { 0 } else { 1 << (k - 1) });
            }
        }
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::{ErrorKind, Outcome, Verdict};

    fn answer(us: u64) -> Outcome {
        let d = Duration::from_micros(us);
        Outcome::completed(0, d, d, 200, Verdict::Ok)
    }

    /// Windows of `answers`, each with (sleeps, µs of CPU time) of the loop: the naps decided.
    fn windows(answers: &[Outcome], efforts: &[(u64, u64)]) -> Vec<Duration> {
        let t0 = Instant::now();
        let mut nap = Nap::default();
        let mut total = Effort::default();
        assert_eq!(
            nap.due(t0, Effort::default),
            None,
            "the first tick starts the window"
        );
        let mut naps = Vec::new();
        for (k, &(sleeps, us)) in efforts.iter().enumerate() {
            for a in answers {
                nap.saw(a);
            }
            let end = t0 + WINDOW * (k as u32 + 1);
            assert_eq!(
                nap.due(end - Duration::from_millis(1), || unreachable!()),
                None
            );
            total.sleeps += sleeps;
            total.cpu += Duration::from_micros(us);
            naps.push(nap.due(end, || total).unwrap());
        }
        naps
    }

    fn many(us: u64) -> Vec<Outcome> {
        (0..30).map(|k| answer(us + k)).collect()
    }

    #[test]
    fn a_loop_woken_by_most_answers_of_a_saturated_server_naps_the_longest() {
        // Woken 20 times for 30 answers; then, napping, 5 times.
        assert_eq!(
            windows(&many(25_000), &[(20, 300), (5, 200), (5, 200)]),
            [MAX, MAX, MAX]
        );
    }

    #[test]
    fn a_loop_seldom_woken_does_not_nap() {
        assert_eq!(
            windows(&many(25_000), &[(6, 300), (6, 300)]),
            [Duration::ZERO; 2]
        );
    }

    #[test]
    fn the_nap_is_a_hundredth_of_the_answers_but_the_fastest_tenth() {
        // 3 ms answers: a hundredth of the octave they fall in (2,048 µs and up).
        assert_eq!(
            windows(&many(3_000), &[(30, 300)]),
            [Duration::from_nanos(20_480)]
        );
        // 1.2 ms answers would give 10 µs: too short a sleep.
        assert_eq!(windows(&many(1_200), &[(30, 300)]), [Duration::ZERO]);
        // Among 30 answers of 25 ms, two of 100 µs (a fifteenth) leave the nap whole; four
        // (over a tenth) end it.
        let mut answers = many(25_000);
        answers.extend([answer(100), answer(100)]);
        assert_eq!(windows(&answers, &[(30, 300)]), [MAX]);
        answers.extend([answer(100), answer(100)]);
        assert_eq!(windows(&answers, &[(30, 300)]), [Duration::ZERO]);
    }

    #[test]
    fn fast_answers_and_silent_windows_get_no_nap() {
        assert_eq!(
            windows(&[answer(20_000), answer(60)], &[(2, 20)]),
            [Duration::ZERO]
        );
        assert_eq!(windows(&[], &[(5, 10)]), [Duration::ZERO]);
    }

    #[test]
    fn a_nap_that_does_not_gather_answers_ends_and_rests() {
        let naps = windows(&many(25_000), &[(20, 300); 14]);
        assert_eq!(naps[0], MAX);
        assert!(naps[1..12].iter().all(|n| n.is_zero()), "{naps:?}");
        assert_eq!(naps[12], MAX, "tried again after the rest");
    }

    #[test]
    fn each_nap_that_does_not_pay_doubles_the_rest() {
        let naps = windows(&many(25_000), &[(20, 300); 60]);
        let on: Vec<usize> = (0..60).filter(|&k| !naps[k].is_zero()).collect();
        // On, off 10; on, off 20; on.
        assert_eq!(on, [0, 12, 34]);
    }

    #[test]
    fn a_nap_that_costs_the_loop_more_per_answer_ends_and_rests() {
        let mut efforts = vec![(20, 300), (5, 320)];
        efforts.extend([(20, 300); 11]);
        let naps = windows(&many(25_000), &efforts);
        assert_eq!(naps[0], MAX);
        assert!(naps[1..12].iter().all(|n| n.is_zero()), "{naps:?}");
        assert_eq!(naps[12], MAX, "tried again after the rest");
    }

    #[test]
    fn event_streams_and_errors_do_not_nap() {
        let mut stream = answer(30_000);
        stream.stream = Some(Box::default());
        let mut answers = many(20_000);
        answers.push(stream);
        assert_eq!(windows(&answers, &[(30, 300)]), [Duration::ZERO]);
        let error = Outcome::error(0, Duration::from_micros(10), ErrorKind::Timeout);
        assert_eq!(
            windows(&[error], &[(30, 300)]),
            [Duration::ZERO],
            "an error is no answer"
        );
    }
}
