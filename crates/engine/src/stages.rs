//! Load that changes over time: stages that ramp a target linearly (k6's `stages`, seed 003's
//! ramp-up, steady state and ramp-down). In the closed model the target is the number of active
//! users; in the open model it is the arrival rate. Both are pure functions of time, tested as
//! tables.

use std::time::Duration;

/// Ramp linearly from the previous stage's target (0 before the first) to `target` over
/// `duration`. A stage with the same target as the last one holds it steady.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub target: f64,
}

/// A piecewise-linear profile of stages starting from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// (start offset, length, value at start, value at end) per stage, in seconds.
    segments: Vec<(f64, f64, f64, f64)>,
    /// Cumulative integral (arrivals) at the start of each segment.
    area: Vec<f64>,
}

impl Profile {
    pub fn new(stages: &[Stage]) -> Self {
        let mut segments = Vec::with_capacity(stages.len());
        let mut area = Vec::with_capacity(stages.len());
        let (mut t, mut v, mut a) = (0.0, 0.0, 0.0);
        for s in stages {
            let d = s.duration.as_secs_f64();
            segments.push((t, d, v, s.target));
            area.push(a);
            a += d * (v + s.target) / 2.0;
            t += d;
            v = s.target;
        }
        Profile { segments, area }
    }

    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.segments.last().map_or(0.0, |(t, d, _, _)| t + d))
    }

    pub fn max(&self) -> f64 {
        self.segments.iter().map(|s| s.3).fold(0.0, f64::max)
    }

    /// The target at `t`; 0 after the last stage.
    pub fn value_at(&self, t: Duration) -> f64 {
        let t = t.as_secs_f64();
        for &(t0, d, v0, v1) in &self.segments {
            if t < t0 + d {
                return if d == 0.0 {
                    v1
                } else {
                    v0 + (v1 - v0) * (t - t0) / d
                };
            }
        }
        0.0
    }

    /// Arrivals due before `t`: the integral of the rate, rounded up (arrival 0 is at t = 0).
    pub fn arrivals_before(&self, t: Duration) -> u64 {
        let ts = t.as_secs_f64();
        let mut a = 0.0;
        for (i, &(t0, d, v0, v1)) in self.segments.iter().enumerate() {
            if ts <= t0 {
                break;
            }
            let x = (ts - t0).min(d);
            let slope = if d == 0.0 { 0.0 } else { (v1 - v0) / d };
            a = self.area[i] + v0 * x + slope * x * x / 2.0;
        }
        (a - 1e-9).max(0.0).ceil() as u64
    }

    /// Open model: when arrival `n` (0, 1, 2, …) is due, where arrivals accumulate as the
    /// integral of the rate; `None` when the profile ends first.
    pub fn arrival_at(&self, n: u64) -> Option<Duration> {
        self.time_at(n as f64)
    }

    /// When the integral of the rate reaches `n` arrivals (a fraction for a random process's
    /// arrival); `None` when the profile ends first.
    pub fn time_at(&self, n: f64) -> Option<Duration> {
        for (i, &(t0, d, v0, v1)) in self.segments.iter().enumerate() {
            let a0 = self.area[i];
            let seg = d * (v0 + v1) / 2.0;
            if n < a0 + seg || (n == a0 && seg > 0.0) {
                let c = n - a0; // arrivals into this segment
                let slope = if d == 0.0 { 0.0 } else { (v1 - v0) / d };
                // solve v0 x + slope/2 x^2 = c for the smallest x >= 0
                let x = if slope.abs() < 1e-12 {
                    c / v0
                } else {
                    let a = slope / 2.0;
                    let disc = (v0 * v0 + 4.0 * a * c).max(0.0);
                    (-v0 + disc.sqrt()) / (2.0 * a)
                };
                return Some(Duration::from_secs_f64(t0 + x.clamp(0.0, d)));
            }
        }
        None
    }

    /// Closed model: user `user` (0-based) is active while the target exceeds its number. The
    /// earliest time at or after `t` when it is active, or `None` if it never is again.
    pub fn next_active(&self, user: u64, t: Duration) -> Option<Duration> {
        let need = user as f64 + 1.0;
        let ts = t.as_secs_f64();
        for &(t0, d, v0, v1) in &self.segments {
            let end = t0 + d;
            if ts >= end {
                continue;
            }
            let from = ts.max(t0);
            let v_from = if d == 0.0 {
                v1
            } else {
                v0 + (v1 - v0) * (from - t0) / d
            };
            if v_from >= need - 1e-9 {
                return Some(Duration::from_secs_f64(from));
            }
            if v1 > v_from && v1 >= need - 1e-9 {
                let x = (need - v0) / (v1 - v0) * d;
                return Some(Duration::from_secs_f64((t0 + x).max(from)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64, target: f64) -> Stage {
        Stage {
            duration: Duration::from_secs_f64(secs),
            target,
        }
    }

    fn secs(d: Option<Duration>) -> Option<f64> {
        d.map(|d| (d.as_secs_f64() * 1000.0).round() / 1000.0)
    }

    #[test]
    fn values_ramp_hold_and_fall() {
        let p = Profile::new(&[s(10.0, 50.0), s(20.0, 50.0), s(10.0, 0.0)]);
        let table = [
            (0.0, 0.0),
            (5.0, 25.0),
            (10.0, 50.0),
            (29.9, 50.0),
            (35.0, 25.0),
            (40.0, 0.0),
            (99.0, 0.0),
        ];
        for (t, want) in table {
            let got = p.value_at(Duration::from_secs_f64(t));
            assert!((got - want).abs() < 1e-6, "t={t}: {got} != {want}");
        }
        assert_eq!(p.total(), Duration::from_secs(40));
        assert_eq!(p.max(), 50.0);
    }

    #[test]
    fn a_steady_stage_is_a_constant_rate() {
        let p = Profile::new(&[s(5.0, 100.0)]);
        // ramp from 0 to 100 over 5 s: 250 arrivals
        let count = (0..).take_while(|n| p.arrival_at(*n).is_some()).count();
        assert_eq!(count, 250);
        let p = Profile::new(&[s(0.0, 100.0), s(5.0, 100.0)]);
        let count = (0..).take_while(|n| p.arrival_at(*n).is_some()).count();
        assert_eq!(count, 500);
        assert_eq!(secs(p.arrival_at(0)), Some(0.0));
        assert_eq!(secs(p.arrival_at(1)), Some(0.01));
        assert_eq!(secs(p.arrival_at(499)), Some(4.99));
    }

    #[test]
    fn ramp_arrivals_follow_the_integral() {
        // rate 0 -> 10/s over 10 s: arrivals by t are t^2/2, so arrival n is at sqrt(2n)
        let p = Profile::new(&[s(10.0, 10.0)]);
        for n in [0u64, 2, 8, 18, 32] {
            let want = ((2 * n) as f64).sqrt();
            assert_eq!(secs(p.arrival_at(n)), Some(want), "arrival {n}");
        }
        assert_eq!((0..).take_while(|n| p.arrival_at(*n).is_some()).count(), 50);
        // ramp down 10 -> 0 over 10 s
        let p = Profile::new(&[s(0.0, 10.0), s(10.0, 0.0)]);
        assert_eq!((0..).take_while(|n| p.arrival_at(*n).is_some()).count(), 50);
        assert_eq!(secs(p.arrival_at(0)), Some(0.0));
    }

    #[test]
    fn users_join_on_the_ramp_and_leave_on_the_way_down() {
        let p = Profile::new(&[s(10.0, 10.0), s(10.0, 10.0), s(10.0, 0.0)]);
        // user 0 joins when the target reaches 1 (t = 1 s), user 9 at 10 s
        assert_eq!(secs(p.next_active(0, Duration::ZERO)), Some(1.0));
        assert_eq!(secs(p.next_active(9, Duration::ZERO)), Some(10.0));
        assert_eq!(secs(p.next_active(9, Duration::from_secs(15))), Some(15.0));
        // on the way down user 9 is gone for good; user 0 stays until the target drops below 1
        assert_eq!(secs(p.next_active(9, Duration::from_secs(21))), None);
        assert_eq!(secs(p.next_active(0, Duration::from_secs(28))), Some(28.0));
        assert_eq!(secs(p.next_active(0, Duration::from_secs(30))), None);
        // never more than the target
        assert_eq!(secs(p.next_active(10, Duration::ZERO)), None);
    }
}
