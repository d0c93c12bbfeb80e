//! Runs kept as a command ends (`--store`, `--label`) and result files added later (`herd
//! store add`): the store named, the labels checked before the run, a series' run labelled
//! with its step, and what to tell the user.

use crate::{Added, Store, StoreError};
use herd_result::{read_document, Document, RunResult};
use std::path::PathBuf;

/// The machine a result written before herd recorded it is filed under: not the storing
/// machine's, which may not be the one that ran the load.
pub const UNRECORDED: &str = "not recorded";

/// Opens the store at `at` (the flag's, else the environment's), or says how to give one.
pub fn open_at(at: Option<&str>) -> Result<(Store, String), StoreError> {
    let Some(at) = at else {
        return Err(StoreError::Open(
            "no store given: add --store runs.db (a SQLite file) or --store postgres://..., or set HERD_STORE".to_owned(),
        ));
    };
    Ok((Store::open(at)?, crate::redact_url(at)))
}

/// Every problem with the labels and the store, before the run: a long run's result must have
/// somewhere to go. A shard is a part of a run: its merge is what is stored (`flag`: the store
/// given with --store, `at`: that or the environment's).
pub fn problems(
    labels: &[String],
    flag: Option<&str>,
    at: Option<&str>,
    sharded: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = crate::parse_labels(labels) {
        problems.push(e);
    }
    if sharded && flag.is_some() {
        problems.push(
            "--store keeps whole runs, and a shard is a part of one: store the shards' files together (`herd store add shard-*.json` merges them first)".to_owned(),
        );
    } else if at.is_some() {
        if let Err(e) = open_at(at) {
            problems.push(e.to_string());
        }
    }
    problems
}

/// A run of a sweep or capacity search, filed as its own run: the user's labels, then which
/// series it belongs to (`series=sweep`), its number in the series (`step=3`, as its files
/// x-3.csv and its metrics' `step` label) and its level (`level=400`: a rate, or users), so
/// `herd history trend --label level=400` follows one level over the nightly sweeps.
pub fn label_step(labels: &[String], run: &mut RunResult, series: &str, step: usize, level: f64) {
    if let Ok(given) = crate::parse_labels(labels) {
        run.config.labels.extend(given);
    }
    let facts = [
        ("series", series.to_owned()),
        ("step", step.to_string()),
        // Plain digits (400, 0.5), never a thousands separator: a label is matched as written.
        ("level", level.to_string()),
    ];
    for (k, v) in facts {
        run.config.labels.insert(k.to_owned(), v);
    }
}

/// Keeps a whole run (a merged one included) in the store at `at`; none: nothing. Returns
/// what to tell the user.
pub fn keep_at(at: Option<&str>, result: &RunResult) -> Result<Option<String>, String> {
    if at.is_none() {
        return Ok(None);
    }
    let (mut store, shown) = open_at(at).map_err(|e| e.to_string())?;
    let added = store
        .add(result, UNRECORDED)
        .map_err(|e| format!("the result was not stored in {shown}: {e}"))?;
    Ok(Some(format!("stored as run #{} in {shown}", added.id())))
}

/// `herd store add`: the run results in `files` (a run's shards merged first) into the store
/// at `at`, every unreadable file said before any is stored; `say` hears of each one kept.
pub fn add_files(
    files: &[PathBuf],
    at: Option<&str>,
    mut say: impl FnMut(String),
) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut runs: Vec<(String, RunResult)> = Vec::new();
    for path in files {
        match read_document(path) {
            Ok(Document::Run(r)) => runs.push((path.display().to_string(), *r)),
            Ok(doc) => problems.push(format!(
                "{} is a `{}` result: only runs are stored (each run of a series has its own JSON)",
                path.display(),
                doc.kind()
            )),
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let (mut store, shown) = open_at(at).map_err(|e| e.to_string())?;
    for (what, r) in crate::whole_runs(runs).map_err(|e| e.to_string())? {
        match store.add(&r, UNRECORDED) {
            Ok(Added::New(id)) => say(format!("{what}: stored as run #{id} in {shown}")),
            Ok(Added::Already(id)) => say(format!("{what}: already stored as run #{id}")),
            Err(e) => return Err(format!("{what}: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_label_and_a_stored_shard_are_refused_before_the_run() {
        let p = problems(&["main".into()], Some("runs.db"), Some("runs.db"), true);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("--label branch=main"), "{}", p[0]);
        assert!(p[1].contains("herd store add shard-*.json"), "{}", p[1]);
        let none = open_at(None).err().unwrap().to_string();
        assert!(none.starts_with("no store given"), "{none}");
    }

    #[test]
    fn a_series_run_is_labelled_with_its_step_and_level() {
        let json = include_str!("../../result/tests/fixtures/run-open.json");
        let mut run = herd_result::parse_json(json, "run-open.json").unwrap();
        label_step(&["branch=main".into()], &mut run, "sweep", 3, 400.0);
        let l = &run.config.labels;
        assert_eq!(l["branch"], "main");
        assert_eq!((l["series"].as_str(), l["step"].as_str()), ("sweep", "3"));
        assert_eq!(l["level"], "400");
    }
}
