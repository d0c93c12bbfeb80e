//! The capacity search as a pure object: it says which level to probe next and for how long,
//! takes what the probe measured, and ends with an answer or an honest "cannot decide". No
//! clock, no network: tested as tables of synthetic probe results.
//!
//! 1. Ramp: double the level from `start` until the SLO breaks (halve it if it breaks at once).
//! 2. Narrow: bisect between the highest level that held and the lowest that broke, until they
//!    are within `precision` of each other.
//! 3. Confirm: probe the answer again, twice as long. Held: that is the answer. Broke: the
//!    results contradict each other; narrow once more below it, and a second contradiction
//!    means the target is too noisy to answer for.
//!
//! A probe with too few requests to judge (see [`super::evidence`]) is run again, longer, up to
//! `longest`; still too few, the search ends without a number rather than judge on luck.
//!
//! A probe where herd itself was the bottleneck is run again (the machine may have been busy
//! for a moment); limited three times in a row, the search ends without a number: what it
//! measured is herd, not the target.

use super::evidence::SloEvidence;
pub use herd_result::capacity::{Judged, Probe};
use herd_result::capacity::{Measured, Purpose, Shortfall, Slo, Undecided};
use std::time::Duration;

/// A probe where herd was the bottleneck is repeated this many times before the search gives up.
pub const GENERATOR_RETRIES: usize = 2;

#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    pub slo: Slo,
    /// First level probed.
    pub start: f64,
    /// Never probe above this (`--max`).
    pub max: f64,
    /// Never probe below this.
    pub min: f64,
    /// Stop narrowing when the highest level that held and the lowest that broke are within
    /// this share of each other (0.05 = 5%).
    pub precision: f64,
    /// At most this many probes, confirmations included.
    pub max_probes: usize,
    /// A probe's length.
    pub probe: Duration,
    /// Open model: a probe lasts long enough for this many requests (or the SLO's own minimum,
    /// whichever is more, up to `longest`), so a low rate still yields enough requests to judge
    /// a p99 or an error share.
    pub min_requests: u64,
    /// The longest a probe may be made to get enough requests.
    pub longest: Duration,
    /// Closed model: levels are whole users.
    pub users: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Probe(Probe),
    /// The highest level within the SLO (0 when even `min` broke it), and the lowest level
    /// seen to break it.
    Done {
        level: f64,
        ceiling: Option<f64>,
    },
    Undecided(Undecided),
}

#[derive(Clone, Debug)]
pub struct Search {
    cfg: SearchConfig,
    /// Highest level that held / lowest that broke, as far as the search now believes.
    lo: Option<f64>,
    hi: Option<f64>,
    pending: Option<Probe>,
    contradictions: u32,
    history: Vec<Judged>,
    ended: Option<Action>,
}

impl Search {
    pub fn new(cfg: SearchConfig) -> Self {
        Search {
            cfg,
            lo: None,
            hi: None,
            pending: None,
            contradictions: 0,
            history: Vec::new(),
            ended: None,
        }
    }

    /// Every probe judged so far, in order.
    pub fn history(&self) -> &[Judged] {
        &self.history
    }

    /// Call with `None` first, then with what each probe asked for measured. Once it returns
    /// `Done` or `Undecided` it keeps returning that.
    pub fn next(&mut self, last: Option<&Measured>) -> Action {
        if let Some(end) = &self.ended {
            return end.clone();
        }
        let action = match (self.pending.take(), last) {
            (Some(p), Some(m)) => self.judge(p, m),
            (Some(p), None) => Action::Probe(p), // asked again without a result: same probe
            (None, _) => self.plan(),
        };
        match &action {
            Action::Probe(p) => self.pending = Some(p.clone()),
            end => self.ended = Some(end.clone()),
        }
        action
    }

    fn judge(&mut self, probe: Probe, m: &Measured) -> Action {
        let (broke, too_few) = self.cfg.slo.judge(m);
        let j = Judged {
            broke,
            generator_limited: m.generator_limited.clone(),
            too_few,
            probe,
        };
        let (level, purpose, held) = (j.probe.level, j.probe.purpose, j.held());
        let limited = j.generator_limited.clone();
        // Limited probes in a row at this level, this one included.
        let streak = 1 + self
            .history
            .iter()
            .rev()
            .take_while(|h| h.probe.level == level && !h.generator_limited.is_empty())
            .count();
        let probe = j.probe.clone();
        self.history.push(j);
        if !limited.is_empty() {
            if streak > GENERATOR_RETRIES || self.history.len() >= self.cfg.max_probes {
                return Action::Undecided(Undecided::GeneratorLimited {
                    level,
                    reasons: limited,
                    at_least: self.lo,
                });
            }
            // Something else on the machine may have stolen herd's CPU for a moment.
            return Action::Probe(probe);
        }
        if let Some(short) = too_few {
            return self.lengthen(probe, short);
        }
        match (purpose, held) {
            (Purpose::Confirm, true) => {
                return Action::Done {
                    level,
                    ceiling: self.hi,
                }
            }
            (Purpose::Confirm, false) => {
                self.contradictions += 1;
                if self.contradictions >= 2 {
                    return Action::Undecided(Undecided::Noisy { level });
                }
                // Believe the worse news, and look again below it.
                self.hi = Some(level);
                self.lo = self
                    .history
                    .iter()
                    .filter(|h| h.held() && h.probe.level < level)
                    .map(|h| h.probe.level)
                    .reduce(f64::max);
            }
            (_, true) => self.lo = Some(level),
            (_, false) => self.hi = Some(level),
        }
        self.plan()
    }

    /// The same probe again, long enough for the requests a verdict needs, or the end when it
    /// may not be made longer.
    fn lengthen(&self, probe: Probe, short: Shortfall) -> Action {
        let longest = self.cfg.longest.max(self.cfg.probe);
        if probe.duration >= longest && self.hi.is_none() && probe.level < self.cfg.max {
            // Nothing broke yet: a higher level yields the requests this one could not, and
            // the ramp goes up anyway. Giving up at a low first level would leave unjudged what
            // the next level judges.
            return self.ramp_past(&probe, short);
        }
        if probe.duration >= longest {
            return Action::Undecided(Undecided::TooFewRequests {
                level: probe.level,
                have: short.have,
                need: short.need,
            });
        }
        if self.history.len() >= self.cfg.max_probes {
            return Action::Undecided(Undecided::OutOfProbes {
                held: self.lo,
                broke: self.hi,
            });
        }
        // A fifth more than the shortfall asks, since a rate is never exactly kept; at least
        // twice as long, so a search that keeps falling short ends soon.
        let factor = (1.2 * short.need as f64 / short.have.max(1) as f64).max(2.0);
        Action::Probe(Probe {
            duration: probe.duration.mul_f64(factor).min(longest),
            ..probe
        })
    }

    /// A ramp probe above `probe`, high enough that its longest probe gets the requests `short`
    /// says a verdict needs (a fifth more, since a rate is never exactly kept), and at least
    /// twice `probe`'s level, as the ramp goes.
    fn ramp_past(&self, probe: &Probe, short: Shortfall) -> Action {
        if self.history.len() >= self.cfg.max_probes {
            return Action::Undecided(Undecided::OutOfProbes {
                held: self.lo,
                broke: self.hi,
            });
        }
        let longest = self.cfg.longest.max(self.cfg.probe);
        let per_level_second =
            short.have as f64 / (probe.level * probe.duration.as_secs_f64()).max(1e-9);
        let enough = 1.2 * short.need as f64 / (per_level_second * longest.as_secs_f64()).max(1e-9);
        let level = self.clamp(enough.max(probe.level * 2.0));
        let duration = if self.cfg.users {
            longest
        } else {
            self.duration_for(level, true)
        };
        Action::Probe(Probe {
            level,
            duration,
            purpose: Purpose::Ramp,
        })
    }

    /// The next probe from what is believed now.
    fn plan(&mut self) -> Action {
        if self.history.len() >= self.cfg.max_probes {
            return Action::Undecided(Undecided::OutOfProbes {
                held: self.lo,
                broke: self.hi,
            });
        }
        let c = &self.cfg;
        let (level, purpose) = match (self.lo, self.hi) {
            (None, None) => (self.clamp(c.start), Purpose::Ramp),
            (Some(lo), None) => {
                if lo >= c.max {
                    return Action::Undecided(Undecided::NeverBroke { at_least: lo });
                }
                (self.clamp(lo * 2.0), Purpose::Ramp)
            }
            (None, Some(hi)) => {
                if hi <= c.min {
                    return Action::Done {
                        level: 0.0,
                        ceiling: Some(hi),
                    };
                }
                (self.clamp(hi / 2.0), Purpose::Ramp)
            }
            (Some(lo), Some(hi)) => {
                let close = if c.users {
                    hi - lo <= 1.0 || hi <= lo * (1.0 + c.precision)
                } else {
                    hi <= lo * (1.0 + c.precision)
                };
                if close {
                    (lo, Purpose::Confirm)
                } else {
                    let mid = if c.users {
                        ((lo + hi) / 2.0).floor()
                    } else {
                        (lo + hi) / 2.0
                    };
                    (mid, Purpose::Narrow)
                }
            }
        };
        // Below a level that broke, the SLO is expected to break again, which takes far fewer
        // requests to show: those probes start short and are lengthened if they hold.
        let expect_hold = !matches!((self.lo, self.hi), (None, Some(_)));
        let base = self.duration_for(level, expect_hold);
        let duration = if purpose == Purpose::Confirm {
            base * 2
        } else {
            base
        };
        Action::Probe(Probe {
            level,
            duration,
            purpose,
        })
    }

    fn clamp(&self, level: f64) -> f64 {
        let l = level.clamp(self.cfg.min, self.cfg.max);
        if self.cfg.users {
            l.round().max(1.0)
        } else {
            l
        }
    }

    fn duration_for(&self, level: f64, expect_hold: bool) -> Duration {
        let c = &self.cfg;
        if c.users || level <= 0.0 || !expect_hold {
            return c.probe;
        }
        let need = c.min_requests.max(c.slo.min_requests());
        let enough = Duration::from_secs_f64(need as f64 / level);
        c.probe.max(enough.min(c.longest))
    }
}

#[cfg(test)]
mod tests;
