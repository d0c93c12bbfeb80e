//! Finding runs: by labels, target, workload and time, oldest first, in one indexed query.

use crate::db::{Db, Row, Val};
use crate::error::StoreError;
use std::collections::BTreeMap;

/// Which runs a question is about. Empty: all of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Every one of these `KEY = VALUE` labels.
    pub labels: Vec<(String, String)>,
    pub target: Option<String>,
    /// The workload file (or URL) as stored.
    pub workload: Option<String>,
    /// The workload's hash ([`crate::record::workload_hash`]): runs of the same load.
    pub workload_hash: Option<String>,
    /// Started at or after, seconds since 1970.
    pub since: Option<i64>,
    /// Started before, seconds since 1970.
    pub until: Option<i64>,
    /// Only the last this many (by start time).
    pub last: Option<usize>,
}

/// One run's value of a metric.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    pub run: RunRow,
    pub value: f64,
    /// The run's own standard error of `value`, from its per-second samples.
    pub noise: Option<f64>,
}

/// A stored run as listed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunRow {
    pub id: i64,
    pub started_unix: i64,
    pub started_at: String,
    pub target: String,
    pub workload: String,
    pub workload_hash: String,
    pub herd_version: String,
    pub machine: String,
    /// The compact JSON's size, before compression.
    pub json_bytes: i64,
    pub labels: BTreeMap<String, String>,
}

const COLUMNS: &str = "r.id, r.started_unix, r.started_at, r.target, r.workload, r.workload_hash, r.herd_version, r.machine, r.json_bytes";

/// The WHERE clause of `f` (parameters numbered from 1) and its values.
fn condition(f: &Filter) -> (String, Vec<Val>) {
    let mut parts = Vec::new();
    let mut vals = Vec::new();
    let param = |v: Val, vals: &mut Vec<Val>| {
        vals.push(v);
        format!("${}", vals.len())
    };
    for (k, v) in &f.labels {
        let (pk, pv) = (
            param(Val::Text(k.clone()), &mut vals),
            param(Val::Text(v.clone()), &mut vals),
        );
        parts.push(format!(
            "r.id IN (SELECT run_id FROM labels WHERE key = {pk} AND value = {pv})"
        ));
    }
    for (col, v) in [
        ("target", &f.target),
        ("workload", &f.workload),
        ("workload_hash", &f.workload_hash),
    ] {
        if let Some(v) = v {
            parts.push(format!(
                "r.{col} = {}",
                param(Val::Text(v.clone()), &mut vals)
            ));
        }
    }
    if let Some(s) = f.since {
        parts.push(format!(
            "r.started_unix >= {}",
            param(Val::Int(s), &mut vals)
        ));
    }
    if let Some(u) = f.until {
        parts.push(format!(
            "r.started_unix < {}",
            param(Val::Int(u), &mut vals)
        ));
    }
    let clause = if parts.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", parts.join(" AND "))
    };
    (clause, vals)
}

fn list_sql(f: &Filter) -> (String, Vec<Val>) {
    let (clause, vals) = condition(f);
    let sql = match f.last {
        // The newest N, then put back in order.
        Some(n) => format!(
            "SELECT * FROM (SELECT {COLUMNS} FROM runs r{clause} ORDER BY r.started_unix DESC, r.id DESC LIMIT {n}) t ORDER BY started_unix, id"
        ),
        None => format!("SELECT {COLUMNS} FROM runs r{clause} ORDER BY r.started_unix, r.id"),
    };
    (sql, vals)
}

pub(crate) fn list(db: &mut Db, f: &Filter) -> Result<Vec<RunRow>, StoreError> {
    let (sql, vals) = list_sql(f);
    let mut runs: Vec<RunRow> = db.query(&sql, &vals)?.into_iter().map(run_row).collect();
    if runs.is_empty() {
        return Ok(runs);
    }
    // The labels of the same runs in one more query, not one per run.
    let (clause, vals) = condition(f);
    let labels = db.query(
        &format!(
            "SELECT l.run_id, l.key, l.value FROM labels l JOIN runs r ON r.id = l.run_id{clause}"
        ),
        &vals,
    )?;
    let at: BTreeMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    for row in labels {
        let mut it = row.into_iter();
        let id = it.next().map_or(0, |v| v.int());
        if let Some(&i) = at.get(&id) {
            let k = it.next().map(Val::text).unwrap_or_default();
            let v = it.next().map(Val::text).unwrap_or_default();
            runs[i].labels.insert(k, v);
        }
    }
    Ok(runs)
}

pub(crate) fn row(db: &mut Db, id: i64) -> Result<Option<RunRow>, StoreError> {
    let rows = db.query(
        &format!("SELECT {COLUMNS} FROM runs r WHERE r.id = $1"),
        &[Val::Int(id)],
    )?;
    let Some(mut run) = rows.into_iter().next().map(run_row) else {
        return Ok(None);
    };
    for l in db.query(
        "SELECT key, value FROM labels WHERE run_id = $1",
        &[Val::Int(id)],
    )? {
        let mut it = l.into_iter();
        let k = it.next().map(Val::text).unwrap_or_default();
        let v = it.next().map(Val::text).unwrap_or_default();
        run.labels.insert(k, v);
    }
    Ok(Some(run))
}

pub(crate) fn plan_of_list(db: &mut Db, f: &Filter) -> Result<String, StoreError> {
    if db.is_pg() {
        return Ok(String::new());
    }
    let (sql, vals) = list_sql(f);
    let rows = db.query(&format!("EXPLAIN QUERY PLAN {sql}"), &vals)?;
    Ok(rows
        .into_iter()
        .filter_map(|r| r.into_iter().last().map(Val::text))
        .collect::<Vec<_>>()
        .join("\n"))
}

pub(crate) fn series(
    db: &mut Db,
    f: &Filter,
    metric: &str,
    name: &str,
) -> Result<Vec<Point>, StoreError> {
    let runs = list(db, f)?;
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let (clause, mut vals) = condition(f);
    let n = vals.len();
    vals.push(Val::Text(metric.to_owned()));
    vals.push(Val::Text(name.to_owned()));
    let and = if clause.is_empty() { " WHERE" } else { " AND" };
    let rows = db.query(
        &format!(
            "SELECT g.run_id, g.value, g.noise FROM figures g JOIN runs r ON r.id = g.run_id{clause}{and} g.metric = ${} AND g.name = ${}",
            n + 1,
            n + 2
        ),
        &vals,
    )?;
    let mut by_id: BTreeMap<i64, (f64, Option<f64>)> = BTreeMap::new();
    for r in rows {
        by_id.insert(r[0].int(), (r[1].real().unwrap_or(0.0), r[2].real()));
    }
    Ok(runs
        .into_iter()
        .filter_map(|run| {
            by_id
                .get(&run.id)
                .map(|&(value, noise)| Point { run, value, noise })
        })
        .collect())
}

fn run_row(r: Row) -> RunRow {
    let mut it = r.into_iter();
    let mut next = || it.next().unwrap_or(Val::Null);
    RunRow {
        id: next().int(),
        started_unix: next().int(),
        started_at: next().text(),
        target: next().text(),
        workload: next().text(),
        workload_hash: next().text(),
        herd_version: next().text(),
        machine: next().text(),
        json_bytes: next().int(),
        labels: BTreeMap::new(),
    }
}

/// Seconds since 1970 of an RFC 3339 instant (0 when it cannot be read).
pub(crate) fn unix(at: &str) -> i64 {
    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .map_or(0, |t| t.unix_timestamp())
}

/// A label selector (`KEY=VALUE,KEY=VALUE`) in one spelling: keys sorted.
pub fn canonical(selector: &str) -> Result<String, StoreError> {
    Ok(selector_labels(selector)?
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(","))
}

/// The labels of a selector `KEY=VALUE,KEY=VALUE`, sorted by key.
pub fn selector_labels(selector: &str) -> Result<Vec<(String, String)>, StoreError> {
    let given: Vec<String> = selector
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    parse_labels(&given)
        .map(|m| m.into_iter().collect())
        .map_err(StoreError::Bad)
}

/// An instant as given to `--since` or `--until`: RFC 3339 (`2026-11-01T12:00:00Z`), a day
/// (`2026-11-01`, at midnight UTC), or a time ago (`7d`, `12h`), in seconds since 1970.
pub fn parse_time(given: &str, now: i64) -> Result<i64, StoreError> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = time::OffsetDateTime::parse(given, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    if let Ok(t) = time::OffsetDateTime::parse(&format!("{given}T00:00:00Z"), &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    if let Ok(ago) = humantime::parse_duration(given) {
        return Ok(now - ago.as_secs() as i64);
    }
    Err(StoreError::Bad(format!(
        "`{given}` is not a time: write 2026-11-01, 2026-11-01T12:00:00Z or a time ago such as 7d or 12h"
    )))
}

/// Labels given as `KEY=VALUE` strings, checked.
pub fn parse_labels(given: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for l in given {
        match l.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.insert(k.trim().to_owned(), v.trim().to_owned());
            }
            _ => {
                return Err(format!(
                    "label `{l}` is not KEY=VALUE: write e.g. --label branch=main"
                ))
            }
        }
    }
    Ok(out)
}
