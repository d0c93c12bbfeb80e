//! Playing one shard: the plan's hash, waiting for the shared start instant, the clock's state,
//! the result's shard header, and the framed copy of the result printed for `kubectl logs`.

use crate::exit::{self, Exit};
use crate::shard_args::{Late, ShardRun, GRACE};
use herd_engine::Control;
use herd_result::{RunResult, ShardHeader, ShardInstance};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// SHA-256 (hex) over the parts that define a plan, each length-prefixed so no two plans
/// collide by concatenation. Machine-dependent settings (threads) are left out by callers.
pub fn plan_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A workload's plan: the file and the data files it names, as bytes.
pub fn workload_hash(file: &Path) -> Result<String, Exit> {
    let text = std::fs::read(file)
        .map_err(|e| Exit::bad_input(format!("cannot read {}: {e}", file.display())))?;
    let mut parts = vec![text.clone()];
    for data in crate::k8s::needs(&String::from_utf8_lossy(&text)).0 {
        let path = file.parent().unwrap_or(Path::new(".")).join(&data.path);
        parts.push(data.path.into_bytes());
        parts.push(std::fs::read(&path).unwrap_or_default());
    }
    Ok(plan_hash(parts.iter().map(Vec::as_slice)))
}

/// The shard flags of `herd run`, from the process's environment.
pub fn resolve(a: &crate::shard_args::ShardArgs) -> Result<Option<ShardRun>, Exit> {
    crate::shard_args::resolve(a, |v| std::env::var(v).ok(), SystemTime::now())
        .map_err(|p| Exit::bad_input(p.join("\n")))
}

/// A URL run's plan: its resolved settings but the machine's thread count, and its body.
pub fn config_hash(config: &herd_result::RunConfig, body: &[u8]) -> String {
    let mut c = config.clone();
    c.threads = 0;
    let mut json = Vec::new();
    let _ = herd_result::write_json(&c, &mut json);
    plan_hash([json.as_slice(), body])
}

/// Plays a prepared run as a shard: waits for the start, runs, stamps the header. `execute`
/// is given how late the run starts (`--late skip`: it plays the rest, see `Plan::late`) and
/// the shard's header (for what is written as the run goes), and returns the result with the
/// arrivals that lateness missed.
pub fn play(
    run: Option<&ShardRun>,
    hash: impl FnOnce() -> Result<String, Exit>,
    control: &Control,
    execute: impl FnOnce(Duration, Option<(ShardHeader, Option<u64>)>) -> Result<(RunResult, u64), Exit>,
) -> Result<RunResult, Exit> {
    let Some(run) = run else {
        return execute(Duration::ZERO, None).map(|(r, _)| r);
    };
    let hash = hash()?;
    let started = wait(run, control)?;
    let late = if started.late {
        started.lag
    } else {
        Duration::ZERO
    };
    // The plan carries the shard (`Plan::shard`): the engine plays only its stripe of the
    // arrivals, users, `-n` and connection cap; users' ids are global, so per-user data rows
    // differ between shards.
    let (mut result, missed) = execute(late, Some(header(run, hash.clone(), &started)))?;
    if missed > 0 {
        // The window counts from the shared instant, but nothing was sent before herd was
        // ready: rates are over the part played, and the seconds missed are no samples.
        let late_s = late.as_secs_f64().min(result.duration_s);
        let played = (result.duration_s - late_s).max(1e-6);
        result.throughput_rps = result.totals.completed as f64 / played;
        for e in &mut result.timeline {
            if (e.t as f64) < late_s.ceil() {
                e.partial = true;
            }
        }
    }
    stamp(&mut result, run, hash, &started);
    if let Some(i) = result.shard.as_mut().and_then(|h| h.instances.first_mut()) {
        i.missed = missed;
    }
    Ok(result)
}

/// How late a plan starts (`Plan::late`) when its shard was ready `late` after the start
/// instant: a plan with a length plays the rest of it, unless nothing is left; one ended by a
/// request count (`-n`) just starts.
pub fn late_start(plan: &herd_engine::Plan, late: Duration) -> Result<Duration, Exit> {
    match plan.length() {
        Some(length) if late >= length => Err(Exit {
            code: exit::LATE_START,
            message: format!(
                "this shard was ready {:.1} s after the start instant, after the whole run ({:.1} s) had ended: nothing is left to play",
                late.as_secs_f64(),
                length.as_secs_f64()
            ),
        }),
        Some(_) => Ok(late),
        None => Ok(Duration::ZERO),
    }
}

/// How the wait for the start instant went.
pub struct Started {
    pub lag: Duration,
    pub late: bool,
}

/// Waits until the start instant (Ctrl-C ends the wait), or refuses to start too late.
pub fn wait(run: &ShardRun, control: &Control) -> Result<Started, Exit> {
    let Some(at) = run.start_at else {
        return Ok(Started {
            lag: Duration::ZERO,
            late: false,
        });
    };
    let label = run.shard.to_string();
    if let Ok(behind) = SystemTime::now().duration_since(at) {
        if behind > GRACE {
            if run.late == Late::Fail {
                return Err(Exit {
                    code: exit::LATE_START,
                    message: format!(
                        "shard {label} was ready {:.1} s after the start instant {}: it sends nothing, and herd merge will report it missing (--late skip plays the rest instead)",
                        behind.as_secs_f64(),
                        humantime::format_rfc3339_seconds(at)
                    ),
                });
            }
            eprintln!(
                "herd: shard {label} is {:.1} s late (--late skip): it plays the rest of the run",
                behind.as_secs_f64()
            );
            return Ok(Started {
                lag: behind,
                late: true,
            });
        }
    }
    eprintln!(
        "herd: shard {label} ready, starting at {}",
        humantime::format_rfc3339_seconds(at)
    );
    loop {
        if control.is_cancelled() {
            return Err(Exit {
                code: exit::INTERRUPTED,
                message: "interrupted while waiting for the start instant; nothing was sent".into(),
            });
        }
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(50))),
            _ => break,
        }
    }
    Ok(Started {
        lag: SystemTime::now().duration_since(at).unwrap_or_default(),
        late: false,
    })
}

/// The kernel's view of the clock (adjtimex, read only): synchronised, and its maximum error.
pub fn clock_status() -> (Option<bool>, Option<f64>) {
    // SAFETY: `modes = 0` only reads; the struct is plain data the kernel fills in.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut tx) };
    if state < 0 {
        return (None, None);
    }
    let unsync = state == libc::TIME_ERROR || tx.status & libc::STA_UNSYNC != 0;
    (Some(!unsync), Some(tx.maxerror as f64 / 1e3))
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Sets the shard header on a finished result; with a start instant, the timeline starts on it.
pub fn stamp(result: &mut RunResult, run: &ShardRun, plan_hash: String, started: &Started) {
    let (header, start) = header(run, plan_hash, started);
    if header.instances.first().and_then(|i| i.clock_synchronised) == Some(false) {
        eprintln!(
            "herd: warning: this machine's clock is not synchronised (adjtimex): its share of the schedule may be shifted; run NTP (chrony) on every generator"
        );
    }
    if start.is_some() {
        result.timeline_start_unix_s = start;
    }
    result.shard = Some(header);
}

/// The header of this shard's result, and the absolute second its timeline starts in (the
/// start instant's, when there is one).
pub fn header(run: &ShardRun, plan_hash: String, started: &Started) -> (ShardHeader, Option<u64>) {
    let (synced, max_error) = clock_status();
    let start = run.start_at.map(|at| {
        at.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
    });
    let mut header = ShardHeader {
        plan_hash,
        count: run.shard.count,
        start_at: run
            .start_at
            .map(|t| humantime::format_rfc3339_seconds(t).to_string()),
        instances: vec![ShardInstance {
            index: run.shard.index,
            host: host(),
            herd_version: herd_result::HERD_VERSION.to_owned(),
            start_lag_ms: started.lag.as_secs_f64() * 1e3,
            clock_synchronised: synced,
            clock_max_error_ms: max_error,
            started_late: started.late,
            missed: 0,
        }],
        missing: Vec::new(),
    };
    header.compute_missing();
    // A shard's own file covers one shard: "missing" is for merged results.
    header.missing.clear();
    (header, start)
}

/// Prints the result as one framed block on standard error, for `kubectl logs` (which shows
/// both streams) and `herd k8s collect`; standard output keeps what a person reads.
pub fn print_frame(result: &RunResult) -> Result<(), Exit> {
    let mut json = Vec::new();
    herd_result::write_json(result, &mut json)
        .map_err(|e| Exit::bad_input(format!("cannot encode the result: {e}")))?;
    let label = result.shard.as_ref().map(|h| h.label()).unwrap_or_default();
    eprint!("{}", herd_result::frame::frame(&json, &label));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_hashes_are_length_prefixed_sha256() {
        let a = plan_hash([&b"ab"[..], b"c"]);
        assert_eq!(a.len(), 64);
        assert_ne!(a, plan_hash([&b"a"[..], b"bc"]));
        assert_eq!(a, plan_hash([&b"ab"[..], b"c"]));
    }

    #[test]
    fn clock_status_reads_without_privileges() {
        let (synced, err) = clock_status();
        assert!(synced.is_some() && err.is_some_and(|e| e >= 0.0));
    }
}
