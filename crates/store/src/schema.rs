//! The store's schema, built by numbered migrations applied in order, each in its own
//! transaction and recorded in `herd_schema`: a store written by an older herd is brought up
//! to date when opened, and one written by a newer herd is refused rather than misread.
//!
//! SQLite and PostgreSQL get the same tables; only the spelling of an auto-numbered key and of
//! a byte string differs (`{id}`, `{bytes}` below).

use crate::db::{Db, Val};
use crate::error::StoreError;

/// Each migration's SQL; its version is its place in the list, from 1.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: runs, their labels and their figures.
    "CREATE TABLE runs (
        id {id},
        started_unix BIGINT NOT NULL,
        started_at TEXT NOT NULL,
        stored_unix BIGINT NOT NULL,
        target TEXT NOT NULL,
        workload TEXT NOT NULL,
        workload_hash TEXT NOT NULL,
        herd_version TEXT NOT NULL,
        machine TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        json_bytes BIGINT NOT NULL,
        document {bytes} NOT NULL
    );
    CREATE INDEX runs_by_time ON runs (started_unix, id);
    CREATE INDEX runs_by_target ON runs (target, started_unix);
    CREATE INDEX runs_by_workload ON runs (workload, started_unix);
    CREATE TABLE labels (
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE INDEX labels_by_value ON labels (key, value, run_id);
    CREATE TABLE figures (
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        metric TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        noise DOUBLE PRECISION,
        PRIMARY KEY (run_id, name, metric)
    );
    CREATE INDEX figures_by_metric ON figures (metric, name, run_id)",
    // 2: pinned baselines, one per label set (`herd history baseline set`).
    "CREATE TABLE baselines (
        selector TEXT PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        set_unix BIGINT NOT NULL
    )",
];

/// The schema version this herd writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the store up to `upto` (all migrations when `None`); returns the version it is at.
pub(crate) fn migrate(db: &mut Db, upto: Option<i64>) -> Result<i64, StoreError> {
    let target = upto.unwrap_or(VERSION);
    // Up to date (the common case): no write lock taken, so readers never queue behind writers.
    if let Ok(at) = current(db) {
        if at == target {
            return Ok(at);
        }
    }
    db.write(|db| {
        if db.is_pg() {
            // Two processes opening a new store at once: one migrates, the other waits here
            // and then finds nothing left to do (even CREATE TABLE IF NOT EXISTS races in
            // PostgreSQL). SQLite's BEGIN IMMEDIATE does the same.
            db.exec("SELECT pg_advisory_xact_lock(7217031)", &[])?;
        }
        db.script("CREATE TABLE IF NOT EXISTS herd_schema (version BIGINT PRIMARY KEY, applied_unix BIGINT NOT NULL)")?;
        let at = current(db)?;
        if at > VERSION {
            return Err(StoreError::Open(format!(
                "the store is at schema version {at}, newer than this herd's {VERSION}: use a newer herd"
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().take(target as usize).skip(at as usize) {
            db.script(&dialect(sql, db.is_pg()))?;
            db.exec(
                "INSERT INTO herd_schema (version, applied_unix) VALUES ($1, $2)",
                &[Val::Int(i as i64 + 1), Val::Int(crate::db::now_unix())],
            )?;
        }
        current(db)
    })
}

pub(crate) fn current(db: &mut Db) -> Result<i64, StoreError> {
    let rows = db.query("SELECT MAX(version) FROM herd_schema", &[])?;
    Ok(rows.first().and_then(|r| r.first()).map_or(0, Val::int))
}

fn dialect(sql: &str, pg: bool) -> String {
    let (id, bytes) = if pg {
        ("BIGSERIAL PRIMARY KEY", "BYTEA")
    } else {
        ("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB")
    };
    sql.replace("{id}", id).replace("{bytes}", bytes)
}
