//! Shards end to end: `herd run --shard I/N --start-at`, `herd merge`, `herd k8s render` and
//! `herd k8s collect`, against the mock server.
//!
//! Each shard plays its stripe of the plan (crates/engine/tests/engine/segment.rs proves the
//! arithmetic; `split` runs the split against nginx and a server that refuses shared logins).

use crate::common::Herd;

mod merge;
mod series;
mod split;
mod start;

/// Starts `herd run` for shard `i` of `n` (or the whole plan) of an open-model plan against
/// `url`, from its own loopback address, writing `json`.
pub fn spawn_shard(
    url: &str,
    load: &[&str],
    shard: Option<(u64, u64)>,
    json: &std::path::Path,
) -> std::process::Child {
    let mut cmd = Herd::new(&["run", url, "-t", "1", "-q"]).args(load);
    if let Some((i, n)) = shard {
        cmd = cmd
            .args(&["--shard", &format!("{i}/{n}"), "--start-at", "+2s"])
            .args(&["--bind", &format!("127.0.0.{}", i + 2)]);
    }
    cmd.file("--json", json).spawn()
}
