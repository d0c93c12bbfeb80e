//! `--store` and `--label` on a run, and `herd store add FILE...`: results kept in a store
//! (herd-store: SQLite by default, PostgreSQL for `postgres://`). Arguments and printing only.

use crate::exit::{self, Exit};
use clap::{Args, Subcommand};
use herd_result::{read_document, Document, RunResult};
use herd_store::{Added, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The machine a result written before herd recorded it is filed under: not the storing
/// machine's, which may not be the one that ran the load.
const UNRECORDED: &str = "not recorded";

/// The store flags of a command that sends load.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreFlags {
    /// Also keep the result in a store of runs: a SQLite file, or postgres://user@host/db
    /// (default: $HERD_STORE; see docs/history.md)
    #[arg(long, value_name = "PATH|URL", help_heading = "Outputs")]
    pub store: Option<String>,

    /// A label for the run, KEY=VALUE (branch=main, commit=abc123), kept in its JSON and the
    /// store; repeat for more
    #[arg(long = "label", value_name = "KEY=VALUE", help_heading = "Outputs")]
    pub labels: Vec<String>,
}

/// The store given with --store, else $HERD_STORE.
pub fn location(given: Option<&str>) -> Option<String> {
    given
        .map(str::to_owned)
        .or_else(|| std::env::var("HERD_STORE").ok())
        .filter(|s| !s.is_empty())
}

/// Opens the store given, or says how to give one.
pub fn open(given: Option<&str>) -> Result<(Store, String), Exit> {
    let Some(at) = location(given) else {
        return Err(Exit::bad_input(
            "no store given: add --store runs.db (a SQLite file) or --store postgres://..., or set HERD_STORE",
        ));
    };
    let store = Store::open(&at).map_err(|e| Exit::bad_input(e.to_string()))?;
    Ok((store, herd_store::redact_url(&at)))
}

/// The labels of --label, checked before anything is sent.
pub fn labels(f: &StoreFlags) -> Result<BTreeMap<String, String>, Exit> {
    herd_store::parse_labels(&f.labels).map_err(Exit::bad_input)
}

impl StoreFlags {
    /// Every problem with the labels and the store, before the run: a long run's result must
    /// have somewhere to go. A shard is a part of a run: its merge is what is stored.
    pub fn problems(&self, sharded: bool) -> Vec<String> {
        let mut problems = Vec::new();
        if let Err(e) = labels(self) {
            problems.push(e.message);
        }
        if sharded && self.store.is_some() {
            problems.push(
                "--store keeps whole runs, and a shard is a part of one: store the shards' files together (`herd store add shard-*.json` merges them first)".to_owned(),
            );
        } else if location(self.store.as_deref()).is_some() {
            if let Err(e) = open(self.store.as_deref()) {
                problems.push(e.message);
            }
        }
        problems
    }
}

/// At the end of a run: keeps its result in the store, when one is given.
pub fn keep(f: &StoreFlags, result: &RunResult) -> Result<(), Exit> {
    // A shard (only here with $HERD_STORE: --store was refused) is stored by its merge.
    if result.shard.is_some() {
        return Ok(());
    }
    keep_at(f.store.as_deref(), result)
}

/// A run of a sweep or capacity search, filed as its own run: the user's labels, then which
/// series it belongs to (`series=sweep`), its number in the series (`step=3`, as its files
/// x-3.csv and its metrics' `step` label) and its level (`level=400`: a rate, or users), so
/// `herd history trend --label level=400` follows one level over the nightly sweeps.
pub fn label_step(f: &StoreFlags, run: &mut RunResult, series: &str, step: usize, level: f64) {
    if let Ok(given) = labels(f) {
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

/// Keeps a whole run (a merged one included) in the store given, or $HERD_STORE's; none: nothing.
pub fn keep_at(given: Option<&str>, result: &RunResult) -> Result<(), Exit> {
    if location(given).is_none() {
        return Ok(());
    }
    let (mut store, at) = open(given)?;
    let added = store
        .add(result, UNRECORDED)
        .map_err(|e| Exit::bad_input(format!("the result was not stored in {at}: {e}")))?;
    eprintln!("herd: stored as run #{} in {at}", added.id());
    Ok(())
}

#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Keep results written earlier (`herd run --json`, shard files: merged first) in a store
    Add(AddArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// Run results; the shards of one run (--shard I/N) are merged and stored as one run
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,

    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL", help_heading = "Outputs")]
    pub store: Option<String>,
}

pub fn cmd(a: &StoreArgs) -> Result<i32, Exit> {
    let StoreCommand::Add(a) = &a.command;
    let mut problems = Vec::new();
    let mut runs: Vec<(String, RunResult)> = Vec::new();
    for path in &a.files {
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
        return Err(Exit::bad_input(problems.join("\n")));
    }
    let (mut store, at) = open(a.store.as_deref())?;
    for (what, r) in herd_store::whole_runs(runs).map_err(|e| Exit::bad_input(e.to_string()))? {
        match store.add(&r, UNRECORDED) {
            Ok(Added::New(id)) => println!("{what}: stored as run #{id} in {at}"),
            Ok(Added::Already(id)) => println!("{what}: already stored as run #{id}"),
            Err(e) => return Err(Exit::bad_input(format!("{what}: {e}"))),
        }
    }
    Ok(exit::OK)
}
