//! Change points in a metric over runs: E-Divisive means (Matteson and James, 2014) as Apache
//! Otava (ex hunter) finds them, with a seeded permutation test of each split, and no change
//! smaller than the runs' own noise.
//!
//! The series is split where the energy distance between the runs before and after is
//! largest; the split stands when fewer than `alpha` of random reorderings of the same runs
//! give as large a one (so the answer is the same on every call: the shuffles are seeded);
//! each side is then searched again. A split must leave at least `min_runs` runs on each side,
//! so one noisy run is never a change, and the difference of the two levels must exceed
//! `noise_z` times what the runs' own per-second noise (each run's standard error, from its
//! timeline) lets it be.

pub use crate::query::Point;
use crate::query::RunRow;
use rand::{rngs::SmallRng, seq::SliceRandom, SeedableRng};

/// Where the level changed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    /// The position of the first run of the new level in the series.
    pub index: usize,
    /// That run.
    pub run: RunRow,
    /// The mean level of the runs since the previous change, and up to the next.
    pub before: f64,
    pub after: f64,
    /// `after / before - 1`.
    pub size: f64,
    /// The permutation test's p-value, and `1 - p`.
    pub p: f64,
    pub confidence: f64,
}

/// How [`detect`] judges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// A split stands when its p-value is below this.
    pub alpha: f64,
    pub permutations: usize,
    pub seed: u64,
    /// Runs on each side of a change, at least.
    pub min_runs: usize,
    /// How many standard errors (from the runs' own noise) the levels must differ by.
    pub noise_z: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.01,
            permutations: 499,
            seed: 1,
            min_runs: 3,
            noise_z: 3.0,
        }
    }
}

/// What [`detect`] found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Detection {
    pub points: Vec<Point>,
    /// In series order.
    pub changes: Vec<Change>,
}

/// The change points of `points` (oldest first).
pub fn detect(points: Vec<Point>, o: &Options) -> Detection {
    let x: Vec<f64> = points.iter().map(|p| p.value).collect();
    let mut rng = SmallRng::seed_from_u64(o.seed);
    let mut cuts: Vec<(usize, f64)> = Vec::new();
    let mut segments = vec![(0, x.len())];
    let mut refused = Vec::new();
    loop {
        // The best split of any segment not yet refused.
        let best = segments
            .iter()
            .filter(|s| !refused.contains(*s))
            .filter_map(|&(a, b)| best_split(&x[a..b], o.min_runs).map(|(t, q)| (a, b, a + t, q)))
            .max_by(|l, r| l.3.total_cmp(&r.3));
        let Some((a, b, tau, q)) = best else { break };
        let p = p_value(&x[a..b], q, o, &mut rng);
        if p >= o.alpha || !beyond_noise(&points[a..b], tau - a, o.noise_z) {
            refused.push((a, b));
            continue;
        }
        cuts.push((tau, p));
        segments.retain(|s| *s != (a, b));
        segments.push((a, tau));
        segments.push((tau, b));
    }
    cuts.sort_by_key(|c| c.0);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().map(|c| c.0))
        .chain(std::iter::once(x.len()))
        .collect();
    let changes = cuts
        .iter()
        .enumerate()
        .map(|(i, &(tau, p))| {
            let before = mean(&x[bounds[i]..tau]);
            let after = mean(&x[tau..bounds[i + 2]]);
            Change {
                index: tau,
                run: points[tau].run.clone(),
                before,
                after,
                size: if before == 0.0 {
                    0.0
                } else {
                    after / before - 1.0
                },
                p,
                confidence: 1.0 - p,
            }
        })
        .collect();
    Detection { points, changes }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// The split of `x` with the largest energy statistic (α = 1), leaving `min` on each side:
/// (the first index of the right side, the statistic). O(n²) with running sums.
fn best_split(x: &[f64], min: usize) -> Option<(usize, f64)> {
    let n = x.len();
    let min = min.max(2);
    if n < 2 * min {
        return None;
    }
    // within[i][j]: sum of |x_k - x_l| for i <= k < l < j, built from row sums.
    let d = |i: usize, j: usize| (x[i] - x[j]).abs();
    let all: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| d(i, j))
        .sum();
    // Left within-sum grows as tau moves right; right within-sum shrinks.
    let mut left = 0.0;
    let mut right = all;
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..n {
        // x[tau - 1] moves from the right side to the left.
        let k = tau - 1;
        let to_left: f64 = (0..k).map(|i| d(i, k)).sum();
        let to_right: f64 = (k + 1..n).map(|j| d(k, j)).sum();
        left += to_left;
        right -= to_right;
        if tau < min || n - tau < min {
            continue;
        }
        let (m, r) = (tau as f64, (n - tau) as f64);
        let cross = all - left - right;
        let e =
            2.0 * cross / (m * r) - left / (m * (m - 1.0) / 2.0) - right / (r * (r - 1.0) / 2.0);
        let q = m * r / (m + r) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best
}

/// The share of reorderings of `x` whose best split is at least `q` (with the observed one
/// counted, so never 0).
fn p_value(x: &[f64], q: f64, o: &Options, rng: &mut SmallRng) -> f64 {
    let mut y = x.to_vec();
    let mut as_large = 0usize;
    for _ in 0..o.permutations {
        y.shuffle(rng);
        if best_split(&y, o.min_runs).is_some_and(|(_, s)| s >= q) {
            as_large += 1;
        }
    }
    (as_large + 1) as f64 / (o.permutations + 1) as f64
}

/// Whether the two levels differ by more than `z` standard errors of their difference, each
/// side's error no smaller than its runs' own noise allows.
fn beyond_noise(points: &[Point], tau: usize, z: f64) -> bool {
    let side = |p: &[Point]| {
        let n = p.len() as f64;
        let m = p.iter().map(|p| p.value).sum::<f64>() / n;
        let spread = p.iter().map(|p| (p.value - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let own = p.iter().filter_map(|p| p.noise).map(|s| s * s).sum::<f64>()
            / (p.iter().filter(|p| p.noise.is_some()).count().max(1)) as f64;
        (m, spread.max(own) / n)
    };
    let (a, va) = side(&points[..tau]);
    let (b, vb) = side(&points[tau..]);
    (b - a).abs() > z * (va + vb).sqrt()
}
