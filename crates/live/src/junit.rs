//! `--junit FILE`: the run's verdicts as JUnit XML, one test case per threshold and per check
//! (k6's summary `jUnit()`, Gatling's assertions), so a CI server shows a failed threshold as a
//! failed test. A run with neither has one case, the run itself, failed when herd's exit code
//! says it failed.

use crate::{Sink, SinkError};
use herd_result::format::count;
use herd_result::RunResult;
use std::fmt::Write;
use std::path::{Path, PathBuf};

const FLAG: &str = "--junit";

pub struct Junit {
    path: PathBuf,
}

impl Junit {
    pub fn create(path: &Path) -> Self {
        Junit {
            path: path.to_owned(),
        }
    }
}

impl Sink for Junit {
    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        std::fs::write(&self.path, render(result)).map_err(|e| SinkError::new(FLAG, &self.path, e))
    }
}

/// One case: its name, and why it failed or was skipped.
struct Case {
    class: &'static str,
    name: String,
    failure: Option<String>,
    /// A check no response reached: neither passed nor failed (JUnit's `<skipped/>`).
    skipped: Option<String>,
}

/// The JUnit document of `result`.
pub fn render(result: &RunResult) -> String {
    let mut cases: Vec<Case> = Vec::new();
    for t in &result.thresholds {
        let measured = format!("measured {} {}", trim(t.value), t.unit);
        cases.push(Case {
            class: "herd.thresholds",
            name: t.expression.clone(),
            failure: (!t.pass).then(|| match &t.note {
                Some(n) => format!("{measured}: {n}"),
                None => measured,
            }),
            skipped: None,
        });
    }
    for c in &result.checks {
        cases.push(Case {
            class: "herd.checks",
            name: c.name.clone(),
            failure: (c.fails > 0).then(|| {
                let mut m = format!("{} of {} failed", count(c.fails), count(c.passes + c.fails));
                if let Some(s) = &c.sample {
                    let _ = write!(m, "; first: {s}");
                }
                m
            }),
            skipped: (c.passes + c.fails == 0)
                .then(|| "never ran (no response reached it)".to_owned()),
        });
    }
    if cases.is_empty() {
        use herd_run::Conclusion;
        let failure = match herd_run::conclude(result) {
            Conclusion::Ok | Conclusion::ThresholdsFailed | Conclusion::NoShare => None,
            Conclusion::GeneratorLimited => Some(format!(
                "generator-limited: {}",
                result.generator.reasons.join("; ")
            )),
            Conclusion::NothingAnswered => Some("no request got a response".to_owned()),
            Conclusion::Interrupted => Some("the run was interrupted".to_owned()),
            // A series' or a merge's ends: never a run's.
            Conclusion::Partial | Conclusion::Undecided | Conclusion::SloUnmet => None,
        };
        cases.push(Case {
            class: "herd.run",
            name: format!("{} {}", result.config.method, result.target),
            failure,
            skipped: None,
        });
    }
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"herd\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
        cases.len(),
        result.duration_s
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\" timestamp=\"{}\">",
        escape(&result.target),
        cases.len(),
        result.duration_s,
        escape(&result.started_at),
    );
    for c in &cases {
        let _ = write!(
            x,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            c.class,
            escape(&c.name),
            result.duration_s
        );
        match (&c.failure, &c.skipped) {
            (None, None) => x.push_str("/>\n"),
            (None, Some(why)) => {
                let _ = writeln!(
                    x,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(why)
                );
            }
            (Some(f), _) => {
                let _ = writeln!(
                    x,
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                    escape(f),
                    escape(f)
                );
            }
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Text made safe for XML attributes and content.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_names_is_escaped() {
        assert_eq!(
            escape("p99 < 5ms & \"x\"\u{1}"),
            "p99 &lt; 5ms &amp; &quot;x&quot; "
        );
        assert_eq!(trim(12.5), "12.5");
        assert_eq!(trim(3.0), "3");
    }

    /// A check no response reached is skipped, not passed (a CI server shows it apart).
    #[test]
    fn a_check_that_never_ran_is_skipped_not_passed() {
        let json = include_str!("../../result/tests/fixtures/run-open.json");
        let mut r = herd_result::parse_json(json, "run-open.json").unwrap();
        let check = |name: &str, passes, fails| herd_result::CheckResult {
            name: name.into(),
            passes,
            fails,
            sample: None,
        };
        r.checks = vec![check("has a token", 0, 0), check("status 200", 5, 0)];
        let x = render(&r);
        assert!(
            x.contains("tests=\"2\" failures=\"0\" skipped=\"1\""),
            "{x}"
        );
        assert!(
            x.contains("name=\"has a token\" time=\"5.000\">\n      <skipped message=\"never ran (no response reached it)\"/>"),
            "{x}"
        );
        assert!(x.contains("name=\"status 200\" time=\"5.000\"/>"), "{x}");
    }
}
