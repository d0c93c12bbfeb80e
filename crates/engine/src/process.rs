//! How the open model's arrivals are spaced around the plan's rate (httperf's `--period d|e|u`):
//! evenly, as a Poisson process (exponential gaps) or with gaps uniform on [0, 2/rate].
//!
//! Every process is written in *work*: arrival `n` falls when the integral of the rate reaches
//! `work(n)` (n itself when even, a sum of seeded random gaps of mean 1 otherwise), so stages
//! ramp a Poisson process as they ramp an even one. Gap `i` is a pure function of the seed and
//! `i` (a counter-based generator, no stream state), and the sums are integers (2^-32 of a mean
//! gap), so every thread and every shard computes bit for bit the same instant for arrival `n`
//! whatever order it asks in: a Poisson plan split into shards is exactly the single plan.

use std::cell::RefCell;

/// The seed a run uses when none is given: fixed, so two runs of the same plan send at the
/// same instants.
pub const DEFAULT_SEED: u64 = 1;

/// How arrivals are spaced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Process {
    /// Evenly: arrival `n` at `n / rate` (wrk2, vegeta).
    #[default]
    Constant,
    /// A Poisson process: independent exponential gaps of mean `1 / rate`.
    Poisson,
    /// Independent gaps uniform on `[0, 2 / rate]`.
    Uniform,
}

impl Process {
    pub fn name(self) -> &'static str {
        match self {
            Process::Constant => "constant",
            Process::Poisson => "poisson",
            Process::Uniform => "uniform",
        }
    }

    /// The process a user names (`--arrivals`, a workload's `arrivals:`).
    pub fn parse(s: &str) -> Option<Process> {
        match s {
            "constant" => Some(Process::Constant),
            "poisson" => Some(Process::Poisson),
            "uniform" => Some(Process::Uniform),
            _ => None,
        }
    }
}

/// One mean gap in the integer sums.
const UNIT: f64 = (1u64 << 32) as f64;
/// A prefix sum is kept every this many arrivals, so a jump back costs at most this many gaps.
const CHECKPOINT: u64 = 1 << 16;

/// The work of each arrival of a random process, remembered where a thread last asked (and
/// every [`CHECKPOINT`] arrivals) so a thread walking its arrivals in order pays one gap each.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    process: Process,
    seed: u64,
    memo: RefCell<Memo>,
}

#[derive(Clone, Debug, Default)]
struct Memo {
    /// The last arrival asked for and its work.
    index: u64,
    sum: u128,
    /// `checkpoints[k]` is the work of arrival `k * CHECKPOINT`.
    checkpoints: Vec<u128>,
}

impl PartialEq for Work {
    fn eq(&self, other: &Self) -> bool {
        (self.process, self.seed) == (other.process, other.seed)
    }
}

impl Work {
    /// `None` for the even process, whose work is the index itself.
    pub fn new(process: Process, seed: u64) -> Option<Work> {
        (process != Process::Constant).then(|| Work {
            process,
            seed,
            memo: RefCell::new(Memo {
                checkpoints: vec![0],
                ..Memo::default()
            }),
        })
    }

    /// Gap `i` (between arrivals `i` and `i + 1`) in units of 2^-32 mean gaps.
    fn gap(&self, i: u64) -> u128 {
        let r = splitmix64(self.seed ^ splitmix64(i));
        match self.process {
            Process::Constant => 1 << 32,
            // 33 random bits: uniform on [0, 2) mean gaps, exactly.
            Process::Uniform => u128::from(r >> 31),
            Process::Poisson => {
                // u in (0, 1]: -ln(u) is exponential with mean 1, never infinite.
                let u = ((r >> 11) + 1) as f64 / (1u64 << 53) as f64;
                (-u.ln() * UNIT).round() as u128
            }
        }
    }

    /// The work at which arrival `n` falls, in mean gaps.
    pub fn at(&self, n: u64) -> f64 {
        let mut m = self.memo.borrow_mut();
        // Walk from the nearer of the last position and the checkpoint below `n`.
        let k = (n / CHECKPOINT) as usize;
        if k < m.checkpoints.len() && n.abs_diff(k as u64 * CHECKPOINT) < n.abs_diff(m.index) {
            m.index = k as u64 * CHECKPOINT;
            m.sum = m.checkpoints[k];
        }
        while m.index > n {
            m.index -= 1;
            m.sum -= self.gap(m.index);
        }
        while m.index < n {
            m.sum += self.gap(m.index);
            m.index += 1;
            if m.index.is_multiple_of(CHECKPOINT)
                && (m.index / CHECKPOINT) as usize == m.checkpoints.len()
            {
                let sum = m.sum;
                m.checkpoints.push(sum);
            }
        }
        m.sum as f64 / UNIT
    }
}

pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_the_same_whatever_order_it_is_asked_in() {
        let w = Work::new(Process::Poisson, 7).unwrap();
        let indices: Vec<u64> = (0..200_000).step_by(997).collect();
        let forward: Vec<f64> = indices.iter().map(|n| w.at(*n)).collect();
        let fresh = Work::new(Process::Poisson, 7).unwrap();
        let backward: Vec<f64> = indices.iter().rev().map(|n| fresh.at(*n)).collect();
        assert!(forward.iter().eq(backward.iter().rev()));
        assert_eq!(w.at(0), 0.0);
    }

    #[test]
    fn gaps_have_mean_one_and_the_spread_of_their_process() {
        // Exponential gaps: coefficient of variation 1; uniform on [0, 2): 1/sqrt(3).
        for (process, cv) in [(Process::Poisson, 1.0), (Process::Uniform, 0.577)] {
            let w = Work::new(process, 3).unwrap();
            let n = 100_000;
            let gaps: Vec<f64> = (0..n).map(|i| w.at(i + 1) - w.at(i)).collect();
            let mean = gaps.iter().sum::<f64>() / n as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
            assert!((mean - 1.0).abs() < 0.01, "{process:?}: mean {mean}");
            assert!((var.sqrt() / mean - cv).abs() < 0.01, "{process:?}");
        }
    }

    #[test]
    fn another_seed_is_another_sequence() {
        let a = Work::new(Process::Poisson, 1).unwrap();
        let b = Work::new(Process::Poisson, 2).unwrap();
        assert_ne!(a.at(10), b.at(10));
        assert_eq!(a.at(10), Work::new(Process::Poisson, 1).unwrap().at(10));
    }
}
