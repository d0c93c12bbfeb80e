//! A shard of a run (docs/distributed.md): the stripe of the plan this instance plays
//! (`Plan::shard`, k6's execution segments), the shared instant it starts on, waited for after
//! every check, and the header its result carries so `herd merge` adds the shards up exactly.
//! Every kind of run and every series takes it the same way, as [`crate::RunSpec::shard`].

use crate::what::What;
use crate::{Length, Level, RunError, Sink};
pub use herd_engine::Shard;
use herd_engine::{Control, Plan};
use herd_result::{RunConfig, RunResult, ShardHeader, ShardInstance};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// What an instance ready after its start instant does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Late {
    /// Send nothing and fail (the CLI exits 7); `herd merge` reports the shard missing.
    #[default]
    Fail,
    /// Play the rest of the schedule, counting the arrivals it missed.
    Skip,
}

/// How late past the start instant an instance may still begin and count as on time.
pub const GRACE: Duration = Duration::from_secs(1);

/// Which share of a run this instance plays, and when.
#[derive(Clone, Debug)]
pub struct ShardRun {
    pub shard: Shard,
    /// The shared start instant (`--start-at`), a whole second.
    pub start_at: Option<SystemTime>,
    pub late: Late,
    /// A series' runs start one stride apart: the `k`th run of a spec on `start_at + k x
    /// stride`, so every shard's step `k` starts together (zero for a single run).
    pub stride: Duration,
}

impl ShardRun {
    /// The whole plan (`0/1`) on a shared instant: several plain runs started together.
    pub fn whole(start_at: Option<SystemTime>, late: Late) -> ShardRun {
        ShardRun {
            shard: Shard::new(0, 1).expect("0/1 is a shard"),
            start_at,
            late,
            stride: Duration::ZERO,
        }
    }

    /// A sharded series' runs start on shared instants: every step of every target has a slot
    /// of whole seconds (its warm-up and length, the drain of at most 2 s, the cooldown and 1 s
    /// to spare), so each shard's step `k` of target `target` starts with the others' wherever
    /// each ended the last one. Steps ended by a request count have no known length: unchanged.
    pub fn in_series(
        mut self,
        length: Length,
        warmup: Option<Duration>,
        cooldown: Duration,
        target: usize,
        targets: usize,
    ) -> ShardRun {
        let Length::Time(step) = length else {
            return self;
        };
        let slot = warmup.unwrap_or_default() + step + Duration::from_secs(3) + cooldown;
        let slot = Duration::from_secs(slot.as_secs() + u64::from(slot.subsec_nanos() > 0));
        self.start_at = self.start_at.map(|at| at + slot * target as u32);
        self.stride = slot * targets as u32;
        self
    }

    /// The start instant of this spec's `k`th run.
    pub fn instant(&self, k: u64) -> Option<SystemTime> {
        self.start_at
            .map(|at| at + self.stride.saturating_mul(k.min(u32::MAX as u64) as u32))
    }
}

/// SHA-256 (hex) over the parts that define a plan, each length-prefixed so no two plans
/// collide by concatenation. Machine-dependent settings (threads, routes) are left out.
pub fn plan_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What every shard of one run shares, hashed: the run's settings at its level (threads,
/// routes and the local address left out: each machine has its own) and what it sends (a
/// URL's request, a file and the data files it names, a log's arrivals). Shards of different
/// plans never merge.
pub(crate) fn run_hash(
    what: &What,
    config: &RunConfig,
    level: Option<Level>,
    length: Option<Length>,
) -> String {
    let mut config = config.clone();
    config.threads = 0;
    let mut json = Vec::new();
    let _ = herd_result::write_json(&config, &mut json);
    let mut parts = vec![json, format!("{level:?} {length:?}").into_bytes()];
    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
    match what {
        What::Url(r) => parts.push(r.request.bytes.to_vec()),
        What::Script { request, file, .. } => {
            parts.push(request.request.bytes.to_vec());
            parts.push(read(file));
        }
        What::UrlFile { request, file, .. } => {
            parts.push(request.request.bytes.to_vec());
            parts.push(read(file));
        }
        What::Workload { file, .. } => {
            let text = read(file);
            let base = file.parent().unwrap_or(Path::new("."));
            let data = herd_workload::needs::needs(&String::from_utf8_lossy(&text)).0;
            parts.push(text);
            for d in data {
                parts.push(read(&base.join(&d.path)));
                parts.push(d.path.into_bytes());
            }
        }
        What::Replay { replay, .. } => {
            let offsets = replay
                .arrivals
                .iter()
                .flat_map(|o| o.as_nanos().to_le_bytes());
            parts.push(offsets.collect());
            parts.push(
                replay
                    .script
                    .ids
                    .iter()
                    .flat_map(|i| i.to_le_bytes())
                    .collect(),
            );
            parts.extend(replay.script.requests.iter().map(|r| r.bytes.to_vec()));
        }
    }
    plan_hash(parts.iter().map(Vec::as_slice))
}

/// How the wait for a start instant went.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Started {
    pub lag: Duration,
    pub late: bool,
}

/// Waits until `at` (Ctrl-C ends the wait), or refuses to start too late.
pub(crate) fn wait(
    run: &ShardRun,
    at: Option<SystemTime>,
    control: &Control,
    sink: &mut dyn Sink,
) -> Result<Started, RunError> {
    let Some(at) = at else {
        return Ok(Started::default());
    };
    let label = run.shard.to_string();
    let shown = humantime::format_rfc3339_seconds(at);
    if let Ok(behind) = SystemTime::now().duration_since(at) {
        if behind > GRACE {
            if run.late == Late::Fail {
                return Err(RunError::Late(format!(
                    "shard {label} was ready {:.1} s after the start instant {shown}: it sends nothing, and herd merge will report it missing (--late skip plays the rest instead)",
                    behind.as_secs_f64(),
                )));
            }
            crate::tell(
                sink,
                &format!(
                    "shard {label} is {:.1} s late (--late skip): it plays the rest of the run",
                    behind.as_secs_f64()
                ),
            );
            return Ok(Started {
                lag: behind,
                late: true,
            });
        }
    }
    crate::tell(sink, &format!("shard {label} ready, starting at {shown}"));
    loop {
        if control.is_cancelled() {
            return Err(RunError::Interrupted(
                "interrupted while waiting for the start instant; nothing was sent".into(),
            ));
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

/// How late a plan starts (`Plan::late`) when its shard was ready `late` after the start
/// instant: a plan with a length plays the rest of it, unless nothing is left; one ended by a
/// request count (`-n`) just starts.
pub(crate) fn late_start(plan: &Plan, late: Duration) -> Result<Duration, RunError> {
    match plan.length() {
        Some(length) if late >= length => Err(RunError::Late(format!(
            "this shard was ready {:.1} s after the start instant, after the whole run ({:.1} s) had ended: nothing is left to play",
            late.as_secs_f64(),
            length.as_secs_f64()
        ))),
        Some(_) => Ok(late),
        None => Ok(Duration::ZERO),
    }
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

/// The header of this shard's result, and the absolute second its timeline starts in (the
/// start instant's, when there is one).
pub(crate) fn header(
    run: &ShardRun,
    at: Option<SystemTime>,
    plan_hash: String,
    started: Started,
) -> (ShardHeader, Option<u64>) {
    let (synced, max_error) = clock_status();
    let start = at.map(|at| {
        at.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
    });
    let header = ShardHeader {
        plan_hash,
        count: run.shard.count,
        start_at: at.map(|t| humantime::format_rfc3339_seconds(t).to_string()),
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
        // A shard's own file covers one shard: "missing" is for merged results.
        missing: Vec::new(),
    };
    (header, start)
}

/// Stamps a finished shard's result: its header, its timeline on the start instant, and what
/// a late start missed (rates over the part played; the seconds missed are no samples).
pub(crate) fn stamp(
    result: &mut RunResult,
    (mut header, start): (ShardHeader, Option<u64>),
    late: Duration,
    missed: u64,
    sink: &mut dyn Sink,
) {
    if header.instances.first().and_then(|i| i.clock_synchronised) == Some(false) {
        crate::tell(
            sink,
            "warning: this machine's clock is not synchronised (adjtimex): its share of the schedule may be shifted; run NTP (chrony) on every generator",
        );
    }
    if missed > 0 {
        let late_s = late.as_secs_f64().min(result.duration_s);
        let played = (result.duration_s - late_s).max(1e-6);
        result.throughput_rps = result.totals.completed as f64 / played;
        for e in &mut result.timeline {
            if (e.t as f64) < late_s.ceil() {
                e.partial = true;
            }
        }
    }
    if let Some(i) = header.instances.first_mut() {
        i.missed = missed;
    }
    if start.is_some() {
        result.timeline_start_unix_s = start;
    }
    result.shard = Some(header);
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

    #[test]
    fn a_series_runs_start_one_stride_apart() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let run = ShardRun {
            stride: Duration::from_secs(15),
            ..ShardRun::whole(Some(at), Late::Fail)
        };
        assert_eq!(run.instant(0), Some(at));
        assert_eq!(run.instant(2), Some(at + Duration::from_secs(30)));
        assert_eq!(ShardRun::whole(None, Late::Fail).instant(3), None);
    }
}
