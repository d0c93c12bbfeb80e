//! `herd capacity`: the highest load a target sustains within an SLO. [`CapacityResult`] is the
//! `kind: "capacity"` JSON, [`Slo`] what "sustains" means, and [`sentence`] the answer as a
//! client reads it. The search that decides what to probe is herd-series'.

mod levels;
mod record;
mod slo;

pub use record::{Judged, Outcome, Probe, ProbeRecord, Purpose, Shortfall, Undecided};
pub(crate) use slo::objective;
pub use slo::{latency_at, percentile_name, Figure, Measured, Objective, Slo};

use crate::criteria::error_percent;
use crate::format::{count, rate};
use crate::knee::Knee;
use crate::{GeneratorVerdict, Kind, Model, RunResult};
use serde::{Deserialize, Serialize};

/// Everything `herd capacity` found, as written to `--json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    pub herd_version: String,
    /// The format's version within this herd series ([`crate::SCHEMA_VERSION`]); absent in
    /// files written before it existed, which read as 1.
    #[serde(default = "crate::first_schema_version")]
    pub schema_version: u32,
    /// Always [`Kind::Capacity`].
    pub kind: Kind,
    pub target: String,
    /// Open: levels are req/s (scenario iterations/s for a workload file); closed (`--users`):
    /// concurrent users.
    pub model: Model,
    pub slo: Slo,
    /// The highest rate within the SLO (open model), in the levels' unit; `null` when herd could
    /// not decide.
    pub capacity_rps: Option<f64>,
    /// The most concurrent users within the SLO (closed model); `null` when herd could not decide.
    pub capacity_users: Option<u64>,
    /// The lowest level seen to break the SLO.
    pub ceiling: Option<f64>,
    /// Why there is no number, when there is none.
    pub undecided: Option<Undecided>,
    /// How the search ended: `found`, `unmet` (no level tried met the SLO), `undecided` or
    /// `interrupted`. Absent in files from older herds, read as `found`.
    #[serde(default)]
    pub outcome: Outcome,
    /// Where good throughput stopped following load, over all probes.
    pub knee: Option<Knee>,
    /// The answer in one sentence.
    pub sentence: String,
    /// Ctrl-C: the search stopped before it ended.
    pub interrupted: bool,
    pub probes: Vec<ProbeRecord>,
}

/// What an SLO needs from a run.
pub fn measured(r: &RunResult) -> Measured {
    Measured {
        goodput: if r.duration_s > 0.0 {
            r.totals.ok as f64 / r.duration_s
        } else {
            0.0
        },
        error_percent: error_percent(r),
        latency_ms: r.latency_ms.clone(),
        ttft_ms: r
            .streams
            .as_ref()
            .map(|s| s.ttft_ms.clone())
            .unwrap_or_default(),
        itl_ms: r
            .streams
            .as_ref()
            .map(|s| s.itl_ms.clone())
            .unwrap_or_default(),
        requests: r.totals.scheduled,
        generator_limited: match r.generator.verdict {
            GeneratorVerdict::Ok => Vec::new(),
            GeneratorVerdict::GeneratorLimited if r.generator.reasons.is_empty() => {
                vec!["herd's generator was the bottleneck".to_owned()]
            }
            GeneratorVerdict::GeneratorLimited => r.generator.reasons.clone(),
        },
    }
}

/// The answer as a client reads it: "sustains 1,640 req/s with p99 < 100 ms and errors < 1%;
/// beyond ~1,700 req/s errors rise", or why there is no number.
pub fn sentence(r: &CapacityResult) -> String {
    sentence_in(r, "req/s")
}

/// [`sentence`] with the open model's levels in `unit`: `iterations/s` for a workload file,
/// whose rate counts scenario iterations started per second.
pub fn sentence_in(r: &CapacityResult, unit: &str) -> String {
    let slo = r.slo.phrase();
    let level = |x: f64| match r.model {
        Model::Open => format!("{} {unit}", rate(x)),
        // Over HTTP/2 and HTTP/3 a level is connections, each with its streams.
        Model::Closed if r.probes.iter().any(|p| p.result.config.streams.is_some()) => {
            r.level_text(x)
        }
        Model::Closed => {
            let n = x.round() as u64;
            format!(
                "{} concurrent user{}",
                count(n),
                if n == 1 { "" } else { "s" }
            )
        }
    };
    if r.interrupted {
        return format!(
            "interrupted after {} probes: no answer for {}",
            r.probes.len(),
            r.target
        );
    }
    let found = r.capacity_rps.or(r.capacity_users.map(|u| u as f64));
    if let Some(x) = found {
        if x <= 0.0 {
            return unmet(r, &level);
        }
        let mut s = format!("{} sustains {} with {slo}", r.target, level(x));
        if let Some(c) = r.ceiling {
            let what = broke_at(r, c);
            write_beyond(&mut s, &level(c), &what);
        }
        return s;
    }
    let Some(u) = &r.undecided else {
        return format!("no answer for {}", r.target);
    };
    let why = match u {
        Undecided::GeneratorLimited {
            level: l,
            reasons,
            at_least,
        } => {
            let mut s = format!(
                "herd itself was the bottleneck at {} ({}), so what it measured there is herd, not the target",
                level(*l),
                reasons.join("; ")
            );
            if let Some(a) = at_least {
                s += &format!("; the target held {slo} up to at least {}", level(*a));
            }
            s + ". Give herd more threads (-t) or cores, or load from several machines"
        }
        Undecided::Noisy { level: l } => format!(
            "results contradict each other: {} held {slo} on one probe and broke it on a later one, twice. \
             The target's capacity varies from one probe to the next; try longer probes (--probe-duration) \
             or look for what else runs on it",
            level(*l)
        ),
        Undecided::NeverBroke { at_least } => format!(
            "it held {slo} up to {}, the most this search may try; raise --max",
            level(*at_least)
        ),
        Undecided::TooFewRequests { level: l, have, need } => format!(
            "even the longest probe allowed at {} had {} requests, and judging {slo} takes {} \
             (ten beyond the percentile or error share it limits); probe longer \
             (--probe-duration) or judge a lower percentile",
            level(*l),
            count(*have),
            count(*need)
        ),
        Undecided::OutOfProbes { held, broke } => {
            let mut s = "the probe budget ran out before the answer was narrowed and confirmed".to_owned();
            if let (Some(h), Some(b)) = (held, broke) {
                s += &format!(
                    " (it held at {} and broke at {})",
                    level(*h),
                    level(*b)
                );
            }
            s + "; allow more probes (--max-probes)"
        }
    };
    format!("cannot decide the capacity of {}: {why}", r.target)
}

/// "does not meet the SLO (p99 < 1 us) at any rate tried (lowest probe 1 req/s: p99 1.49 ms)".
fn unmet(r: &CapacityResult, level: &dyn Fn(f64) -> String) -> String {
    let what = match r.model {
        Model::Open => "rate",
        Model::Closed if r.probes.iter().any(|p| p.result.config.streams.is_some()) => {
            "number of connections"
        }
        Model::Closed => "number of users",
    };
    let lowest = r
        .probes
        .iter()
        .filter(|p| !p.held && !p.broke.is_empty() && p.generator == GeneratorVerdict::Ok)
        .min_by(|a, b| a.level.total_cmp(&b.level));
    let seen = lowest.map_or(String::new(), |p| {
        let m = measured(&p.result);
        let values: Vec<String> = r
            .slo
            .objectives
            .iter()
            .filter(|o| o.broken(&m).is_some())
            .map(|o| o.value_text(&m))
            .collect();
        format!(" (lowest probe {}: {})", level(p.level), values.join(", "))
    });
    format!(
        "{} does not meet the SLO ({}) at any {what} tried{seen}",
        r.target,
        r.slo.phrase()
    )
}

/// A note when a probe's connect times clustered at the SYN retransmission times: "the server's
/// listen queue overflowed from 800 req/s: ...", naming the lowest such probe.
pub fn backlog_note(r: &CapacityResult, unit: &str) -> Option<String> {
    let (level, b) = r
        .probes
        .iter()
        .filter_map(|p| Some((p.level, crate::backlog::run_syn_retries(&p.result)?)))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let at = match r.model {
        Model::Open => format!("{} {unit}", rate(level)),
        Model::Closed => r.level_text(level),
    };
    Some(format!("from {at}: {}", b.sentence()))
}

fn write_beyond(s: &mut String, ceiling: &str, what: &str) {
    s.push_str(&format!("; beyond ~{ceiling} {what}"));
}

/// What broke at the ceiling, in words: "errors rise", "p99 rises above 100 ms".
fn broke_at(r: &CapacityResult, ceiling: f64) -> String {
    let Some(p) = r
        .probes
        .iter()
        .rev()
        .find(|p| p.level == ceiling && !p.held)
    else {
        return "the SLO breaks".to_owned();
    };
    let m = measured(&p.result);
    let parts: Vec<String> = r
        .slo
        .objectives
        .iter()
        .filter(|o| o.broken(&m).is_some())
        .map(Objective::rising)
        .collect();
    if parts.is_empty() {
        "the SLO breaks".to_owned()
    } else {
        parts.join(" and ")
    }
}
