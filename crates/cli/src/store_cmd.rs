//! `--store` and `--label` on a run, and `herd store add FILE...`: results kept in a store
//! (herd-store: SQLite by default, PostgreSQL for `postgres://`). Where the store is, and
//! printing.

use crate::exit::{self, Exit};
use herd_args::store::{StoreArgs, StoreCommand, StoreFlags};
use herd_result::RunResult;
use herd_store::{keep, Store};
use std::collections::BTreeMap;

/// The store given with --store, else $HERD_STORE.
pub fn location(given: Option<&str>) -> Option<String> {
    given
        .map(str::to_owned)
        .or_else(|| std::env::var("HERD_STORE").ok())
        .filter(|s| !s.is_empty())
}

/// Opens the store given, or says how to give one.
pub fn open(given: Option<&str>) -> Result<(Store, String), Exit> {
    keep::open_at(location(given).as_deref()).map_err(|e| Exit::bad_input(e.to_string()))
}

/// The labels of --label, checked before anything is sent.
pub fn labels(f: &StoreFlags) -> Result<BTreeMap<String, String>, Exit> {
    herd_store::parse_labels(&f.labels).map_err(Exit::bad_input)
}

/// Every problem with the labels and the store, before the run.
pub fn problems(f: &StoreFlags, sharded: bool) -> Vec<String> {
    let at = location(f.store.as_deref());
    keep::problems(&f.labels, f.store.as_deref(), at.as_deref(), sharded)
}

/// At the end of a run: keeps its result in the store, when one is given.
pub fn keep(f: &StoreFlags, result: &RunResult) -> Result<(), Exit> {
    // A shard (only here with $HERD_STORE: --store was refused) is stored by its merge.
    if result.shard.is_some() {
        return Ok(());
    }
    keep_at(f.store.as_deref(), result)
}

/// A run of a sweep or capacity search, filed as its own run (herd-store's `label_step`).
pub fn label_step(f: &StoreFlags, run: &mut RunResult, series: &str, step: usize, level: f64) {
    keep::label_step(&f.labels, run, series, step, level);
}

/// Keeps a whole run (a merged one included) in the store given, or $HERD_STORE's; none: nothing.
pub fn keep_at(given: Option<&str>, result: &RunResult) -> Result<(), Exit> {
    let said = keep::keep_at(location(given).as_deref(), result).map_err(Exit::bad_input)?;
    if let Some(said) = said {
        eprintln!("herd: {said}");
    }
    Ok(())
}

pub fn cmd(a: &StoreArgs) -> Result<i32, Exit> {
    let StoreCommand::Add(a) = &a.command;
    let at = location(a.store.as_deref());
    keep::add_files(&a.files, at.as_deref(), |said| println!("{said}")).map_err(Exit::bad_input)?;
    Ok(exit::OK)
}
