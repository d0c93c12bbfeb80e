//! Is a difference between two runs more than noise? Welch's t-test on per-second samples, and
//! distribution-free confidence intervals for quantiles of a histogram.
//!
//! Welch's test does not assume the two runs are equally noisy, which they seldom are (a slower
//! server is usually a noisier one too). The quantile interval comes from the binomial
//! distribution of ranks, so it needs no assumption about the shape of latencies; it does
//! assume requests are independent, which is why `compare` uses it only for metrics that do not
//! gate (see docs/compare.md).

use hdrhistogram::Histogram;

/// The outcome of Welch's two-sample t-test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// Two-sided p-value: the chance of a difference of means at least this large if both
    /// samples came from populations with the same mean.
    pub p: f64,
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
}

/// Welch's t-test; `None` when either sample has fewer than two values.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    let diff = mb - ma;
    if se2 <= 0.0 || !se2.is_finite() {
        // No spread at all: the samples are constant, so any difference is real.
        let same = diff.abs() <= f64::EPSILON * ma.abs().max(mb.abs()).max(1.0);
        return Some(Welch {
            p: if same { 1.0 } else { 0.0 },
            t: if same {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: na + nb - 2.0,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    Some(Welch {
        p: student_t_two_sided(t, df),
        t,
        df,
    })
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz's
/// method, as in Numerical Recipes §6.4).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The fraction converges fast only below the mean of the distribution; use symmetry above.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9): about 15 significant digits.
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series in its accurate range.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// A 95% confidence interval, in the histogram's unit, for its `quantile`, from the ranks that
/// bound it: rank ~ Binomial(n, q), so the interval is the values at q ± 1.96·√(q(1−q)/n).
pub fn quantile_interval(h: &Histogram<u64>, quantile: f64) -> Option<(u64, u64)> {
    if h.is_empty() {
        return None;
    }
    let n = h.len() as f64;
    let half = 1.96 * (quantile * (1.0 - quantile) / n).sqrt();
    let lo = (quantile - half).max(0.0);
    let hi = (quantile + half).min(1.0);
    Some((h.value_at_quantile(lo), h.value_at_quantile(hi)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided p-values from standard t tables.
        let table = [
            (0.0, 10.0, 1.0),
            (2.228, 10.0, 0.05),
            (3.169, 10.0, 0.01),
            (1.96, 1e6, 0.05),
            (12.706, 1.0, 0.05),
            (2.045, 29.0, 0.05),
            (-2.045, 29.0, 0.05),
        ];
        for (t, df, want) in table {
            let p = student_t_two_sided(t, df);
            assert!(close(p, want, 5e-4), "t={t} df={df}: p={p}, want {want}");
        }
    }

    #[test]
    fn ln_gamma_of_small_integers_is_ln_factorial() {
        let mut fact = 1.0f64;
        for n in 1..15 {
            assert!(close(ln_gamma(n as f64), fact.ln(), 1e-10), "Γ({n})");
            fact *= n as f64;
        }
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }

    #[test]
    fn welch_on_a_textbook_example() {
        // Two samples with different spreads; t and df by hand, p by numerical integration of
        // the t density.
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&a, &b).unwrap();
        assert!(close(w.t, 2.4554, 1e-3), "t {}", w.t);
        assert!(close(w.df, 24.988, 1e-2), "df {}", w.df);
        assert!(close(w.p, 0.02138, 1e-4), "p {}", w.p);
    }

    #[test]
    fn identical_and_constant_samples() {
        let a = [300.0, 300.0, 300.0];
        assert_eq!(welch(&a, &a).unwrap().p, 1.0);
        assert_eq!(welch(&a, &[310.0, 310.0, 310.0]).unwrap().p, 0.0);
        let noisy = [1.0, 5.0, 2.0, 8.0];
        assert_eq!(welch(&noisy, &noisy).unwrap().p, 1.0);
        assert!(welch(&[1.0], &noisy).is_none());
    }

    #[test]
    fn quantile_interval_narrows_with_more_samples() {
        let mut small = herd_metrics::new_histogram();
        let mut large = herd_metrics::new_histogram();
        for v in 1..=100u64 {
            small.record(v * 10).unwrap();
            large.record_n(v * 10, 100).unwrap();
        }
        let (slo, shi) = quantile_interval(&small, 0.5).unwrap();
        let (llo, lhi) = quantile_interval(&large, 0.5).unwrap();
        assert!(slo < 500 && shi > 500, "{slo}..{shi}");
        assert!(
            llo >= slo && lhi <= shi && lhi - llo < shi - slo,
            "{llo}..{lhi}"
        );
        assert!(quantile_interval(&herd_metrics::new_histogram(), 0.5).is_none());
    }
}
