//! Popularity of ids: a Zipf exponent fitted to the counts by maximum likelihood (ranks by
//! observed frequency, n = distinct ids seen), and how well it fits: the largest gap between the
//! observed and the fitted cumulative share over ranks (a Kolmogorov-Smirnov distance).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZipfFit {
    /// The exponent s: id of rank k is requested in proportion to 1/k^s.
    pub s: f64,
    /// Distinct ids the fit covers.
    pub n: u64,
    /// Largest gap between observed and fitted cumulative shares (0 = perfect).
    pub ks: f64,
    /// `good` (ks < 0.05), `fair` (< 0.1) or `poor`.
    pub fit: String,
}

/// Fits counts (any order); `None` with fewer than 3 distinct ids or 10 requests.
pub fn fit(counts: &mut [u64]) -> Option<ZipfFit> {
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().sum();
    if counts.len() < 3 || total < 10 {
        return None;
    }
    let ln: Vec<f64> = (1..=counts.len()).map(|r| (r as f64).ln()).collect();
    let mean_ln = counts
        .iter()
        .zip(&ln)
        .map(|(c, l)| *c as f64 * l)
        .sum::<f64>()
        / total as f64;
    // the model's mean of ln(rank) falls as s grows: bisect for the one observed
    let model_mean = |s: f64| {
        let (mut num, mut den) = (0.0, 0.0);
        for l in &ln {
            let w = (-s * l).exp();
            num += w * l;
            den += w;
        }
        num / den
    };
    let (mut lo, mut hi) = (0.0f64, 8.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if model_mean(mid) > mean_ln {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let s = (lo + hi) / 2.0;
    let norm: f64 = ln.iter().map(|l| (-s * l).exp()).sum();
    let (mut obs, mut fitted, mut ks) = (0.0f64, 0.0f64, 0.0f64);
    for (c, l) in counts.iter().zip(&ln) {
        obs += *c as f64 / total as f64;
        fitted += (-s * l).exp() / norm;
        ks = ks.max((obs - fitted).abs());
    }
    let fit = if ks < 0.05 {
        "good"
    } else if ks < 0.1 {
        "fair"
    } else {
        "poor"
    };
    Some(ZipfFit {
        s: (s * 1000.0).round() / 1000.0,
        n: counts.len() as u64,
        ks: (ks * 10000.0).round() / 10000.0,
        fit: fit.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_zipf_counts_give_their_exponent() {
        let mut counts: Vec<u64> = (1..=500)
            .map(|k| (1e6 / (k as f64).powf(1.2)) as u64)
            .collect();
        let f = fit(&mut counts).unwrap();
        assert!((f.s - 1.2).abs() < 0.01, "{f:?}");
        assert_eq!(f.fit, "good");
    }

    #[test]
    fn uniform_counts_fit_near_zero() {
        let mut counts = vec![100u64; 50];
        assert!(fit(&mut counts).unwrap().s < 0.01);
        assert!(fit(&mut [1, 2]).is_none());
    }
}
