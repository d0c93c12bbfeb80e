//! How many requests a probe needs before its verdict means something. A p99 read from 13
//! requests is the slowest of them, not a 99th percentile; a probe judged on so few passes or
//! fails by luck.
//!
//! The rule: an objective **holds** only when the probe has enough requests that
//! [`TAIL_SAMPLES`] of them are expected beyond its limit's percentile (p99: 10 / 1% = 1,000
//! requests; p99.9: 10,000; p95: 200; p50: 20), or beyond its error share (errors < 1%: 1,000).
//! It **breaks** on fewer when at least [`TAIL_SAMPLES`] requests were seen past the limit: ten
//! requests slower than the limit out of fifty is a broken p99 whatever the rest would show.
//! Anything else is too few to judge: the search probes longer, or says it cannot decide.

use herd_result::capacity::{Figure, Measured, Objective, Shortfall, Slo};

/// Requests beyond the limit that a verdict rests on.
pub const TAIL_SAMPLES: u64 = 10;

/// One objective's verdict on a probe.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Held,
    Broke(String),
    TooFew(Shortfall),
}

/// The rule for one objective of an SLO (an extension of herd-result's [`Objective`]: the rule
/// is the search's, the objective the result's).
pub trait ObjectiveEvidence {
    /// Requests a probe needs for this objective to be said to hold.
    fn min_requests(&self) -> u64;
    /// Held, broke, or too few requests to tell.
    fn verdict(&self, m: &Measured) -> Verdict;
}

impl ObjectiveEvidence for Objective {
    /// Requests a probe needs for this objective to be said to hold.
    fn min_requests(&self) -> u64 {
        let tail = match *self {
            Objective::Latency { percentile, .. } => 1.0 - percentile / 100.0,
            Objective::Errors { max_percent, .. } => max_percent / 100.0,
        };
        if tail > 0.0 {
            (TAIL_SAMPLES as f64 / tail).round() as u64
        } else {
            u64::MAX
        }
    }

    /// Held, broke, or too few requests to tell.
    fn verdict(&self, m: &Measured) -> Verdict {
        let (n, need) = (samples(self, m), self.min_requests());
        match self.broken(m) {
            Some(why) => {
                let past = past_limit(self, m);
                // A probe sized to the minimum that broke a latency limit stays broken when
                // a few of its requests got no answer: those could only add to its tail.
                if past >= TAIL_SAMPLES || n >= need || m.requests >= need {
                    Verdict::Broke(why)
                } else {
                    // Enough requests for ten past the limit at the share seen, at most `need`.
                    let enough = (n as f64 * TAIL_SAMPLES as f64 / past.max(1) as f64).ceil();
                    Verdict::TooFew(Shortfall {
                        have: n,
                        need: (enough as u64).min(need),
                    })
                }
            }
            None if n >= need => Verdict::Held,
            None if m.requests >= need && holds_without_answers(self, m) => Verdict::Held,
            None => Verdict::TooFew(Shortfall { have: n, need }),
        }
    }
}

/// The requests this objective is judged on: responses for a latency, requests asked for
/// an error share.
fn samples(o: &Objective, m: &Measured) -> u64 {
    match o {
        Objective::Latency { of, .. } => m.figure(*of).count,
        Objective::Errors { .. } => m.requests,
    }
}

/// A latency objective that holds even if every request the probe asked and got no answer
/// for (one unfinished of the 1,000 the probe was sized to) had been past the limit: a rank
/// at or above the objective's is under the limit, and enough responses sit below it to keep
/// the percentile of all the requests asked under it too.
fn holds_without_answers(o: &Objective, m: &Measured) -> bool {
    let Objective::Latency {
        percentile,
        max_ms,
        of: Figure::Latency,
        ..
    } = *o
    else {
        // An event stream's figures count events, not the requests asked.
        return false;
    };
    let s = &m.latency_ms;
    let n = s.count as f64;
    let asked = m.requests as f64;
    [
        (50.0, s.p50),
        (75.0, s.p75),
        (90.0, s.p90),
        (95.0, s.p95),
        (99.0, s.p99),
        (99.9, s.p999),
        (100.0, s.max),
    ]
    .iter()
    .filter(|(rank, v)| *rank >= percentile && *v < max_ms)
    .any(|(rank, _)| below(n, *rank) >= percentile / 100.0 * asked)
}

/// Samples at or below the `rank` percentile of `n`, at least.
fn below(n: f64, rank: f64) -> f64 {
    (rank / 100.0 * n - 1e-9).ceil().max(0.0)
}

/// Requests at or past the limit, at least: exact for errors; for a latency, a lower bound
/// read off the summary (if p90 is past the limit, so is at least a tenth of the samples:
/// the p90 is the smallest value with 90% at or below it, so the samples from it on are
/// `n - ceil(0.9 n) + 1`).
fn past_limit(o: &Objective, m: &Measured) -> u64 {
    let n = samples(o, m);
    match *o {
        Objective::Errors { .. } => (m.error_percent / 100.0 * n as f64).round() as u64,
        Objective::Latency { max_ms, of, .. } => {
            let s = m.figure(of);
            if n > 0 && s.min >= max_ms {
                return n;
            }
            let ranks = [
                (50.0, s.p50),
                (75.0, s.p75),
                (90.0, s.p90),
                (95.0, s.p95),
                (99.0, s.p99),
                (99.9, s.p999),
            ];
            match ranks.iter().find(|(_, v)| *v >= max_ms) {
                Some((rank, _)) => n + 1 - below(n as f64, *rank) as u64,
                None => u64::from(s.max >= max_ms && n > 0),
            }
        }
    }
}

/// The rule for a whole SLO: every objective's.
pub trait SloEvidence {
    /// Requests a probe needs for every objective to be said to hold.
    fn min_requests(&self) -> u64;
    /// What broke (enough seen past a limit), and, when nothing did, whether a probe had too few
    /// requests to say the SLO held.
    fn judge(&self, m: &Measured) -> (Vec<String>, Option<Shortfall>);
}

impl SloEvidence for Slo {
    /// Requests a probe needs for every objective to be said to hold.
    fn min_requests(&self) -> u64 {
        self.objectives
            .iter()
            .map(ObjectiveEvidence::min_requests)
            .max()
            .unwrap_or(0)
    }

    /// What broke (enough seen past a limit), and, when nothing did, whether a probe had too few
    /// requests to say the SLO held.
    fn judge(&self, m: &Measured) -> (Vec<String>, Option<Shortfall>) {
        let mut broke = Vec::new();
        let mut short: Option<Shortfall> = None;
        for o in &self.objectives {
            match o.verdict(m) {
                Verdict::Held => {}
                Verdict::Broke(why) => broke.push(why),
                Verdict::TooFew(s) => {
                    short = Some(match short {
                        Some(t) if t.need >= s.need => t,
                        _ => s,
                    })
                }
            }
        }
        if broke.is_empty() {
            (broke, short)
        } else {
            (broke, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_result::Summary;

    fn probe(requests: u64, p50: f64, p99: f64, max: f64, error_percent: f64) -> Measured {
        Measured {
            requests,
            error_percent,
            latency_ms: Summary {
                count: requests,
                min: p50 / 2.0,
                p50,
                p75: p50,
                p90: p50,
                p95: p50,
                p99,
                p999: max,
                max,
                ..Summary::default()
            },
            ..Measured::default()
        }
    }

    #[test]
    fn the_tail_an_slo_judges_needs_ten_samples_beyond_it() {
        let table = [
            ("p99<100ms", 1_000),
            ("p99.9<1s", 10_000),
            ("p95<1s", 200),
            ("p50<1s", 20),
            ("errors<1%", 1_000),
            ("errors<5%", 200),
            ("p99<1s, errors<0.1%", 10_000),
        ];
        for (slo, want) in table {
            assert_eq!(Slo::parse(slo).unwrap().min_requests(), want, "{slo}");
        }
    }

    #[test]
    fn a_probe_holds_only_on_enough_requests_and_breaks_on_ten_past_the_limit() {
        let short = |have, need| Verdict::TooFew(Shortfall { have, need });
        let p99 = Objective::Latency {
            percentile: 99.0,
            max_ms: 100.0,
            inclusive: false,
            of: Figure::Latency,
        };
        let errors = Objective::Errors {
            max_percent: 1.0,
            inclusive: false,
        };
        // (objective, probe, verdict)
        let table = [
            // The 13 requests, all fast: too few to say p99 held.
            (&p99, probe(13, 5.0, 8.0, 9.0, 0.0), short(13, 1_000)),
            // ... and the `--users` probes of 5 requests.
            (&p99, probe(5, 5.0, 8.0, 9.0, 0.0), short(5, 1_000)),
            (&p99, probe(1_000, 5.0, 80.0, 90.0, 0.0), Verdict::Held),
            // 13 requests, all slower than the limit: 13 past it, broken.
            (
                &p99,
                probe(13, 200.0, 300.0, 300.0, 0.0),
                Verdict::Broke("p99 300 ms >= 100 ms".into()),
            ),
            // 13 requests, only the slowest past the limit: one is not ten; 130 would show.
            (&p99, probe(13, 5.0, 150.0, 150.0, 0.0), short(13, 130)),
            // Enough requests: the percentile itself is the verdict.
            (
                &p99,
                probe(2_000, 5.0, 150.0, 150.0, 0.0),
                Verdict::Broke("p99 150 ms >= 100 ms".into()),
            ),
            (&errors, probe(500, 1.0, 1.0, 1.0, 0.0), short(500, 1_000)),
            (&errors, probe(1_000, 1.0, 1.0, 1.0, 0.5), Verdict::Held),
            (
                &errors,
                probe(50, 1.0, 1.0, 1.0, 40.0),
                Verdict::Broke("errors 40.0% >= 1%".into()),
            ),
            (&errors, probe(100, 1.0, 1.0, 1.0, 2.0), short(100, 500)),
        ];
        for (i, (o, m, want)) in table.into_iter().enumerate() {
            assert_eq!(o.verdict(&m), want, "row {i}");
        }
    }

    #[test]
    fn one_broken_objective_breaks_the_slo_whatever_the_others_lack() {
        let slo = Slo::parse("p99<100ms, errors<1%").unwrap();
        let (broke, short) = slo.judge(&probe(50, 1.0, 2.0, 3.0, 40.0));
        assert_eq!((broke.len(), short), (1, None));
        let (broke, short) = slo.judge(&probe(600, 1.0, 2.0, 3.0, 0.0));
        assert!(broke.is_empty());
        assert_eq!(
            short,
            Some(Shortfall {
                have: 600,
                need: 1_000
            })
        );
    }

    /// `herd capacity` called a probe with p99 1.03 s against 50 ms "too few to judge: 998 of
    /// 1,000" (2 unfinished), and a probe sized to the minimum failed it for one unfinished.
    #[test]
    fn a_few_unanswered_requests_leave_a_plain_verdict_standing() {
        let p99 = Objective::Latency {
            percentile: 99.0,
            max_ms: 50.0,
            inclusive: false,
            of: Figure::Latency,
        };
        let answered = |count, p99_ms: f64, max_ms: f64| {
            let mut m = probe(1_000, 5.0, p99_ms, max_ms, 0.2);
            m.latency_ms.count = count;
            m
        };
        let broke = p99.verdict(&answered(998, 1_030.0, 1_100.0));
        assert_eq!(broke, Verdict::Broke("p99 1.03 s >= 50.0 ms".into()));
        assert_eq!(p99.verdict(&answered(999, 8.0, 9.0)), Verdict::Held);
        // Half of them unanswered: those could be the tail; too few to say it held.
        assert!(matches!(
            p99.verdict(&answered(500, 8.0, 9.0)),
            Verdict::TooFew(_)
        ));
    }
}
