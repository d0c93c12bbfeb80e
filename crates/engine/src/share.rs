//! What a second's record carries besides its outcomes and the generator's health: the load the
//! plan put on the workers (arrivals dropped, exchanges in flight) and the script's own counts
//! (iterations per scenario, checks passed and failed). Each worker hands its share over at the
//! tick that closes the second, beside its health; the collector adds the shares up.

use std::collections::BTreeMap;

/// What a script counted in one second: iterations ended per scenario and checks per check,
/// sparse (only what happened), sorted by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptSecond {
    /// (scenario index, iterations ended).
    pub iterations: Vec<(u32, u64)>,
    /// (check index, passes, fails).
    pub checks: Vec<(u32, u64, u64)>,
}

impl ScriptSecond {
    pub fn iteration(&mut self, scenario: u32) {
        self.add_iterations(scenario, 1);
    }

    fn add_iterations(&mut self, scenario: u32, n: u64) {
        let i = match self.iterations.binary_search_by_key(&scenario, |e| e.0) {
            Ok(i) => i,
            Err(i) => {
                self.iterations.insert(i, (scenario, 0));
                i
            }
        };
        self.iterations[i].1 += n;
    }

    pub fn check(&mut self, check: u32, passed: bool) {
        self.add_check(check, u64::from(passed), u64::from(!passed));
    }

    fn add_check(&mut self, check: u32, passes: u64, fails: u64) {
        let i = match self.checks.binary_search_by_key(&check, |e| e.0) {
            Ok(i) => i,
            Err(i) => {
                self.checks.insert(i, (check, 0, 0));
                i
            }
        };
        self.checks[i].1 += passes;
        self.checks[i].2 += fails;
    }

    pub fn merge(&mut self, other: &ScriptSecond) {
        for &(s, n) in &other.iterations {
            self.add_iterations(s, n);
        }
        for &(c, p, f) in &other.checks {
            self.add_check(c, p, f);
        }
    }

    pub fn checks_passed(&self) -> u64 {
        self.checks.iter().map(|c| c.1).sum()
    }

    pub fn checks_failed(&self) -> u64 {
        self.checks.iter().map(|c| c.2).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.iterations.is_empty() && self.checks.is_empty()
    }
}

/// The load of one second, all workers together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecondLoad {
    /// Requests the plan asked for that ended in this second or were dropped in it: the
    /// second's outcomes plus its drops (the run's `scheduled` total, second by second).
    pub scheduled: u64,
    /// Arrivals of the open model dropped in this second: every user busy and the queue full.
    pub dropped: u64,
    /// Exchanges started and not ended when the second closed.
    pub in_flight: u64,
}

/// One worker's share of one second.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ThreadShare {
    pub index: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub script: ScriptSecond,
}

/// The collector's side: every worker's shares, added up by second.
#[derive(Debug, Default)]
pub(crate) struct Shares {
    seconds: BTreeMap<u64, (SecondLoad, ScriptSecond)>,
    /// Seconds below this one are handed out already.
    taken_below: u64,
}

impl Shares {
    pub fn add(&mut self, s: &ThreadShare) {
        // A share late for its second (a worker that ended without a tick in it) folds into
        // the first second not handed out: counted late, never lost.
        let index = s.index.max(self.taken_below);
        let (load, script) = self.seconds.entry(index).or_default();
        load.dropped += s.dropped;
        load.in_flight += s.in_flight;
        script.merge(&s.script);
    }

    /// Folds the shares of seconds after `last` into it, as the timeline folds answers that
    /// came after the measured window into its last second.
    pub fn fold_after(&mut self, last: u64) {
        let later = self.seconds.split_off(&(last + 1));
        for (_, (load, script)) in later {
            let (l, s) = self.seconds.entry(last).or_default();
            l.dropped += load.dropped;
            l.in_flight = load.in_flight;
            s.merge(&script);
        }
    }

    /// Second `index`'s shares, handed out once (a record is made once).
    pub fn take(&mut self, index: u64) -> (SecondLoad, ScriptSecond) {
        self.taken_below = self.taken_below.max(index + 1);
        self.seconds.remove(&index).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_one_second_add_up_across_workers() {
        let mut a = ScriptSecond::default();
        a.iteration(2);
        a.iteration(0);
        a.iteration(2);
        a.check(5, true);
        a.check(5, false);
        let mut b = ScriptSecond::default();
        b.iteration(2);
        b.check(1, true);
        let mut shares = Shares::default();
        for (script, dropped) in [(a, 3), (b, 4)] {
            shares.add(&ThreadShare {
                index: 7,
                dropped,
                in_flight: 10,
                script,
            });
        }
        let (load, script) = shares.take(7);
        assert_eq!((load.dropped, load.in_flight), (7, 20));
        assert_eq!(script.iterations, vec![(0, 1), (2, 3)]);
        assert_eq!(script.checks, vec![(1, 1, 0), (5, 1, 1)]);
        assert_eq!((script.checks_passed(), script.checks_failed()), (2, 1));
        assert_eq!(shares.take(7), Default::default());
        shares.add(&ThreadShare {
            index: 3,
            dropped: 5,
            ..ThreadShare::default()
        });
        assert_eq!(shares.take(8).0.dropped, 5, "late, not lost");
    }
}
