//! Chart axes: where a value falls, and ticks people can read (1-2-5 steps, units that scale,
//! a log axis for percentiles in the manner of HdrHistogram's percentile plots).

use crate::figure::{short_duration, time_unit, trim};

/// How values map onto an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Base 10; values must be positive.
    Log,
}

/// An axis: its range, scale, title and ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The title with its unit, e.g. `latency (ms)`.
    pub title: String,
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
    /// Tick values (in the axis' data unit) with their labels.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Where `v` falls, 0 at `lo` to 1 at `hi` (clamped).
    pub fn pos(&self, v: f64) -> f64 {
        let f = |x: f64| match self.scale {
            Scale::Linear => x,
            Scale::Log => x.max(f64::MIN_POSITIVE).log10(),
        };
        let (lo, hi) = (f(self.lo), f(self.hi));
        if hi <= lo {
            return 0.0;
        }
        ((f(v) - lo) / (hi - lo)).clamp(0.0, 1.0)
    }

    /// A linear axis from 0 to at least `max`, in `unit` (e.g. `req/s`), ticks as plain numbers.
    pub fn linear(title: &str, max: f64) -> Axis {
        let (hi, step) = nice_range(max);
        let ticks = steps(hi, step)
            .map(|v| (v, plain(v, step)))
            .collect::<Vec<_>>();
        Axis {
            title: title.to_owned(),
            lo: 0.0,
            hi,
            scale: Scale::Linear,
            ticks,
        }
    }

    /// A linear axis for times given in milliseconds, labelled in the unit that suits the
    /// range: `latency (us)`, `(ms)` or `(s)`.
    pub fn duration(what: &str, max_ms: f64) -> Axis {
        let (div, unit) = time_unit(max_ms);
        let (hi, step) = nice_range(max_ms / div);
        let ticks = steps(hi, step).map(|v| (v * div, plain(v, step))).collect();
        Axis {
            title: format!("{what} ({unit})"),
            lo: 0.0,
            hi: hi * div,
            scale: Scale::Linear,
            ticks,
        }
    }

    /// A log axis for times in milliseconds spanning `min_ms..max_ms`; ticks at 1, 2, 5 of each
    /// decade, each labelled in its own unit (`500 us`, `1 ms`, `2 s`).
    pub fn duration_log(what: &str, min_ms: f64, max_ms: f64) -> Axis {
        let lo = decade_floor(min_ms.max(0.001));
        let hi = decade_ceil(max_ms.max(lo * 10.0));
        let mut ticks = Vec::new();
        let mut decade = lo;
        while decade <= hi * 1.0001 {
            for m in [1.0, 2.0, 5.0] {
                let v = decade * m;
                if v <= hi * 1.0001 {
                    ticks.push((v, short_duration(v)));
                }
            }
            decade *= 10.0;
        }
        Axis {
            title: format!("{what} (log scale)"),
            lo,
            hi,
            scale: Scale::Log,
            ticks,
        }
    }

    /// A log axis for counts spanning `min..max` (1 to 1,000 users): ticks at 1, 2, 5 of each
    /// decade.
    pub fn log(title: &str, min: f64, max: f64) -> Axis {
        let lo = decade_floor(min.max(1e-3));
        let hi = decade_ceil(max.max(lo * 10.0));
        let mut ticks = Vec::new();
        let mut decade = lo;
        while decade <= hi * 1.0001 {
            for m in [1.0, 2.0, 5.0] {
                let v = decade * m;
                if v <= hi * 1.0001 {
                    // Short labels keep clear of the axis title: 20k, not 20,000.
                    let label = if v >= 1e6 {
                        format!("{}M", trim(v / 1e6, 3))
                    } else if v >= 1e4 {
                        format!("{}k", trim(v / 1e3, 3))
                    } else if v >= 1.0 {
                        crate::format::count(v.round() as u64)
                    } else {
                        trim(v, 3)
                    };
                    ticks.push((v, label));
                }
            }
            decade *= 10.0;
        }
        Axis {
            title: title.to_owned(),
            lo,
            hi,
            scale: Scale::Log,
            ticks,
        }
    }

    /// Percentiles on HdrHistogram's axis: position `x = log10(1 / (1 - q))`, so 90%, 99%,
    /// 99.9% ... are evenly spaced and the tail gets the room. The data unit is `x`.
    pub fn percentile(max_x: f64) -> Axis {
        let hi = max_x.clamp(1.0, 5.0);
        let mut ticks = vec![(0.0, "0%".to_owned()), (2f64.log10(), "50%".to_owned())];
        for nines in 1..=hi.floor() as i32 {
            let q = 100.0 - 100.0 / 10f64.powi(nines);
            ticks.push((nines as f64, format!("{}%", trim(q, nines as usize - 1))));
        }
        Axis {
            title: "percentile (log scale of 1/(1−q))".to_owned(),
            lo: 0.0,
            hi,
            scale: Scale::Linear,
            ticks,
        }
    }
}

/// The position on the percentile axis of quantile `q` (0..1).
#[cfg(test)]
pub fn percentile_x(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// A rounded-up axis maximum and its tick step, aiming at about five ticks.
fn nice_range(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

fn steps(hi: f64, step: f64) -> impl Iterator<Item = f64> {
    let n = (hi / step).round() as usize;
    (0..=n).map(move |i| i as f64 * step)
}

/// A tick value with as many decimals as its step needs: 0, 0.5, 1.0 or 0, 2.5, 5.0 or 0, 250.
fn plain(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let decimals = (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6) as usize;
    if v >= 1e4 && decimals == 0 {
        return crate::format::count(v.round() as u64);
    }
    format!("{v:.decimals$}")
}

fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

fn decade_ceil(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn linear_ticks_are_round() {
        assert_eq!(
            labels(&Axis::linear("rps", 300.0)),
            ["0", "100", "200", "300"]
        );
        assert_eq!(
            labels(&Axis::linear("rps", 1_363.0)),
            ["0", "500", "1000", "1500"]
        );
        assert_eq!(
            labels(&Axis::linear("x", 0.9)),
            ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]
        );
        assert_eq!(
            labels(&Axis::linear("x", 9.0)),
            ["0", "2", "4", "6", "8", "10"]
        );
        assert_eq!(
            labels(&Axis::linear("x", 12.0)),
            ["0", "2.5", "5.0", "7.5", "10.0", "12.5"]
        );
        assert_eq!(Axis::linear("x", 0.0).hi, 1.0);
        assert_eq!(labels(&Axis::linear("x", 45_000.0))[1], "10,000");
    }

    #[test]
    fn duration_axis_picks_its_unit() {
        let a = Axis::duration("latency", 23.9);
        assert_eq!(a.title, "latency (ms)");
        assert_eq!(labels(&a), ["0", "5", "10", "15", "20", "25"]);
        let us = Axis::duration("latency", 0.45);
        assert_eq!(us.title, "latency (us)");
        assert_eq!(us.ticks[1], (0.1, "100".to_owned()));
        let s = Axis::duration("latency", 5_000.0);
        assert_eq!(s.title, "latency (s)");
        assert_eq!(s.ticks.last().unwrap(), &(5_000.0, "5".to_owned()));
    }

    #[test]
    fn log_axis_spans_decades() {
        let a = Axis::duration_log("latency", 0.3, 25.0);
        assert_eq!((a.lo, a.hi), (0.1, 100.0));
        assert_eq!(
            labels(&a),
            [
                "100 us", "200 us", "500 us", "1 ms", "2 ms", "5 ms", "10 ms", "20 ms", "50 ms",
                "100 ms"
            ]
        );
        assert!((a.pos(1.0) - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(short_duration(2_000.0), "2 s");
    }

    #[test]
    fn log_axis_for_counts() {
        let a = Axis::log("users", 1.0, 1_000.0);
        assert_eq!((a.lo, a.hi, a.scale), (1.0, 1_000.0, Scale::Log));
        assert_eq!(
            labels(&a),
            ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000"]
        );
        assert!((a.pos(10.0) - 1.0 / 3.0).abs() < 1e-9);
        let big = Axis::log("req/s", 150.0, 17_000.0);
        assert_eq!(labels(&big)[..3], ["100", "200", "500"]);
        assert_eq!(labels(&big)[5..], ["5,000", "10k", "20k", "50k", "100k"]);
    }

    #[test]
    fn percentile_axis_spaces_the_nines() {
        let a = Axis::percentile(3.2);
        assert_eq!(labels(&a), ["0%", "50%", "90%", "99%", "99.9%"]);
        assert!((percentile_x(0.99) - 2.0).abs() < 1e-9);
        assert_eq!(a.pos(a.hi), 1.0);
        assert_eq!(labels(&Axis::percentile(9.0)).last(), Some(&"99.999%"));
    }
}
