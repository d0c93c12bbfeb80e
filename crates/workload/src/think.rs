//! Think times: how long a virtual user pauses between steps, fixed or drawn from a
//! distribution with the user's own seeded generator.

use rand::Rng;
use rand_distr::{Distribution, Exp};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub enum Think {
    Fixed(Duration),
    Uniform(Duration, Duration),
    /// Exponentially distributed with this mean (a Poisson process of pauses).
    Exponential(Duration),
}

/// The longest pause drawn, so one unlucky draw cannot stall a user past any sane run.
const MAX_THINK: Duration = Duration::from_secs(3600);

impl Think {
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        match *self {
            Think::Fixed(d) => d,
            Think::Uniform(a, b) if a >= b => a,
            Think::Uniform(a, b) => {
                Duration::from_secs_f64(rng.gen_range(a.as_secs_f64()..b.as_secs_f64()))
            }
            Think::Exponential(mean) if mean.is_zero() => Duration::ZERO,
            Think::Exponential(mean) => {
                let exp = Exp::new(1.0 / mean.as_secs_f64()).expect("positive rate");
                Duration::from_secs_f64(exp.sample(rng)).min(MAX_THINK)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn draws_stay_in_range_and_average_right() {
        let mut rng = SmallRng::seed_from_u64(7);
        let (a, b) = (Duration::from_secs(1), Duration::from_secs(3));
        let u = Think::Uniform(a, b);
        let e = Think::Exponential(Duration::from_secs(2));
        let (mut su, mut se) = (0.0, 0.0);
        for _ in 0..10_000 {
            let d = u.sample(&mut rng);
            assert!(d >= a && d < b);
            su += d.as_secs_f64();
            se += e.sample(&mut rng).as_secs_f64();
        }
        assert!(
            (su / 10_000.0 - 2.0).abs() < 0.05,
            "uniform mean {}",
            su / 1e4
        );
        assert!(
            (se / 10_000.0 - 2.0).abs() < 0.1,
            "exponential mean {}",
            se / 1e4
        );
        assert_eq!(Think::Fixed(a).sample(&mut rng), a);
    }
}
