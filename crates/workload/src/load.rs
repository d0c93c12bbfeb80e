//! The `load:` section: stages, shorthands and seed 003's named test types, compiled to the
//! engine's plain load description.
//!
//! Profiles (parts as in seed 003; `duration` scales them all to a new total, `ramp_up`,
//! `hold` and `ramp_down` then set parts one by one):
//!
//! | profile | ramp-up | steady state | ramp-down | shape |
//! |---|---|---|---|---|
//! | peak   | 30m | 2h  | 5m | to `target`, hold, down |
//! | stress | 8h  | 0   | 5m | eight steps up to twice `target` (each a quick ramp, then a hold), down |
//! | soak   | 30m | 24h | 5m | to `target`, a long hold, down |
//! | flood  | 0   | 2h  | 5m | everyone at once (the thundering herd), hold, down |

use crate::diag::{did_you_mean, Diag};
use crate::read::{Fields, Reader};
use crate::yaml::Node;
use herd_engine::{Load, Process, Stage};
use std::time::Duration;

/// Default connection cap of the open model, as `herd run --rate`.
pub const DEFAULT_OPEN_CAP: u64 = 1000;

#[derive(Clone, Debug, PartialEq)]
pub struct LoadPlan {
    pub load: Load,
    pub duration: Option<Duration>,
    /// Measured iterations (closed or open), when the file bounds the run by count.
    pub iterations: Option<u64>,
    pub warmup: Duration,
    pub stages: Vec<Stage>,
    pub threads: Option<usize>,
    /// Open model: how arrivals are spaced (`arrivals: poisson`), drawn from the file's `seed`.
    pub process: Process,
}

const KEYS: [&str; 14] = [
    "model",
    "stages",
    "warmup",
    "users",
    "rate",
    "duration",
    "iterations",
    "profile",
    "target",
    "ramp_up",
    "hold",
    "ramp_down",
    "max_connections",
    "arrivals",
];
const PROFILES: [&str; 4] = ["peak", "stress", "soak", "flood"];

pub fn read_load(r: &mut Reader, node: &Node) -> Option<LoadPlan> {
    let mut keys = KEYS.to_vec();
    keys.push("threads");
    let f = r.fields(node, "load", &keys)?;
    let open = f.get("model").is_some_and(|m| read_model(r, m));
    let warmup = f
        .get("warmup")
        .and_then(|w| r.duration(w, "warmup"))
        .unwrap_or_default();
    let threads = f
        .get("threads")
        .and_then(|t| r.count(t, "threads"))
        .map(|t| t as usize);
    let cap = f
        .get("max_connections")
        .and_then(|c| r.count(c, "max_connections"));
    let process = f
        .get("arrivals")
        .map_or(Process::Constant, |a| read_arrivals(r, a, open));
    let how = ["stages", "profile", "users", "rate"]
        .into_iter()
        .filter(|k| f.has(k))
        .collect::<Vec<_>>();
    let mut stages = Vec::new();
    let (mut duration, mut iterations) = (None, None);
    let level;
    match how.as_slice() {
        ["stages"] => {
            stages = read_stages(r, f.get("stages")?, node);
            level = stages.iter().map(|s| s.target).fold(0.0, f64::max);
        }
        ["profile"] => {
            stages = read_profile(r, &f, open)?;
            level = stages.iter().map(|s| s.target).fold(0.0, f64::max);
        }
        ["users"] | ["rate"] => {
            (level, duration, iterations) = read_level(r, &f, node, how[0], open)?;
        }
        [] => {
            r.report(
                Diag::new(
                    node.at,
                    "the load needs `stages`, a `profile`, or `users`/`rate` with a `duration`",
                )
                .hint("e.g. { model: closed, users: 10, duration: 1m }"),
            );
            return None;
        }
        _ => {
            r.report(Diag::new(
                node.at,
                format!("give one of {} in the load, not several", how.join(", ")),
            ));
            return None;
        }
    }
    if !stages.is_empty() {
        for k in ["duration", "iterations"] {
            if let (Some(v), false) = (f.get(k), how == ["profile"] && k == "duration") {
                r.report(Diag::new(
                    v.at,
                    format!("`{k}` does not go with stages: they set the length"),
                ));
            }
        }
    }
    let load = if open {
        Load::Open {
            rate: level,
            max_connections: cap.unwrap_or(DEFAULT_OPEN_CAP),
        }
    } else {
        if let Some(c) = f.get("max_connections") {
            r.report(Diag::new(
                c.at,
                "`max_connections` is for the open model; the closed model opens one per user",
            ));
        }
        Load::Closed {
            users: level.ceil().max(0.0) as u64,
        }
    };
    Some(LoadPlan {
        load,
        duration,
        iterations,
        warmup,
        stages,
        threads,
        process,
    })
}

/// `model:`: whether it is open (iterations per second) rather than closed (virtual users).
fn read_model(r: &mut Reader, m: &Node) -> bool {
    match m.scalar().unwrap_or_default() {
        "closed" => false,
        "open" => true,
        other => {
            let hint = did_you_mean(other, ["closed", "open"])
                .unwrap_or_else(|| "closed (virtual users) or open (iterations per second)".into());
            r.report(Diag::new(m.at, format!("`{other}` is not a load model")).hint(hint));
            false
        }
    }
}

/// `arrivals:`: how the open model's arrivals are spaced.
fn read_arrivals(r: &mut Reader, a: &Node, open: bool) -> Process {
    let name = a.scalar().unwrap_or_default();
    let names = ["constant", "poisson", "uniform"];
    match Process::parse(name) {
        Some(_) if !open => {
            r.report(
                Diag::new(a.at, "`arrivals` spaces the open model's arrivals")
                    .hint("give `model: open` and a `rate`, or drop `arrivals`"),
            );
            Process::Constant
        }
        Some(p) => p,
        None => {
            let hint =
                did_you_mean(name, names).unwrap_or_else(|| "constant, poisson or uniform".into());
            r.report(Diag::new(a.at, format!("`{name}` is not an arrival process")).hint(hint));
            Process::Constant
        }
    }
}

/// `stages:`: each a `{ duration, target }`.
fn read_stages(r: &mut Reader, node: &Node, load: &Node) -> Vec<Stage> {
    let mut stages = Vec::new();
    for s in r.seq(node, "stages").unwrap_or_default() {
        let Some(sf) = r.fields(s, "a stage", &["duration", "target"]) else {
            continue;
        };
        let d = sf
            .get("duration")
            .and_then(|d| r.duration(d, "stage duration"));
        let t = sf.get("target").and_then(|t| r.number(t, "stage target"));
        if !sf.has("duration") || !sf.has("target") {
            r.report(
                Diag::new(s.at, "a stage needs `duration` and `target`")
                    .hint("e.g. { duration: 30s, target: 50 }"),
            );
        }
        if let (Some(duration), Some(target)) = (d, t) {
            if target < 0.0 {
                r.error(s.at, "a stage target must be 0 or more");
            }
            stages.push(Stage { duration, target });
        }
    }
    if stages.is_empty() {
        r.error(
            load.at,
            "`stages` is empty: give at least one { duration, target }",
        );
    }
    stages
}

/// `profile:` with its `target` and parts: the stages of one of seed 003's test types.
fn read_profile(r: &mut Reader, f: &Fields, open: bool) -> Option<Vec<Stage>> {
    let p = f.get("profile")?;
    let name = p.scalar().unwrap_or_default();
    if !PROFILES.contains(&name) {
        let hint = did_you_mean(name, PROFILES)
            .unwrap_or_else(|| "one of peak, stress, soak, flood".into());
        r.report(Diag::new(p.at, format!("`{name}` is not a profile")).hint(hint));
        return None;
    }
    let Some(target) = f.get("target").and_then(|t| r.number(t, "target")) else {
        if !f.has("target") {
            r.report(
                Diag::new(p.at, format!("profile `{name}` needs a `target`")).hint(if open {
                    "iterations per second at the peak"
                } else {
                    "virtual users at the peak"
                }),
            );
        }
        return None;
    };
    let total = f.get("duration").and_then(|d| r.duration(d, "duration"));
    let part = |r: &mut Reader, k: &str| f.get(k).and_then(|d| r.duration(d, k));
    let (up, hold, down) = (part(r, "ramp_up"), part(r, "hold"), part(r, "ramp_down"));
    Some(profile(name, target, total, up, hold, down))
}

/// `users:` or `rate:` (`k`) held for a `duration` or a number of `iterations`: (the level,
/// the duration, the iterations).
#[allow(clippy::type_complexity)]
fn read_level(
    r: &mut Reader,
    f: &Fields,
    node: &Node,
    k: &str,
    open: bool,
) -> Option<(f64, Option<Duration>, Option<u64>)> {
    if (k == "users") == open {
        let want = if open { "rate" } else { "users" };
        r.report(Diag::new(
            f.get(k)?.at,
            format!(
                "the {} model takes `{want}`, not `{k}`",
                if open { "open" } else { "closed" }
            ),
        ));
    }
    let level = f.get(k).and_then(|v| r.number(v, k)).unwrap_or(1.0);
    // Said here, with the line, rather than by the plan in the CLI's words.
    if level <= 0.0 || (k == "users" && level < 1.0) {
        let at = f.get(k)?.at;
        let (least, hint) = match k {
            "users" => ("at least 1", "e.g. users: 10"),
            _ => ("above 0", "iterations per second, e.g. rate: 20"),
        };
        r.report(Diag::new(at, format!("`{k}` must be {least}")).hint(hint));
    }
    let duration = f.get("duration").and_then(|d| r.duration(d, "duration"));
    let iterations = f.get("iterations").and_then(|n| r.count(n, "iterations"));
    if !f.has("duration") && !f.has("iterations") {
        r.report(
            Diag::new(
                node.at,
                "the load needs a `duration` or a number of `iterations` to end",
            )
            .hint("e.g. duration: 1m"),
        );
    }
    Some((level, duration, iterations))
}

fn mins(m: u64) -> Duration {
    Duration::from_secs(m * 60)
}

/// The stages of a named profile (seed 003's test types).
pub fn profile(
    name: &str,
    target: f64,
    total: Option<Duration>,
    up: Option<Duration>,
    hold: Option<Duration>,
    down: Option<Duration>,
) -> Vec<Stage> {
    let (u, h, d) = match name {
        "peak" => (mins(30), mins(120), mins(5)),
        "stress" => (mins(480), Duration::ZERO, mins(5)),
        "soak" => (mins(30), mins(24 * 60), mins(5)),
        _ => (Duration::ZERO, mins(120), mins(5)),
    };
    let scale = total.map_or(1.0, |t| t.as_secs_f64() / (u + h + d).as_secs_f64());
    let (u, h, d) = (
        up.unwrap_or(u.mul_f64(scale)),
        hold.unwrap_or(h.mul_f64(scale)),
        down.unwrap_or(d.mul_f64(scale)),
    );
    let stage = |duration, target| Stage { duration, target };
    let mut stages = Vec::new();
    if name == "stress" {
        const STEPS: u32 = 8;
        let step = u / STEPS;
        for k in 1..=STEPS {
            let level = target * 2.0 * f64::from(k) / f64::from(STEPS);
            stages.push(stage(step / 10, level));
            stages.push(stage(step - step / 10, level));
        }
        let top = target * 2.0;
        if !h.is_zero() {
            stages.push(stage(h, top));
        }
    } else {
        stages.push(stage(u, target));
        stages.push(stage(h, target));
    }
    stages.push(stage(d, 0.0));
    stages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(stages: &[Stage]) -> Vec<(u64, f64)> {
        stages
            .iter()
            .map(|s| (s.duration.as_secs(), s.target))
            .collect()
    }

    #[test]
    fn profiles_follow_seed_003_and_scale() {
        let peak = profile("peak", 50.0, None, None, None, None);
        assert_eq!(secs(&peak), vec![(1800, 50.0), (7200, 50.0), (300, 0.0)]);
        // 31 minutes in all, same proportions
        let short = profile("peak", 50.0, Some(mins(31)), None, None, None);
        assert_eq!(secs(&short), vec![(360, 50.0), (1440, 50.0), (60, 0.0)]);
        let custom = profile(
            "soak",
            10.0,
            None,
            Some(mins(1)),
            Some(mins(2)),
            Some(Duration::ZERO),
        );
        assert_eq!(secs(&custom), vec![(60, 10.0), (120, 10.0), (0, 0.0)]);
        let flood = profile("flood", 1000.0, Some(mins(125)), None, None, None);
        assert_eq!(secs(&flood), vec![(0, 1000.0), (7200, 1000.0), (300, 0.0)]);
        let stress = profile(
            "stress",
            100.0,
            Some(Duration::from_secs(8 * 100 + 10)),
            None,
            None,
            None,
        );
        assert_eq!(stress.len(), 17);
        assert_eq!(stress[1].target, 25.0);
        assert_eq!(stress[15].target, 200.0, "ends at twice the target");
        assert_eq!(stress[16].target, 0.0);
    }
}
