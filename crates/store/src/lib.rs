//! herd's results over time: every run kept in one database, found again by its labels,
//! target, workload or time, merged exactly with others and watched for change.
//!
//! A [`Store`] is a SQLite file (embedded, nothing to install) or a PostgreSQL database
//! (`postgres://...`), with the same schema ([`schema`], versioned migrations) and the same
//! answers. Each run keeps its metadata (time, target, workload and its hash, labels, herd's
//! version, the machine), every summary figure whole and per request name with the run's own
//! per-second noise, and the result itself (histograms and timeline included, compressed), so a
//! set of runs merges exactly ([`merge_runs`], herd-result's [`herd_result::merge`]) and any
//! percentile is computed again from the sum, never averaged.
//!
//! Writers run in transactions (SQLite's write-ahead log and a busy timeout; PostgreSQL's own),
//! so jobs storing at once lose nothing and a writer killed mid-run leaves a readable store.
//! Change points ([`mod@detect`]) are E-Divisive means with a seeded permutation test, as Apache
//! Otava does, and no change smaller than the runs' own noise.
//!
//! ```
//! # let json = include_str!("../../result/tests/fixtures/run-open.json");
//! # let run = herd_result::parse_json(json, "run-open.json").unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = herd_store::Store::open(dir.path().join("runs.db").to_str().unwrap()).unwrap();
//! let id = store.add(&run, "not recorded").unwrap().id();
//! let back = store.run(id).unwrap();
//! assert_eq!(back.latency_ms.p99, run.latency_ms.p99);
//! assert_eq!(store.list(&herd_store::Filter::default()).unwrap().len(), 1);
//! ```

mod baseline;
mod db;
pub mod detect;
mod error;
pub mod keep;
mod query;
pub mod record;
pub mod schema;
mod shards;

pub use baseline::merge_runs;
pub use detect::{detect, Change, Detection};
pub use error::{redact_url, StoreError};
pub use query::{canonical, parse_labels, parse_time, selector_labels, Filter, Point, RunRow};
pub use record::{figures, workload_hash, Figure, METRICS};
pub use shards::whole_runs;

use db::{now_unix, Db, Val};
use herd_result::RunResult;

/// A store of runs, open.
pub struct Store {
    db: Db,
}

/// What [`Store::add`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// Stored under this id.
    New(i64),
    /// The same result (byte for byte) was already stored under this id.
    Already(i64),
}

impl Added {
    pub fn id(self) -> i64 {
        match self {
            Added::New(id) | Added::Already(id) => id,
        }
    }
}

impl Store {
    /// Opens (creating it if needed) and migrates the store at `location`: a file path for
    /// SQLite, or a `postgres://` URL.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        Store::open_at(location, None)
    }

    /// Opens the store migrated only up to `version` (tests of migrations).
    #[doc(hidden)]
    pub fn open_at(location: &str, version: Option<i64>) -> Result<Store, StoreError> {
        let mut db = Db::open(location)?;
        schema::migrate(&mut db, version)?;
        Ok(Store { db })
    }

    /// The schema version the store is at.
    pub fn version(&mut self) -> Result<i64, StoreError> {
        schema::current(&mut self.db)
    }

    /// Stores `r`, filed under the machine that ran its load (as its result records it), or
    /// under `unrecorded` for a result written before herd recorded it. A result stored before
    /// is not stored twice.
    pub fn add(&mut self, r: &RunResult, unrecorded: &str) -> Result<Added, StoreError> {
        let machine = r.generator.machine.as_deref().unwrap_or(unrecorded);
        if r.kind != herd_result::Kind::Run {
            return Err(StoreError::Bad(
                "only a run's result can be stored (a sweep's or capacity search's runs: store each run's JSON)".to_owned(),
            ));
        }
        let (document, json_bytes, digest) = record::pack(r)?;
        let figures = record::figures(r);
        let started = query::unix(&r.started_at);
        self.db.write(|db| {
            let found = db.query("SELECT id FROM runs WHERE digest = $1", &[Val::Text(digest.clone())])?;
            if let Some(row) = found.first() {
                return Ok(Added::Already(row[0].int()));
            }
            let rows = db.query(
                "INSERT INTO runs (started_unix, started_at, stored_unix, target, workload, workload_hash, herd_version, machine, digest, json_bytes, document) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
                &[
                    Val::Int(started),
                    Val::Text(r.started_at.clone()),
                    Val::Int(now_unix()),
                    Val::Text(r.target.clone()),
                    Val::Text(record::workload_name(r)),
                    Val::Text(record::workload_hash(r)),
                    Val::Text(r.herd_version.clone()),
                    Val::Text(machine.to_owned()),
                    Val::Text(digest.clone()),
                    Val::Int(json_bytes as i64),
                    Val::Blob(document.clone()),
                ],
            )?;
            let id = rows.first().map(|r| r[0].int()).ok_or_else(|| StoreError::Db("no id returned".to_owned()))?;
            for (k, v) in &r.config.labels {
                db.exec(
                    "INSERT INTO labels (run_id, key, value) VALUES ($1, $2, $3)",
                    &[Val::Int(id), Val::Text(k.clone()), Val::Text(v.clone())],
                )?;
            }
            for f in &figures {
                db.exec(
                    "INSERT INTO figures (run_id, name, metric, value, noise) VALUES ($1, $2, $3, $4, $5)",
                    &[
                        Val::Int(id),
                        Val::Text(f.name.clone()),
                        Val::Text(f.metric.clone()),
                        Val::Real(finite(f.value)),
                        f.noise.filter(|n| n.is_finite()).map_or(Val::Null, Val::Real),
                    ],
                )?;
            }
            Ok(Added::New(id))
        })
    }

    /// The stored result of run `id`, as `herd run --json` wrote it.
    pub fn run(&mut self, id: i64) -> Result<RunResult, StoreError> {
        let rows = self
            .db
            .query("SELECT document FROM runs WHERE id = $1", &[Val::Int(id)])?;
        let Some(row) = rows.into_iter().next() else {
            return Err(not_found(id));
        };
        let bytes = row.into_iter().next().map(Val::blob).unwrap_or_default();
        record::unpack(id, &bytes)
    }

    /// The runs `f` selects, oldest first.
    pub fn list(&mut self, f: &Filter) -> Result<Vec<RunRow>, StoreError> {
        query::list(&mut self.db, f)
    }

    /// One run's row.
    pub fn row(&mut self, id: i64) -> Result<RunRow, StoreError> {
        query::row(&mut self.db, id)?.ok_or_else(|| not_found(id))
    }

    /// How SQLite plans `list`'s query (empty for PostgreSQL): tests hold it to an index.
    pub fn plan_of_list(&mut self, f: &Filter) -> Result<String, StoreError> {
        query::plan_of_list(&mut self.db, f)
    }

    /// `metric` (of request `name`, or the whole run when empty) for each run `f` selects,
    /// oldest first.
    pub fn series(
        &mut self,
        f: &Filter,
        metric: &str,
        name: &str,
    ) -> Result<Vec<Point>, StoreError> {
        query::series(&mut self.db, f, metric, name)
    }

    /// Pins run `id` as the baseline of `selector` (labels `KEY=VALUE,...`, "" for any run).
    pub fn set_baseline(&mut self, selector: &str, id: i64) -> Result<(), StoreError> {
        self.row(id)?;
        let selector = query::canonical(selector)?;
        self.db.write(|db| {
            db.exec(
                "DELETE FROM baselines WHERE selector = $1",
                &[Val::Text(selector.clone())],
            )?;
            db.exec(
                "INSERT INTO baselines (selector, run_id, set_unix) VALUES ($1, $2, $3)",
                &[
                    Val::Text(selector.clone()),
                    Val::Int(id),
                    Val::Int(now_unix()),
                ],
            )?;
            Ok(())
        })
    }

    /// The run pinned as `selector`'s baseline.
    pub fn baseline(&mut self, selector: &str) -> Result<Option<i64>, StoreError> {
        let selector = query::canonical(selector)?;
        let rows = self.db.query(
            "SELECT run_id FROM baselines WHERE selector = $1",
            &[Val::Text(selector)],
        )?;
        Ok(rows.first().map(|r| r[0].int()))
    }
}

impl Store {
    /// The baseline for `selector` (labels `KEY=VALUE,...`), for runs of the load `like` ran:
    /// the last `last` matching runs merged exactly, or the run pinned for the selector when
    /// `last` is `None`. Returns the baseline and the ids it is made of.
    pub fn baseline_run(
        &mut self,
        selector: &str,
        last: Option<usize>,
        like: &RunResult,
    ) -> Result<(RunResult, Vec<i64>), StoreError> {
        let ids = match last {
            None => match self.baseline(selector)? {
                Some(id) => vec![id],
                None => {
                    return Err(StoreError::NotFound(format!(
                        "no baseline is pinned for `{selector}`: pin one with `herd history baseline set ID --label {selector}`, or give --last N to compare with the last N matching runs"
                    )))
                }
            },
            Some(n) => {
                let f = Filter {
                    labels: query::selector_labels(selector)?,
                    workload_hash: Some(workload_hash(like)),
                    last: Some(n),
                    ..Filter::default()
                };
                let ids: Vec<i64> = self.list(&f)?.iter().map(|r| r.id).collect();
                if ids.is_empty() {
                    return Err(StoreError::NotFound(format!(
                        "no stored run matches `{selector}` with the same load as the new run (workload hash {}): `herd history ls --label ...` lists what is stored",
                        workload_hash(like)
                    )));
                }
                ids
            }
        };
        let mut runs = Vec::new();
        for id in &ids {
            runs.push((*id, self.run(*id)?));
        }
        Ok((merge_runs(runs)?, ids))
    }
}

fn not_found(id: i64) -> StoreError {
    StoreError::NotFound(format!(
        "no run #{id} in the store: `herd history ls` lists them"
    ))
}

/// NaN and infinities are not numbers PostgreSQL and SQLite agree on: kept as 0.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
