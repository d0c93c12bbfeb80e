use std::fmt;
use std::time::Duration;

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Uniform};

/// Longest delay a route may ask for; samples from unbounded distributions are clamped to it so
/// a heavy tail cannot park a connection for days.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(3600);

/// How long a route waits before answering, drawn afresh for every request.
///
/// Real dependencies are not constant: a service whose median is 200 ms often has a p99 of a
/// second. The distributions here cover the usual shapes; samples below zero become zero and
/// samples above one hour become one hour.
///
/// Delays run on tokio's timer, which ticks every millisecond and never fires early: a delay
/// comes out up to about a millisecond longer than drawn, which matters only for sub-millisecond
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Latency {
    /// Answer as soon as the request has been read.
    #[default]
    None,
    /// Always the same delay.
    Fixed(Duration),
    /// Any delay in `[min, max]` with equal probability.
    Uniform { min: Duration, max: Duration },
    /// Bell curve around `mean`; negative samples are clamped to zero.
    Normal { mean: Duration, stddev: Duration },
    /// Long right tail, the usual shape of service latency. `median` is the p50 and `sigma` the
    /// shape: p99 is about `median * e^(2.33 * sigma)`, so sigma 0.5 gives p99 ≈ 3.2 × median.
    LogNormal { median: Duration, sigma: f64 },
    /// Memoryless delays with the given mean (p99 ≈ 4.6 × mean).
    Exponential { mean: Duration },
}

/// A [`Latency`] checked once and turned into ready-to-sample distributions (in seconds).
#[derive(Debug, Clone)]
pub(crate) enum Delay {
    None,
    Fixed(Duration),
    Uniform(Uniform<f64>),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Exponential(Exp<f64>),
}

impl Latency {
    /// Checks the parameters and builds the sampler; the error says what is wrong.
    pub(crate) fn compile(&self) -> Result<Delay, String> {
        let check = |what: &str, d: Duration| {
            if d > MAX_DELAY {
                Err(format!(
                    "{what} {} is above the 1h limit",
                    format_duration(d)
                ))
            } else {
                Ok(d.as_secs_f64())
            }
        };
        Ok(match *self {
            Latency::None => Delay::None,
            Latency::Fixed(d) => {
                check("latency", d)?;
                if d.is_zero() {
                    Delay::None
                } else {
                    Delay::Fixed(d)
                }
            }
            Latency::Uniform { min, max } => {
                let (lo, hi) = (check("uniform min", min)?, check("uniform max", max)?);
                if lo > hi {
                    return Err(format!(
                        "uniform min {} is above max {}",
                        format_duration(min),
                        format_duration(max)
                    ));
                }
                Delay::Uniform(Uniform::new_inclusive(lo, hi))
            }
            Latency::Normal { mean, stddev } => {
                let (m, s) = (check("normal mean", mean)?, check("normal stddev", stddev)?);
                Delay::Normal(Normal::new(m, s).map_err(|e| format!("normal: {e}"))?)
            }
            Latency::LogNormal { median, sigma } => {
                let m = check("lognormal median", median)?;
                if m <= 0.0 {
                    return Err("lognormal median must be above zero".into());
                }
                if !(sigma.is_finite() && sigma >= 0.0) {
                    return Err(format!(
                        "lognormal sigma must be a number >= 0, not {sigma}"
                    ));
                }
                Delay::LogNormal(
                    LogNormal::new(m.ln(), sigma).map_err(|e| format!("lognormal: {e}"))?,
                )
            }
            Latency::Exponential { mean } => {
                let m = check("exponential mean", mean)?;
                if m <= 0.0 {
                    return Err("exponential mean must be above zero".into());
                }
                Delay::Exponential(Exp::new(1.0 / m).map_err(|e| format!("exponential: {e}"))?)
            }
        })
    }
}

impl Delay {
    pub(crate) fn sample<R: Rng>(&self, rng: &mut R) -> Duration {
        let secs = match self {
            Delay::None => return Duration::ZERO,
            Delay::Fixed(d) => return *d,
            Delay::Uniform(u) => u.sample(rng),
            Delay::Normal(n) => n.sample(rng),
            Delay::LogNormal(l) => l.sample(rng),
            Delay::Exponential(e) => e.sample(rng),
        };
        if secs > 0.0 {
            Duration::from_secs_f64(secs.min(MAX_DELAY.as_secs_f64()))
        } else {
            Duration::ZERO
        }
    }
}

impl fmt::Display for Latency {
    /// The spec form, as accepted by `latency=` in [`Route::parse`](crate::Route::parse).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = format_duration;
        match *self {
            Latency::None => f.write_str("none"),
            Latency::Fixed(x) => f.write_str(&d(x)),
            Latency::Uniform { min, max } => write!(f, "uniform:{}:{}", d(min), d(max)),
            Latency::Normal { mean, stddev } => write!(f, "normal:{}:{}", d(mean), d(stddev)),
            Latency::LogNormal { median, sigma } => write!(f, "lognormal:{}:{sigma}", d(median)),
            Latency::Exponential { mean } => write!(f, "exp:{}", d(mean)),
        }
    }
}

/// Parses `200ms`, `1.8s`, `250us`, `2m`: a decimal number and a unit, which is required because
/// a bare `200` is as likely to mean milliseconds as seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let nanos_per_unit = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        "" => return Err(format!("'{s}' has no unit; write e.g. {s}ms or {s}s")),
        _ => {
            return Err(format!(
                "'{s}' has unknown unit '{unit}'; allowed: ns, us, ms, s, m, h"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a duration; write e.g. 200ms, 1.8s or 250us"))?;
    let nanos = (value * nanos_per_unit).round();
    if nanos > MAX_DELAY.as_nanos() as f64 {
        return Err(format!("'{s}' is above the 1h limit"));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// The shortest exact spelling of `d` that [`parse_duration`] reads back to the same value.
pub(crate) fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        "0ms".into()
    } else if nanos % 1_000_000_000 == 0 {
        format!("{}s", nanos / 1_000_000_000)
    } else if nanos % 1_000_000 == 0 {
        format!("{}ms", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!("{}us", nanos / 1_000)
    } else {
        format!("{nanos}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn durations_parse_with_units_and_decimals() {
        assert_eq!(parse_duration("200ms"), Ok(ms(200)));
        assert_eq!(parse_duration("1.8s"), Ok(ms(1800)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("200").unwrap_err().contains("no unit"));
        assert!(parse_duration("5d")
            .unwrap_err()
            .contains("allowed: ns, us, ms, s, m, h"));
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("2h").unwrap_err().contains("1h limit"));
    }

    #[test]
    fn formatted_durations_read_back_exactly() {
        for d in [
            ms(0),
            ms(1800),
            Duration::from_secs(3),
            Duration::from_micros(1500),
            Duration::from_nanos(7),
        ] {
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }

    #[test]
    fn samples_are_reproducible_for_a_seed_and_stay_in_range() {
        let delay = Latency::Uniform {
            min: ms(10),
            max: ms(20),
        }
        .compile()
        .unwrap();
        let draw = |seed| {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..100).map(|_| delay.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        assert!(draw(7).iter().all(|d| (ms(10)..=ms(20)).contains(d)));
    }

    #[test]
    fn normal_samples_below_zero_become_zero() {
        let delay = Latency::Normal {
            mean: ms(1),
            stddev: ms(100),
        }
        .compile()
        .unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let zeros = (0..1000)
            .filter(|_| delay.sample(&mut rng).is_zero())
            .count();
        assert!(
            zeros > 100,
            "about half the samples should clamp to zero, got {zeros}"
        );
    }

    #[test]
    fn lognormal_median_is_the_p50() {
        let delay = Latency::LogNormal {
            median: ms(200),
            sigma: 0.5,
        }
        .compile()
        .unwrap();
        let mut rng = SmallRng::seed_from_u64(3);
        let mut samples: Vec<_> = (0..10_001).map(|_| delay.sample(&mut rng)).collect();
        samples.sort();
        let p50 = samples[5000].as_secs_f64();
        assert!((0.18..0.22).contains(&p50), "p50 {p50}");
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(Latency::Uniform {
            min: ms(5),
            max: ms(1)
        }
        .compile()
        .unwrap_err()
        .contains("above max"));
        assert!(Latency::LogNormal {
            median: ms(0),
            sigma: 1.0
        }
        .compile()
        .is_err());
        assert!(Latency::LogNormal {
            median: ms(1),
            sigma: -1.0
        }
        .compile()
        .is_err());
        assert!(Latency::Exponential { mean: ms(0) }.compile().is_err());
        assert!(Latency::Fixed(Duration::from_secs(7200)).compile().is_err());
    }
}
