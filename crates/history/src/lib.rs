//! `herd history`'s questions answered from a store of runs: which runs ([`Select`], the
//! filters as the user wrote them), the list ([`list`]), a metric over the runs and where its
//! level changed ([`Trend`], [`Changes`]), and the answers as text, JSON and a trend page with
//! each run's own report beside it. The store's figures (herd-store) meet herd-report's tables
//! and pages here, so neither needs the other; the CLI keeps the flags and prints.
//!
//! ```
//! # let json = include_str!("../../result/tests/fixtures/run-open.json");
//! # let run = herd_result::parse_json(json, "run-open.json").unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = herd_store::Store::open(dir.path().join("runs.db").to_str().unwrap()).unwrap();
//! store.add(&run, "not recorded").unwrap();
//! let filter = herd_history::Select::default().filter(0).unwrap();
//! let (text, runs) = herd_history::list(&mut store, &filter).unwrap();
//! assert_eq!(runs.len(), 1);
//! assert!(text.ends_with("1 run\n"));
//! ```

mod select;
mod trend;

pub use select::{labels_text, Select};
pub use trend::{check_metric, Changes, Trend};

use herd_store::{Filter, RunRow, Store, StoreError};
use std::path::Path;

/// What can go wrong answering a question: the store's problem, or a file not written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Bad(String),
}

/// `herd history ls`: the runs `filter` picks, oldest first, as a table and a count.
pub fn list(store: &mut Store, filter: &Filter) -> Result<(String, Vec<RunRow>), HistoryError> {
    let runs = store.list(filter)?;
    let mut out = format!(
        "{:>6}  {:<24}  {:<28}  {:<16}  labels\n",
        "id", "started", "target", "workload hash"
    );
    for r in &runs {
        out.push_str(&format!(
            "{:>6}  {:<24}  {:<28}  {:<16}  {}\n",
            r.id,
            r.started_at,
            r.target,
            r.workload_hash,
            labels_text(r)
        ));
    }
    out.push_str(&format!(
        "{} run{}\n",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    ));
    Ok((out, runs))
}

/// `herd history baseline set`: pins run `id` as the baseline of the runs labelled
/// `labels`, and says so.
pub fn set_baseline(
    store: &mut Store,
    at: &str,
    id: i64,
    labels: &[String],
) -> Result<String, HistoryError> {
    let selector = labels.join(",");
    store.set_baseline(&selector, id)?;
    let canonical = herd_store::canonical(&selector)?;
    Ok(format!(
        "run #{id} is the baseline of {} in {at}",
        if canonical.is_empty() {
            "every run".to_owned()
        } else {
            format!("runs labelled {canonical}")
        }
    ))
}

/// An answer as pretty JSON, with a final newline.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), HistoryError> {
    let mut buf = serde_json::to_vec_pretty(value).map_err(|e| HistoryError::Bad(e.to_string()))?;
    buf.push(b'\n');
    write_file(path, &buf)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), HistoryError> {
    std::fs::write(path, bytes)
        .map_err(|e| HistoryError::Bad(format!("cannot write {}: {e}", path.display())))
}
