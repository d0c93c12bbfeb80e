//! A service-level objective as people write it: `p99<100ms, errors<1%`.

use crate::criteria::{Criteria, Criterion, Metric, Op, Stat};
use crate::Summary;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One limit a probe must stay under: a criterion (see [`crate::criteria`]) of the whole run on
/// a latency percentile or errors, with `<` or `<=`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "metric", rename_all = "snake_case")]
pub enum Objective {
    /// A latency percentile (50, 75, 90, 95, 99 or 99.9), from the intended send time.
    Latency {
        percentile: f64,
        max_ms: f64,
        /// Written with `<=`: the limit itself still meets the objective.
        #[serde(default, skip_serializing_if = "is_false")]
        inclusive: bool,
        /// Of which latency: the responses' (absent), or event streams' time to first
        /// token (`ttft`) or inter-token latency (`itl`).
        #[serde(default, skip_serializing_if = "Figure::is_latency")]
        of: Figure,
    },
    /// Percent of scheduled requests without an OK answer (errors, 4xx/5xx, dropped), as
    /// [`crate::criteria::error_percent`] counts them.
    Errors {
        max_percent: f64,
        #[serde(default, skip_serializing_if = "is_false")]
        inclusive: bool,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which latency an objective limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The responses' latency, from the intended send to the end.
    #[default]
    Latency,
    /// Event streams' time to the first event (token), from the intended send.
    Ttft,
    /// The gaps between events of event streams (inter-token latency).
    Itl,
}

impl Figure {
    fn is_latency(&self) -> bool {
        *self == Figure::Latency
    }

    /// What names the percentile in a sentence: "", "ttft ", "itl ".
    pub fn prefix(self) -> &'static str {
        match self {
            Figure::Latency => "",
            Figure::Ttft => "ttft ",
            Figure::Itl => "itl ",
        }
    }
}

/// Every objective must hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// As written by the user, e.g. `p99<100ms, errors<1%`.
    pub text: String,
    pub objectives: Vec<Objective>,
}

/// What a probe measured, as much as an SLO needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// Good responses per second.
    pub goodput: f64,
    pub error_percent: f64,
    pub latency_ms: Summary,
    /// Event streams' time to first event (token) and inter-token latency; empty without
    /// event streams.
    pub ttft_ms: Summary,
    pub itl_ms: Summary,
    /// Requests the probe asked for (the denominator of `error_percent`).
    pub requests: u64,
    /// Why herd itself was the bottleneck; empty when it was not.
    pub generator_limited: Vec<String>,
}

impl Measured {
    /// The summary an objective of `of` reads.
    pub fn figure(&self, of: Figure) -> &Summary {
        match of {
            Figure::Latency => &self.latency_ms,
            Figure::Ttft => &self.ttft_ms,
            Figure::Itl => &self.itl_ms,
        }
    }
}

impl Objective {
    /// `Some(what broke)` when `m` is over this limit.
    pub fn broken(&self, m: &Measured) -> Option<String> {
        match *self {
            // Latency is of responses: a probe whose requests all failed has none to meet it.
            Objective::Latency { percentile, .. }
                if m.latency_ms.count == 0 && m.error_percent >= 100.0 =>
            {
                Some(format!(
                    "{}: no responses, every request failed",
                    percentile_name(percentile)
                ))
            }
            Objective::Latency { percentile, of, .. }
                if of != Figure::Latency && m.figure(of).count == 0 =>
            {
                Some(format!(
                    "{}{}: no event streams were read",
                    of.prefix(),
                    percentile_name(percentile)
                ))
            }
            Objective::Latency {
                percentile,
                max_ms,
                inclusive,
                of,
            } => {
                let v = latency_at(m.figure(of), percentile);
                (!op(inclusive).holds(v, max_ms)).then(|| {
                    format!(
                        "{}{} {} {} {}",
                        of.prefix(),
                        percentile_name(percentile),
                        ms(v),
                        broken_symbol(inclusive),
                        ms(max_ms)
                    )
                })
            }
            Objective::Errors {
                max_percent,
                inclusive,
            } => (!op(inclusive).holds(m.error_percent, max_percent)).then(|| {
                format!(
                    "errors {} {} {}%",
                    crate::format::percent(m.error_percent),
                    broken_symbol(inclusive),
                    short(max_percent)
                )
            }),
        }
    }

    /// How the limit is phrased in a sentence: "p99 < 100 ms", "errors < 1%".
    pub fn phrase(&self) -> String {
        match *self {
            Objective::Latency {
                percentile,
                max_ms,
                inclusive,
                of,
            } => format!(
                "{}{} {} {}",
                of.prefix(),
                percentile_name(percentile),
                op(inclusive).symbol(),
                ms(max_ms)
            ),
            Objective::Errors {
                max_percent,
                inclusive,
            } => format!("errors {} {}%", op(inclusive).symbol(), short(max_percent)),
        }
    }

    /// What rising past the limit looks like: "errors rise", "p99 rises above 100 ms".
    pub fn rising(&self) -> String {
        match *self {
            Objective::Latency {
                percentile,
                max_ms,
                of,
                ..
            } => format!(
                "{}{} rises above {}",
                of.prefix(),
                percentile_name(percentile),
                ms(max_ms)
            ),
            Objective::Errors { .. } => "errors rise".to_owned(),
        }
    }

    /// The measured value this objective reads: "p99 1.49 ms", "errors 100%".
    pub fn value_text(&self, m: &Measured) -> String {
        match *self {
            Objective::Latency { percentile, of, .. } => format!(
                "{}{} {}",
                of.prefix(),
                percentile_name(percentile),
                crate::format::duration_ms(latency_at(m.figure(of), percentile))
            ),
            Objective::Errors { .. } => {
                format!("errors {}", crate::format::percent(m.error_percent))
            }
        }
    }
}

impl Slo {
    /// Parses `p99<100ms, errors<1%` with the one criteria grammar ([`Criteria::parse`]); an SLO
    /// takes upper limits (`<`, `<=`) on the whole run's latency percentiles and errors. Every
    /// problem is reported at once.
    pub fn parse(text: &str) -> Result<Slo, String> {
        let (items, diags) = Criteria::parse_all(text);
        let mut problems: Vec<(usize, String)> =
            diags.iter().map(|d| (d.column, d.to_string())).collect();
        let objectives = items
            .iter()
            .filter_map(|c| objective(c).map_err(|e| problems.push((c.column, e))).ok())
            .collect();
        // In the order of the text, whichever step found them.
        problems.sort_by_key(|(column, _)| *column);
        let problems: Vec<String> = problems.into_iter().map(|(_, p)| p).collect();
        if problems.is_empty() {
            Ok(Slo {
                text: text.trim().to_owned(),
                objectives,
            })
        } else {
            Err(problems.join("; "))
        }
    }

    /// What broke, one entry per objective over its limit; empty when the SLO held.
    pub fn check(&self, m: &Measured) -> Vec<String> {
        self.objectives.iter().filter_map(|o| o.broken(m)).collect()
    }

    /// "p99 < 100 ms and errors < 1%".
    pub fn phrase(&self) -> String {
        let parts: Vec<String> = self.objectives.iter().map(Objective::phrase).collect();
        match parts.len() {
            0 => String::new(),
            1 => parts[0].clone(),
            n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
        }
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.phrase())
    }
}

/// The objective a criterion states, or why an SLO (or a sweep's stop rule) cannot hold it.
pub(crate) fn objective(c: &Criterion) -> Result<Objective, String> {
    let bad = |why: &str| {
        let column = c.column;
        format!(
            "column {column}: `{}` {why}: write e.g. \"p99<100ms, errors<1%\"",
            c.text
        )
    };
    if c.name.is_some() {
        return Err(bad("names a request, but an SLO is of the whole run"));
    }
    let inclusive = match c.op {
        Op::Lt => false,
        Op::Le => true,
        Op::Gt | Op::Ge => return Err(bad("is not an upper limit (< or <=)")),
    };
    let (stat, of) = match c.metric {
        Metric::Latency(s) => (Metric::Latency(s), Figure::Latency),
        Metric::Ttft(s) => (Metric::Latency(s), Figure::Ttft),
        Metric::Itl(s) => (Metric::Latency(s), Figure::Itl),
        other => (other, Figure::Latency),
    };
    let percentile = match stat {
        Metric::Errors if c.value > 0.0 || inclusive => {
            return Ok(Objective::Errors {
                max_percent: c.value,
                inclusive,
            })
        }
        Metric::Errors => return Err(bad("can never hold: errors cannot be below 0%")),
        Metric::Latency(Stat::P50) => 50.0,
        Metric::Latency(Stat::P75) => 75.0,
        Metric::Latency(Stat::P90) => 90.0,
        Metric::Latency(Stat::P95) => 95.0,
        Metric::Latency(Stat::P99) => 99.0,
        Metric::Latency(Stat::P999) => 99.9,
        _ => return Err(bad("needs a latency percentile (p50 .. p99.9) or errors")),
    };
    if c.value <= 0.0 {
        return Err(bad("can never hold: a latency is above 0"));
    }
    Ok(Objective::Latency {
        percentile,
        max_ms: c.value,
        inclusive,
        of,
    })
}

fn op(inclusive: bool) -> Op {
    if inclusive {
        Op::Le
    } else {
        Op::Lt
    }
}

/// How a broken limit reads: "250 ms >= 100 ms" for `<`, "250 ms > 100 ms" for `<=`.
fn broken_symbol(inclusive: bool) -> &'static str {
    if inclusive {
        ">"
    } else {
        ">="
    }
}

/// The latency percentile `percentile` (50, 75, 90, 95, 99 or 99.9) of a summary.
pub fn latency_at(s: &Summary, percentile: f64) -> f64 {
    [
        (50.0, s.p50),
        (75.0, s.p75),
        (90.0, s.p90),
        (95.0, s.p95),
        (99.0, s.p99),
    ]
    .iter()
    .find(|(p, _)| *p == percentile)
    .map_or(s.p999, |(_, v)| *v)
}

/// `p99`, `p99.9`.
pub fn percentile_name(p: f64) -> String {
    format!("p{}", short(p))
}

fn ms(v: f64) -> String {
    crate::format::duration_ms(v)
}

/// 1 -> "1", 0.5 -> "0.5", 99.9 -> "99.9".
fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slos_people_write() {
        let s = Slo::parse("p99<100ms, errors<1%").unwrap();
        assert_eq!(
            s.objectives,
            vec![
                Objective::Latency {
                    percentile: 99.0,
                    max_ms: 100.0,
                    inclusive: false,
                    of: Figure::Latency,
                },
                Objective::Errors {
                    max_percent: 1.0,
                    inclusive: false
                }
            ]
        );
        assert_eq!(s.phrase(), "p99 < 100 ms and errors < 1%");
        let s = Slo::parse("p99.9 <= 1.5s and p50<800us").unwrap();
        assert_eq!(s.phrase(), "p99.9 <= 1.50 s and p50 < 800 us");
        assert_eq!(
            Slo::parse("p999<2s").unwrap().objectives[0],
            Objective::Latency {
                percentile: 99.9,
                max_ms: 2000.0,
                inclusive: false,
                of: Figure::Latency,
            }
        );
    }

    #[test]
    fn every_bad_term_is_named() {
        let e = Slo::parse("p98<100ms, errors<5, p99 100ms, p99<fast").unwrap_err();
        for bad in ["`p98`", "column 19", "`p99 100ms`", "`fast`"] {
            assert!(e.contains(bad), "{bad}: {e}");
        }
        assert!(Slo::parse(" , ").unwrap_err().contains("no criteria"));
        // valid criteria an SLO cannot hold
        let e = Slo::parse("rps > 10, cart: p99 < 1s, mean < 1s").unwrap_err();
        for bad in [
            "not an upper limit",
            "names a request",
            "needs a latency percentile",
        ] {
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn check_names_what_broke() {
        let slo = Slo::parse("p99<100ms, errors<1%").unwrap();
        let mut m = Measured {
            error_percent: 0.5,
            latency_ms: Summary {
                p99: 80.0,
                ..Summary::default()
            },
            ..Measured::default()
        };
        assert!(slo.check(&m).is_empty());
        // every request failed without a response: no latency, and that is no pass
        let none = Measured {
            error_percent: 100.0,
            ..Measured::default()
        };
        assert_eq!(
            slo.check(&none)[0],
            "p99: no responses, every request failed"
        );
        m.error_percent = 48.875;
        m.latency_ms.p99 = 250.0;
        assert_eq!(
            slo.check(&m),
            vec!["p99 250 ms >= 100 ms", "errors 48.9% >= 1%"]
        );
    }

    #[test]
    fn time_to_first_token_and_inter_token_latency_are_objectives() {
        let slo = Slo::parse("ttft p99 < 500ms, itl p99 < 50ms").unwrap();
        assert_eq!(slo.phrase(), "ttft p99 < 500 ms and itl p99 < 50.0 ms");
        let mut m = Measured {
            ttft_ms: Summary {
                count: 10,
                p99: 620.0,
                ..Summary::default()
            },
            itl_ms: Summary {
                count: 90,
                p99: 21.0,
                ..Summary::default()
            },
            ..Measured::default()
        };
        assert_eq!(slo.check(&m), vec!["ttft p99 620 ms >= 500 ms"]);
        m.ttft_ms = Summary::default();
        assert_eq!(slo.check(&m), vec!["ttft p99: no event streams were read"]);
        assert!(Slo::parse("ttft < 1s")
            .unwrap_err()
            .contains("needs a statistic"));
    }
}
