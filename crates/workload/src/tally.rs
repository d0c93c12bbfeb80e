//! What the workload counts beside the engine's per-request stats: iterations and their
//! durations per scenario, passes and fails per check. Each worker thread keeps its own tally
//! (no locks on the hot path) and adds it to the shared one when its script is dropped at the
//! end of the run.

use hdrhistogram::Histogram;
use herd_metrics::new_histogram;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct ScenarioTally {
    pub iterations: u64,
    /// Iteration durations in microseconds, think times included.
    pub duration: Histogram<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckTally {
    pub passes: u64,
    pub fails: u64,
    /// The first failure's message.
    pub sample: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Tally {
    pub scenarios: Vec<ScenarioTally>,
    pub checks: Vec<CheckTally>,
}

impl Tally {
    pub fn new(scenarios: usize, checks: usize) -> Self {
        Tally {
            scenarios: (0..scenarios)
                .map(|_| ScenarioTally {
                    iterations: 0,
                    duration: new_histogram(),
                })
                .collect(),
            checks: vec![CheckTally::default(); checks],
        }
    }

    pub fn iteration(&mut self, scenario: usize, took: Duration) {
        let s = &mut self.scenarios[scenario];
        s.iterations += 1;
        s.duration
            .saturating_record((took.as_micros() as u64).clamp(1, herd_metrics::HISTOGRAM_MAX_US));
    }

    pub fn check(&mut self, check: usize, passed: bool, message: impl FnOnce() -> String) {
        let c = &mut self.checks[check];
        if passed {
            c.passes += 1;
        } else {
            c.fails += 1;
            if c.sample.is_none() {
                c.sample = Some(message());
            }
        }
    }

    pub fn merge(&mut self, other: &Tally) {
        for (a, b) in self.scenarios.iter_mut().zip(&other.scenarios) {
            a.iterations += b.iterations;
            let _ = a.duration.add(&b.duration);
        }
        for (a, b) in self.checks.iter_mut().zip(&other.checks) {
            a.passes += b.passes;
            a.fails += b.fails;
            if a.sample.is_none() {
                a.sample.clone_from(&b.sample);
            }
        }
    }
}
