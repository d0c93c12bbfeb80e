//! A service-level objective as people write it: `p99<100ms, errors<1%`.

use crate::Summary;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One limit a probe must stay under.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "metric", rename_all = "snake_case")]
pub enum Objective {
    /// A latency percentile (50, 75, 90, 95, 99 or 99.9), from the intended send time.
    Latency { percentile: f64, max_ms: f64 },
    /// Percent of requests without an OK answer (errors, 4xx/5xx, dropped).
    Errors { max_percent: f64 },
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
    /// Requests the probe asked for (the denominator of `error_percent`).
    pub requests: u64,
    /// Why herd itself was the bottleneck; empty when it was not.
    pub generator_limited: Vec<String>,
}

const PERCENTILES: [f64; 6] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9];

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
            Objective::Latency { percentile, max_ms } => {
                let v = latency_at(&m.latency_ms, percentile);
                (v >= max_ms).then(|| {
                    format!(
                        "{} {} >= {}",
                        percentile_name(percentile),
                        ms(v),
                        ms(max_ms)
                    )
                })
            }
            Objective::Errors { max_percent } => (m.error_percent >= max_percent).then(|| {
                format!(
                    "errors {} >= {}%",
                    crate::format::percent(m.error_percent),
                    short(max_percent)
                )
            }),
        }
    }

    /// How the limit is phrased in a sentence: "p99 < 100 ms", "errors < 1%".
    pub fn phrase(&self) -> String {
        match *self {
            Objective::Latency { percentile, max_ms } => {
                format!("{} < {}", percentile_name(percentile), ms(max_ms))
            }
            Objective::Errors { max_percent } => format!("errors < {}%", short(max_percent)),
        }
    }

    /// What rising past the limit looks like: "errors rise", "p99 rises above 100 ms".
    pub fn rising(&self) -> String {
        match *self {
            Objective::Latency { percentile, max_ms } => {
                format!("{} rises above {}", percentile_name(percentile), ms(max_ms))
            }
            Objective::Errors { .. } => "errors rise".to_owned(),
        }
    }
}

impl Slo {
    /// Parses `p99<100ms, errors<1%`: terms separated by commas or `and`, each a latency
    /// percentile (`p50` .. `p99.9`) under a time with a unit (`us`, `ms`, `s`), or `errors`
    /// under a percentage. Every problem is reported at once.
    pub fn parse(text: &str) -> Result<Slo, String> {
        let mut objectives = Vec::new();
        let mut problems = Vec::new();
        let terms = text
            .split(',')
            .flat_map(|t| t.split(" and "))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        for term in terms {
            match parse_term(term) {
                Ok(o) => objectives.push(o),
                Err(e) => problems.push(e),
            }
        }
        if objectives.is_empty() && problems.is_empty() {
            problems.push("the SLO is empty: write e.g. \"p99<100ms, errors<1%\"".to_owned());
        }
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

fn parse_term(term: &str) -> Result<Objective, String> {
    let bad = |why: &str| format!("`{term}` {why}: write e.g. \"p99<100ms\" or \"errors<1%\"");
    let (name, limit) = term
        .split_once("<=")
        .or_else(|| term.split_once('<'))
        .ok_or_else(|| bad("has no `<`"))?;
    let (name, limit) = (name.trim().to_ascii_lowercase(), limit.trim());
    if name == "errors" || name == "error" || name == "error-rate" {
        let n = limit
            .strip_suffix('%')
            .ok_or_else(|| bad("needs a percentage"))?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0 && *x <= 100.0)
            .ok_or_else(|| bad("needs a percentage above 0 and at most 100"))?;
        return Ok(Objective::Errors { max_percent: n });
    }
    let p = name
        .strip_prefix('p')
        .and_then(|p| match p {
            "999" => Some(99.9),
            p => p.parse::<f64>().ok(),
        })
        .filter(|p| PERCENTILES.contains(p))
        .ok_or_else(|| bad("names no known measure (p50, p75, p90, p95, p99, p99.9, errors)"))?;
    let max_ms = parse_ms(limit).ok_or_else(|| bad("needs a time with a unit (us, ms, s)"))?;
    Ok(Objective::Latency {
        percentile: p,
        max_ms,
    })
}

fn parse_ms(s: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e3)
    } else {
        return None;
    };
    let x = num.trim().parse::<f64>().ok()?;
    (x.is_finite() && x > 0.0).then_some(x * scale)
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
                    max_ms: 100.0
                },
                Objective::Errors { max_percent: 1.0 }
            ]
        );
        assert_eq!(s.phrase(), "p99 < 100 ms and errors < 1%");
        let s = Slo::parse("p99.9 <= 1.5s and p50<800us").unwrap();
        assert_eq!(s.phrase(), "p99.9 < 1.50 s and p50 < 800 us");
        assert_eq!(
            Slo::parse("p999<2s").unwrap().objectives[0],
            Objective::Latency {
                percentile: 99.9,
                max_ms: 2000.0
            }
        );
    }

    #[test]
    fn every_bad_term_is_named() {
        let e = Slo::parse("p98<100ms, errors<5, p99 100ms, p99<fast").unwrap_err();
        for bad in ["p98<100ms", "errors<5", "p99 100ms", "p99<fast"] {
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        assert!(Slo::parse(" , ").unwrap_err().contains("empty"));
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
}
