//! `herd k8s collect`: each pod printed its result as a framed block in its log; the blocks are
//! read back (from `kubectl logs` or saved logs) and merged exactly.

use herd_result::RunResult;
use std::path::{Path, PathBuf};

/// Saved pod logs, one file per pod: (file name, text), in name order.
pub fn saved_logs(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}

/// The logs of the Job's pods, through kubectl: (pod name, text).
pub fn pod_logs(job: &str, namespace: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let ns: Vec<&str> = namespace.iter().flat_map(|n| ["--namespace", n]).collect();
    let kubectl = |args: &[&str]| -> Result<String, String> {
        let out = std::process::Command::new("kubectl")
            .args(args)
            .args(&ns)
            .output()
            .map_err(|e| {
                format!("cannot run kubectl: {e} (install it, or pass --from-logs DIR)")
            })?;
        if !out.status.success() {
            return Err(format!(
                "kubectl {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let selector = format!("job-name={job}");
    let pods = kubectl(&["get", "pods", "-l", &selector, "-o", "name"])?;
    let pods: Vec<&str> = pods
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if pods.is_empty() {
        return Err(format!(
            "no pods of Job {job} found: check its name and --namespace (kubectl get jobs)"
        ));
    }
    pods.iter()
        .map(|p| Ok((p.to_string(), kubectl(&["logs", p])?)))
        .collect()
}

/// The results framed in the pods' `logs`, merged: the merged result, and a note for each pod
/// whose shard counts as missing (`warn`, as they are found).
pub fn merge_logs(
    job: &str,
    logs: Vec<(String, String)>,
    mut warn: impl FnMut(String),
) -> Result<RunResult, String> {
    let mut merge = herd_result::merge::Merge::new();
    let mut found = 0;
    for (pod, text) in logs {
        let blocks = herd_result::frame::extract(&text);
        if blocks.is_empty() {
            warn(format!("{pod}: no result in its log (it failed or started too late): its shard counts as missing"));
        }
        for block in blocks {
            match block.map(|b| herd_result::parse_json(&String::from_utf8_lossy(&b), &pod)) {
                Ok(Ok(r)) => {
                    found += 1;
                    merge.add(&pod, r)
                }
                Ok(Err(e)) => warn(format!("{pod}: {e}: its shard counts as missing")),
                Err(e) => warn(format!("{pod}: {e}: its shard counts as missing")),
            }
        }
    }
    if found == 0 {
        return Err(format!("no results found in the logs of Job {job}"));
    }
    merge.finish().map_err(|e| e.to_string())
}
