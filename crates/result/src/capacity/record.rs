//! What a capacity search keeps of each probe and of its end, as written to `--json`.

use crate::{GeneratorVerdict, RunResult};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a search ended; each has its own exit code (docs/capacity.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The highest level within the SLO.
    #[default]
    Found,
    /// Even the lowest level tried broke the SLO: no rate (or number of users) meets it.
    Unmet,
    /// No number: see `undecided`.
    Undecided,
    /// Ctrl-C before the search ended.
    Interrupted,
}

/// One probe: what was asked, how it went, and the full run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub level: f64,
    pub purpose: Purpose,
    pub duration_s: f64,
    pub held: bool,
    /// What broke the SLO; empty when it held.
    pub broke: Vec<String>,
    /// Nothing broke, but the probe had too few requests to say the SLO held; it was run again,
    /// longer.
    #[serde(default)]
    pub too_few: Option<Shortfall>,
    pub generator: GeneratorVerdict,
    pub result: RunResult,
}

/// Why a probe was run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    Ramp,
    Narrow,
    Confirm,
}

/// A probe with too few requests to judge: it had `have`, a verdict needs `need`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    pub have: u64,
    pub need: u64,
}

/// Why the search gives no number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Undecided {
    /// herd could not generate this level faithfully; `at_least` held before it.
    GeneratorLimited {
        level: f64,
        reasons: Vec<String>,
        at_least: Option<f64>,
    },
    /// The same level held once and broke on a later probe, twice.
    Noisy { level: f64 },
    /// The SLO held up to the highest level allowed.
    NeverBroke { at_least: f64 },
    /// Even the longest probe allowed at this level had too few requests to judge the SLO on.
    TooFewRequests { level: f64, have: u64, need: u64 },
    /// The probe budget ran out before the answer was narrowed and confirmed.
    OutOfProbes {
        held: Option<f64>,
        broke: Option<f64>,
    },
}

/// A level the capacity search probes, for how long and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub level: f64,
    pub duration: Duration,
    pub purpose: Purpose,
}

/// A probe of the search and how it went: what the search decides on, and what its table
/// shows as each probe is judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub probe: Probe,
    /// What broke the SLO; empty when it held.
    pub broke: Vec<String>,
    /// Why herd itself was the bottleneck; empty when it was not.
    pub generator_limited: Vec<String>,
    /// Nothing broke, but too few requests to say the SLO held.
    pub too_few: Option<Shortfall>,
}

impl Judged {
    pub fn held(&self) -> bool {
        self.broke.is_empty() && self.too_few.is_none()
    }

    /// The probe table's last column: why herd, not the target, was the limit; too few
    /// requests to judge; held; or what broke.
    pub fn verdict(&self) -> String {
        use crate::format::count;
        if !self.generator_limited.is_empty() {
            "LIMITED: herd, not the target".to_owned()
        } else if let Some(s) = self.too_few {
            format!(
                "too few to judge: {} of {} requests",
                count(s.have),
                count(s.need)
            )
        } else if self.held() {
            "held".to_owned()
        } else {
            format!("broke: {}", self.broke.join(", "))
        }
    }
}
