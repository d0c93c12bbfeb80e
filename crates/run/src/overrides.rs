//! A workload file run with load flags beside it (`herd run shop.yaml -d 12s -c 5`): the flag
//! wins over the file's `load:` (k6's order: the command line over the file), and the summary
//! says which did ("duration 12s from the command line; the file says 10m").

use crate::{LoadFlags, DEFAULT_OPEN_CAP};
use herd_engine::{Load, Plan};
use herd_result::format::{count, rate};

/// A duration as users write it in flags and files: `12s`, `10m`, `1h30m`.
fn written(d: std::time::Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// `plan` (a workload file's own) with the command line's duration, request count, users or
/// connections and rate in place of the file's. A file's stages are a shape of load the flags
/// replace: with any of them given, the run holds the flags' load (or the stages' peak) flat.
pub(crate) fn apply(plan: &mut Plan, f: &LoadFlags) {
    if !given(f) {
        return;
    }
    let peak = plan.stages.iter().map(|s| s.target).fold(0.0, f64::max);
    if !plan.stages.is_empty() {
        match &mut plan.load {
            Load::Closed { users } => *users = (peak.round() as u64).max(1),
            Load::Open { rate, .. } => *rate = peak.max(f64::MIN_POSITIVE),
        }
        // The stages gave the run its length: without a flag for it, keep theirs.
        if plan.duration.is_none() && plan.requests.is_none() {
            plan.duration = Some(plan.stages.iter().map(|s| s.duration).sum());
        }
        plan.stages.clear();
    }
    if f.duration.is_some() || f.requests.is_some() {
        plan.duration = f.duration;
        plan.requests = f.requests;
    }
    match (f.rate, f.connections, &mut plan.load) {
        (Some(rate), c, load) => {
            let cap = match load {
                Load::Open {
                    max_connections, ..
                } => *max_connections,
                Load::Closed { .. } => DEFAULT_OPEN_CAP,
            };
            *load = Load::Open {
                rate,
                max_connections: c.unwrap_or(cap),
            };
        }
        (None, Some(c), Load::Closed { users }) => *users = c,
        (
            None,
            Some(c),
            Load::Open {
                max_connections, ..
            },
        ) => *max_connections = c,
        (None, None, _) => {}
    }
}

fn given(f: &LoadFlags) -> bool {
    f.duration.is_some() || f.requests.is_some() || f.connections.is_some() || f.rate.is_some()
}

/// What the command line changed of the file's load and target, one sentence each, for the
/// summary: `file` is the plan of the file alone, `played` the one played.
pub(crate) fn said(
    file: &Plan,
    played: &Plan,
    f: &LoadFlags,
    target: Option<(&str, &str)>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((given, own)) = target {
        out.push(format!(
            "target {given} from the command line; the file says {own}"
        ));
    }
    if !given(f) {
        return out;
    }
    let file_length = || match (file.duration, file.requests, file.stages.is_empty()) {
        (_, _, false) => format!("{} stages", count(file.stages.len() as u64)),
        (Some(d), _, _) => written(d),
        (None, Some(n), _) => format!("{} iterations", count(n)),
        (None, None, _) => "no length".to_owned(),
    };
    if let Some(d) = f.duration {
        out.push(format!(
            "duration {} from the command line; the file says {}",
            written(d),
            file_length()
        ));
    }
    if let Some(n) = f.requests {
        out.push(format!(
            "{} iterations from the command line; the file says {}",
            count(n),
            file_length()
        ));
    }
    let file_load = match (&file.load, file.stages.is_empty()) {
        (_, false) => format!("{} stages", count(file.stages.len() as u64)),
        (Load::Closed { users }, _) => format!("{} users", count(*users)),
        (Load::Open { rate: r, .. }, _) => format!("{} req/s", rate(*r)),
    };
    match (&played.load, f.rate, f.connections) {
        (Load::Open { rate: r, .. }, Some(_), _) => out.push(format!(
            "rate {} req/s from the command line; the file says {file_load}",
            rate(*r)
        )),
        (Load::Closed { users }, None, Some(_)) => out.push(format!(
            "{} users from the command line; the file says {file_load}",
            count(*users)
        )),
        (
            Load::Open {
                max_connections, ..
            },
            None,
            Some(_),
        ) => out.push(format!(
            "at most {} connections from the command line",
            count(*max_connections)
        )),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_flag_wins_over_the_file_and_says_so() {
        let file = Plan {
            load: Load::Closed { users: 50 },
            duration: Some(Duration::from_secs(600)),
            ..Plan::default()
        };
        let f = LoadFlags {
            duration: Some(Duration::from_secs(12)),
            connections: Some(5),
            ..LoadFlags::default()
        };
        let mut played = file.clone();
        apply(&mut played, &f);
        assert_eq!(played.duration, Some(Duration::from_secs(12)));
        assert_eq!(played.load, Load::Closed { users: 5 });
        let said = said(&file, &played, &f, None);
        assert_eq!(
            said,
            [
                "duration 12s from the command line; the file says 10m",
                "5 users from the command line; the file says 50 users"
            ]
        );
        let f = LoadFlags {
            rate: Some(40.0),
            ..LoadFlags::default()
        };
        let mut played = file.clone();
        apply(&mut played, &f);
        assert!(matches!(played.load, Load::Open { rate, .. } if rate == 40.0));
        assert_eq!(played.duration, Some(Duration::from_secs(600)));
    }
}
