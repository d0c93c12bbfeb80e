//! The live tables of a series, a line as each run ends: `herd sweep`'s steps and `herd
//! capacity`'s probes; then what each says after its table (where each target saturated, the
//! capacity and its knee). Pure text from what was measured; the CLI prints it.

use herd_result::capacity::{backlog_note, measured, CapacityResult, Purpose};
use herd_result::format::{count, duration_ms, duration_s, rate};
use herd_result::knee::{shape, Shape};
use herd_result::sweep::{level_text, Row, SweepResult};
use herd_result::{GeneratorVerdict, Model};

/// The sweep table's header: the level's column named by model and unit (`iterations/s` for a
/// workload), HTTP/2's `conns xM` when a level is connections of M streams, and a target
/// column when several targets are swept side by side.
pub fn sweep_header(model: Model, unit: &str, streams: Option<usize>, named: bool) -> String {
    let level = match (model, unit, streams) {
        (Model::Closed, _, Some(m)) => format!("conns x{m}"),
        (Model::Closed, _, None) => "users".into(),
        (Model::Open, "req/s", _) => "req/s asked".into(),
        (Model::Open, _, _) => "iter/s asked".into(),
    };
    let target = if named { "  target          " } else { "" };
    format!(
        "{level:>11}{target}  {:>9}  {:>22}  {:>9}  {:>9}  {:>9}  {:>7}  generator",
        "sent/s", "replies/s min/avg/max", "mean", "p50", "p99", "errors"
    )
}

/// One run of a sweep: its level, the target's name when several are swept, its row; `short`:
/// a step too short to judge.
pub fn sweep_line(level: f64, name: Option<&str>, r: &Row, short: bool) -> String {
    let x = r.extra.as_ref();
    let target = name.map_or(String::new(), |n| format!("  {n:<16}"));
    let verdict = step_verdict(r, short);
    // A step with no response has no latency: "0 us" would read as a very fast server.
    let answered = x.is_none_or(|x| x.ok + x.failed > 0);
    let time = |ms: f64| {
        if answered {
            duration_ms(ms)
        } else {
            "-".to_owned()
        }
    };
    let reply = format!(
        "{}/{}/{}",
        rate(r.min_rep_rate),
        rate(r.avg_rep_rate),
        rate(r.max_rep_rate)
    );
    format!(
        "{:>11}{target}  {:>9}  {reply:>22}  {:>9}  {:>9}  {:>9}  {:>7}  {verdict}",
        level_text(level),
        rate(r.req_rate),
        time(r.resp_time),
        time(x.map_or(0.0, |x| x.p50)),
        time(x.map_or(0.0, |x| x.p99)),
        format!("{:.2}%", r.errors),
    )
}

/// The table's last column: whether the step measured the server.
pub fn step_verdict(r: &Row, short: bool) -> &'static str {
    match r.extra.as_ref().map(|x| x.generator) {
        Some(GeneratorVerdict::GeneratorLimited) => "LIMITED: herd, not the server",
        _ if short => "ok; too short to judge (under 0.25 s)",
        _ => "ok",
    }
}

/// The probe table's header.
pub fn probe_header() -> String {
    format!(
        "{:>5}  {:<8}  {:>13}  {:>8}  {:>10}  {:>8}  {:>9}  verdict",
        "probe", "purpose", "level", "length", "good/s", "errors", "p99"
    )
}

/// One probe of a capacity search, as judged.
pub struct ProbeLine<'a> {
    pub n: usize,
    pub purpose: Purpose,
    /// The level with its unit (`probe_level`).
    pub level: &'a str,
    pub duration_s: f64,
    pub goodput: f64,
    pub error_percent: f64,
    /// `None` for a probe that got no response: it has no latency.
    pub p99_ms: Option<f64>,
    pub verdict: &'a str,
}

/// A line of the probe table.
pub fn probe_line(p: &ProbeLine) -> String {
    format!(
        "{:>5}  {:<8}  {:>13}  {:>8}  {:>10}  {:>8}  {:>9}  {}",
        p.n,
        purpose_name(p.purpose),
        p.level,
        duration_s(p.duration_s),
        rate(p.goodput),
        format!("{:.2}%", p.error_percent),
        p.p99_ms.map_or("-".to_owned(), duration_ms),
        p.verdict,
    )
}

/// A sweep step's level as the dashboard's table of levels asks it: `200 req/s`, `10 users`,
/// or `4 connections x 8 streams` over HTTP/2.
pub fn step_asked(model: Model, streams: Option<usize>, unit: &str, level: f64) -> String {
    match (model, streams) {
        (Model::Open, _) => format!("{} {unit}", level_text(level)),
        (Model::Closed, Some(m)) => format!("{} connections x {m} streams", level_text(level)),
        (Model::Closed, None) => format!("{} users", level_text(level)),
    }
}

/// A probe's level and purpose as the dashboard's table of levels asks it: `200 req/s (ramp)`.
pub fn probe_asked(level: &str, p: Purpose) -> String {
    format!("{level} ({})", purpose_name(p))
}

/// A probe's level as the table shows it: users, or a rate in the table's narrow unit.
pub fn probe_level(users_model: bool, level: f64, unit: &str) -> String {
    if users_model {
        users(level)
    } else {
        format!("{} {}", rate(level), short(unit))
    }
}

/// Where good throughput levelled off over the probes, as a bracket between two levels probed,
/// only when the probes show one (the same rule as a sweep's, `herd_result::knee::shape`).
pub fn knee_line(r: &CapacityResult, unit: &str) -> Option<String> {
    let points: Vec<(f64, f64)> = r
        .probes
        .iter()
        .filter(|p| p.generator == herd_result::GeneratorVerdict::Ok && p.too_few.is_none())
        .map(|p| (p.level, measured(&p.result).goodput))
        .collect();
    let at = |x: f64| match r.model {
        Model::Closed => users(x),
        Model::Open => format!("{} {unit}", rate(x)),
    };
    match shape(r.model, &points)? {
        Shape::Knee {
            below,
            at: knee,
            throughput,
        } => Some(format!(
            "knee: good throughput levels off (within 10%) between {} and {}, near {} req/s",
            at(below),
            at(knee),
            rate(throughput)
        )),
        Shape::FlatFromFirst {
            first, throughput, ..
        } => Some(format!(
            "knee: good throughput already level (within 10%) at the lowest level probed, {}, \
             near {} req/s",
            at(first),
            rate(throughput)
        )),
        Shape::Single { .. } | Shape::Rising { .. } => None,
    }
}

/// "1 user", "8 users".
fn users(level: f64) -> String {
    let n = level.round() as u64;
    format!("{} user{}", count(n), if n == 1 { "" } else { "s" })
}

/// The level's unit in the probe table's narrow column.
fn short(unit: &str) -> &str {
    if unit == "iterations/s" {
        "iter/s"
    } else {
        unit
    }
}

pub fn purpose_name(p: Purpose) -> &'static str {
    match p {
        Purpose::Ramp => "ramp",
        Purpose::Narrow => "narrow",
        Purpose::Confirm => "confirm",
    }
}

/// What a sweep says after its table: where each target saturated, and why the sweep ended;
/// with whether any target answered at all (a sweep nothing answered measured no server, as a
/// run would not).
pub fn sweep_summary(r: &SweepResult) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    let mut answered = r.steps.is_empty();
    for (i, k) in r.knees().into_iter().enumerate() {
        let runs = r.steps.iter().filter_map(|s| s.runs.get(i));
        let answers = herd_result::answers::series_answers(&r.targets[i].url, runs);
        lines.extend(answers.warnings.iter().cloned());
        if answers.nothing_answered {
            // "Saturated from the first level" would blame a server that is not there.
            continue;
        }
        answered = true;
        lines.push(k.sentence_in(&r.level_unit()));
        if k.limited_steps > 0 {
            lines.push(format!(
                "{}: some steps were limited by herd itself (marked LIMITED): their numbers describe herd, not the server",
                k.name
            ));
        }
    }
    if let Some(why) = &r.stopped_early {
        lines.push(format!("stopped early: {why}"));
    }
    if r.interrupted {
        lines.push("interrupted: later levels did not run".to_owned());
    }
    (lines, answered)
}

/// What a capacity search says after its probe table: the warnings, the answer (unless nothing
/// answered), the knee and the listen queue; with whether anything answered.
pub fn capacity_answer(result: &CapacityResult, url: &str, unit: &str) -> (Vec<String>, bool) {
    let answers =
        herd_result::answers::series_answers(url, result.probes.iter().map(|p| &p.result));
    let mut lines = answers.warnings.clone();
    // A search nothing answered found no server: no sentence about its capacity.
    let answered = !answers.nothing_answered || result.probes.is_empty();
    if answered {
        lines.push(result.sentence.clone());
    }
    lines.extend(knee_line(result, unit));
    if let Some(b) = backlog_note(result, unit) {
        lines.push(format!("LISTEN QUEUE FULL {b}"));
    }
    (lines, answered)
}
