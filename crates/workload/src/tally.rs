//! What the workload counts beside the engine's per-request stats: iterations and their
//! durations per scenario, passes and fails per check. Each worker thread keeps its own tally
//! (no locks on the hot path) and hands it back from `Script::finish`; the engine adds them up
//! with the rest of the run's output.

use herd_engine::ScriptSecond;
use herd_metrics::CompactHistogram;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct ScenarioTally {
    pub iterations: u64,
    /// Iteration durations in microseconds, think times included. Compact: a workload may have
    /// thousands of scenarios, and a dense histogram each made `herd validate` of 20,000 of them
    /// take 3.7 GB.
    pub duration: CompactHistogram,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckTally {
    pub passes: u64,
    pub fails: u64,
    /// The first failure's message.
    pub sample: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub scenarios: Vec<ScenarioTally>,
    pub checks: Vec<CheckTally>,
    /// The same counts since the worker last closed a second (`Script::take_second`).
    pub second: ScriptSecond,
    /// Errors of the `script:`'s functions (the run's `lua` error class) and the first message.
    pub lua_errors: u64,
    pub lua_sample: Option<String>,
}

impl Tally {
    pub fn new(scenarios: usize, checks: usize) -> Self {
        Tally {
            scenarios: (0..scenarios)
                .map(|_| ScenarioTally {
                    iterations: 0,
                    duration: CompactHistogram::new(),
                })
                .collect(),
            checks: vec![CheckTally::default(); checks],
            second: ScriptSecond::default(),
            lua_errors: 0,
            lua_sample: None,
        }
    }

    pub fn lua_error(&mut self, message: &str) {
        self.lua_errors += 1;
        if self.lua_sample.is_none() {
            self.lua_sample = Some(message.to_owned());
        }
    }

    pub fn iteration(&mut self, scenario: usize, took: Duration) {
        let s = &mut self.scenarios[scenario];
        s.iterations += 1;
        self.second.iteration(scenario as u32);
        s.duration.saturating_record(took.as_micros() as u64);
    }

    pub fn check(&mut self, check: usize, passed: bool, message: impl FnOnce() -> String) {
        self.second.check(check as u32, passed);
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

    /// Bytes this tally holds: it grows with iterations recorded, not with the number of
    /// scenarios.
    pub fn held_bytes(&self) -> usize {
        let scenario = std::mem::size_of::<ScenarioTally>();
        self.scenarios
            .iter()
            .map(|s| scenario + s.duration.heap_bytes())
            .sum::<usize>()
            + self.checks.len() * std::mem::size_of::<CheckTally>()
    }

    pub fn merge(&mut self, other: &Tally) {
        for (a, b) in self.scenarios.iter_mut().zip(&other.scenarios) {
            a.iterations += b.iterations;
            a.duration.add(&b.duration);
        }
        for (a, b) in self.checks.iter_mut().zip(&other.checks) {
            a.passes += b.passes;
            a.fails += b.fails;
            if a.sample.is_none() {
                a.sample.clone_from(&b.sample);
            }
        }
        self.lua_errors += other.lua_errors;
        if self.lua_sample.is_none() {
            self.lua_sample.clone_from(&other.lua_sample);
        }
    }
}

impl herd_engine::ScriptReport for Tally {
    fn merge(&mut self, other: Tally) {
        // The engine starts from `Tally::default()`, which has no scenarios to add into.
        if self.scenarios.is_empty() && self.checks.is_empty() {
            *self = other;
        } else {
            Tally::merge(self, &other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_of_20000_scenarios_holds_kilobytes_not_gigabytes() {
        let mut t = Tally::new(20_000, 0);
        assert!(t.held_bytes() <= 20_000 * 48, "{}", t.held_bytes());
        for s in 0..20_000 {
            t.iteration(s, Duration::from_millis(5));
        }
        assert!(t.held_bytes() <= 20_000 * 64, "{}", t.held_bytes());
        let mut all = Tally::new(20_000, 0);
        all.merge(&t);
        assert_eq!(all.scenarios[19_999].duration.len(), 1);
    }
}
