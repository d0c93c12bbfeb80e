//! The saturation tracker: applies a sweep's stop rule step by step and says when every target
//! has been past saturation long enough to stop.

use herd_result::capacity::Measured;
use herd_result::sweep::{Row, StopRule};
use herd_result::GeneratorVerdict;

/// Follows the steps of a sweep and says when to stop.
#[derive(Clone, Debug)]
pub struct Saturation {
    rule: StopRule,
    streak: Vec<u32>,
}

impl Saturation {
    pub fn new(rule: StopRule, targets: usize) -> Self {
        Saturation {
            rule,
            streak: vec![0; targets],
        }
    }

    /// Takes one step's rows (one per target) and what an SLO reads of each target's run (its
    /// event streams' figures), and returns why to stop, if it is time.
    ///
    /// A step where herd itself was the bottleneck says nothing about the server: it neither
    /// extends nor breaks a streak.
    pub fn observe(&mut self, rows: &[Row], runs: &[Measured]) -> Option<String> {
        let mut reasons = Vec::new();
        for ((streak, row), run) in self.streak.iter_mut().zip(rows).zip(runs) {
            let limited = row
                .extra
                .as_ref()
                .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited);
            if limited {
                continue;
            }
            match self.rule.breach(row, run) {
                Some(why) => {
                    *streak += 1;
                    reasons.push(why);
                }
                None => *streak = 0,
            }
        }
        let n = self.rule.consecutive.max(1);
        let all = !self.streak.is_empty() && self.streak.iter().all(|s| *s >= n);
        all.then(|| {
            format!(
                "every target broke the stop rule for {n} steps in a row ({})",
                reasons.join("; ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_result::sweep::Extra;

    fn row(errors: f64, p99: f64, generator: GeneratorVerdict) -> Row {
        Row {
            errors,
            extra: Some(Extra {
                p50: 1.0,
                p95: 1.0,
                p99,
                p999: p99,
                ok: 1,
                failed: 0,
                generator,
            }),
            ..Row::default()
        }
    }

    #[test]
    fn sweep_stops_after_two_bad_steps_in_a_row_for_every_target() {
        use GeneratorVerdict::{GeneratorLimited as Lim, Ok};
        let rule = StopRule {
            max_error_percent: Some(5.0),
            max_p99_ms: Some(100.0),
            consecutive: 2,
            ..StopRule::default()
        };
        // (rows of a step per target, stop after this step?)
        type Step<'a> = (&'a [(f64, f64, GeneratorVerdict)], bool);
        let table: &[Step] = &[
            (&[(0.0, 10.0, Ok), (0.0, 10.0, Ok)], false),
            (&[(6.0, 10.0, Ok), (0.0, 10.0, Ok)], false),
            (&[(0.0, 10.0, Ok), (0.0, 200.0, Ok)], false), // a hiccup breaks A's streak
            (&[(9.0, 10.0, Ok), (0.0, 300.0, Ok)], false), // B: 2 in a row, A: 1
            (&[(9.0, 10.0, Lim), (0.0, 300.0, Ok)], false), // A's limited step does not count
            (&[(9.0, 10.0, Ok), (1.0, 10.0, Ok)], false),  // A: 2, B recovered
            (&[(9.0, 10.0, Ok), (50.0, 10.0, Ok)], false), // B: 1
            (&[(9.0, 10.0, Ok), (50.0, 10.0, Ok)], true),
        ];
        let mut s = Saturation::new(rule, 2);
        for (i, (rows, stop)) in table.iter().enumerate() {
            let rows: Vec<Row> = rows.iter().map(|&(e, p, g)| row(e, p, g)).collect();
            let runs = vec![Measured::default(); rows.len()];
            let got = s.observe(&rows, &runs);
            assert_eq!(got.is_some(), *stop, "step {i}: {got:?}");
        }
    }
}
