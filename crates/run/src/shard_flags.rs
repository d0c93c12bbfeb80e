//! The shard flags as given (`--shard I/N`, `--shard-from-env VAR --shards N`, `--start-at`,
//! `--late`), the same for every kind of run and every series: read into a [`ShardRun`] with
//! every problem at once, before anything is sent.

use crate::shard::{Late, Shard, ShardRun};
use herd_result::units::{self, Bare};
use std::time::{Duration, SystemTime};

/// Which part of a run this instance plays and when it starts, as the flags say it.
#[derive(Clone, Debug, Default)]
pub struct ShardFlags {
    /// `--shard I/N`.
    pub shard: Option<String>,
    /// `--shard-from-env VAR`: the shard index I read from this environment variable.
    pub shard_from_env: Option<String>,
    /// `--shards N`, with `--shard-from-env`.
    pub shards: Option<u64>,
    /// `--start-at`: an RFC 3339 time in whole seconds, or `+DURATION` from now.
    pub start_at: Option<String>,
    /// `--late`: what an instance ready after the start instant does.
    pub late: Late,
}

impl ShardFlags {
    /// Whether any shard flag was given.
    pub fn given(&self) -> bool {
        self.shard.is_some()
            || self.shard_from_env.is_some()
            || self.shards.is_some()
            || self.start_at.is_some()
            || self.late != Late::Fail
    }

    /// Checks the flags, reading `--shard-from-env`'s variable from `env` and `--start-at
    /// +DURATION` from `now`; every problem at once. `None` when the run is not sharded.
    pub fn resolve(
        &self,
        env: impl Fn(&str) -> Option<String>,
        now: SystemTime,
    ) -> Result<Option<ShardRun>, Vec<String>> {
        resolve(self, env, now)
    }
}

fn resolve(
    a: &ShardFlags,
    env: impl Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Result<Option<ShardRun>, Vec<String>> {
    let mut problems = Vec::new();
    let shard = match (&a.shard, &a.shard_from_env, a.shards) {
        (Some(s), None, None) => Shard::parse(s).map_err(|e| e.0),
        (Some(_), None, Some(_)) => Err(
            "--shards goes with --shard-from-env; --shard I/N already says N".to_owned(),
        ),
        (None, Some(var), Some(n)) => match env(var) {
            None => Err(format!(
                "--shard-from-env {var}: the environment variable {var} is not set (Kubernetes sets JOB_COMPLETION_INDEX in Indexed Jobs)"
            )),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(i) => Shard::new(i, n).map_err(|e| format!("--shard-from-env {var}={v}: {e}")),
                Err(_) => Err(format!(
                    "--shard-from-env {var}: its value `{v}` is not a shard index (0, 1, 2, ...)"
                )),
            },
        },
        (None, Some(_), None) => Err("--shard-from-env needs --shards N".to_owned()),
        (None, None, Some(_)) => {
            Err("--shards needs --shard-from-env VAR (or write --shard I/N)".to_owned())
        }
        (None, None, None) => {
            if a.start_at.is_some() {
                // A synchronised start is useful alone too: several plain runs at one instant.
                Shard::new(0, 1).map_err(|e| e.0)
            } else if a.late != Late::Fail {
                return Err(vec!["--late needs --start-at".to_owned()]);
            } else {
                return Ok(None);
            }
        }
        (Some(_), Some(_), _) => Err("give --shard or --shard-from-env, not both".to_owned()),
    };
    let start_at = match a.start_at.as_deref().map(|s| parse_start_at(s, now)) {
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            problems.push(e);
            None
        }
        None => None,
    };
    if a.late != Late::Fail && a.start_at.is_none() {
        problems.push("--late needs --start-at".to_owned());
    }
    let shard = shard.map_err(|e| problems.insert(0, e)).ok();
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(shard.map(|shard| ShardRun {
        shard,
        start_at,
        late: a.late,
        stride: Duration::ZERO,
    }))
}

/// `2026-12-01T12:00:00Z` or `+90s`. Instants are whole seconds so the shards' timelines line
/// up on absolute seconds; `+DURATION` is rounded up to the next whole second.
pub fn parse_start_at(s: &str, now: SystemTime) -> Result<SystemTime, String> {
    let t = s.trim();
    if let Some(rel) = t.strip_prefix('+') {
        let d = units::duration(rel, Bare::Allowed).map_err(|e| format!("--start-at {s}: {e}"))?;
        let at = now + d;
        let secs = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_err(|_| format!("--start-at {s}: the clock is before 1970"))?;
        let whole = secs.as_secs() + u64::from(secs.subsec_nanos() > 0);
        return Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(whole));
    }
    let at = humantime::parse_rfc3339(t).map_err(|_| {
        format!(
            "--start-at `{s}` is not a time: write 2026-12-01T12:00:00Z (RFC 3339, UTC) or +90s"
        )
    })?;
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    if since.subsec_nanos() != 0 {
        return Err(format!(
            "--start-at `{s}` has a fraction of a second: give a whole second so the shards' timelines line up"
        ));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(shard: Option<&str>, env: Option<&str>, n: Option<u64>) -> ShardFlags {
        ShardFlags {
            shard: shard.map(Into::into),
            shard_from_env: env.map(Into::into),
            shards: n,
            ..ShardFlags::default()
        }
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(1_800_000_000_400)
    }

    #[test]
    fn shard_flags_resolve_or_say_what_to_write() {
        let no_env = |_: &str| None;
        let env = |v: &str| (v == "JOB_COMPLETION_INDEX").then(|| "2".to_owned());
        let r = resolve(&args(Some("1/4"), None, None), no_env, now())
            .unwrap()
            .unwrap();
        assert_eq!(r.shard.to_string(), "1/4");
        let r = resolve(
            &args(None, Some("JOB_COMPLETION_INDEX"), Some(3)),
            env,
            now(),
        );
        assert_eq!(r.unwrap().unwrap().shard.to_string(), "2/3");
        assert!(resolve(&args(None, None, None), no_env, now())
            .unwrap()
            .is_none());
        for (a, want) in [
            (args(Some("4/4"), None, None), "numbered 0 to 3"),
            (args(Some("x"), None, None), "write I/N"),
            (args(None, Some("NOPE"), Some(3)), "NOPE is not set"),
            (
                args(None, Some("JOB_COMPLETION_INDEX"), Some(2)),
                "numbered 0 to 1",
            ),
            (args(None, None, Some(3)), "--shards needs --shard-from-env"),
            (
                args(Some("0/2"), None, Some(2)),
                "--shard I/N already says N",
            ),
        ] {
            let e = resolve(&a, env, now()).unwrap_err().join("\n");
            assert!(e.contains(want), "{a:?}: {e}");
        }
        let late = ShardFlags {
            late: Late::Skip,
            ..ShardFlags::default()
        };
        assert!(resolve(&late, no_env, now()).unwrap_err()[0].contains("--start-at"));
    }

    #[test]
    fn start_instants_are_whole_seconds() {
        let secs = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64()
        };
        assert_eq!(
            secs(parse_start_at("+90s", now()).unwrap()),
            1_800_000_091.0
        );
        assert_eq!(
            secs(parse_start_at("2027-01-15T08:00:00Z", now()).unwrap()),
            1_800_000_000.0
        );
        assert!(parse_start_at("2027-01-15T08:00:00.5Z", now())
            .unwrap_err()
            .contains("whole second"));
        assert!(parse_start_at("noon", now())
            .unwrap_err()
            .contains("RFC 3339"));
        assert!(parse_start_at("+soon", now())
            .unwrap_err()
            .contains("not a duration"));
    }
}
