//! One connection to SQLite or PostgreSQL, spoken to in the SQL both understand: parameters
//! written `$1, $2, ...` in the order they first appear (SQLite numbers `$NAME` parameters
//! that way), values of five kinds, rows read back by position.

use crate::error::StoreError;
use postgres::types::{ToSql, Type};
use std::time::Duration;

/// A value bound to or read from a statement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Null,
}

impl Val {
    pub(crate) fn int(&self) -> i64 {
        match self {
            Val::Int(i) => *i,
            Val::Real(f) => *f as i64,
            _ => 0,
        }
    }

    pub(crate) fn real(&self) -> Option<f64> {
        match self {
            Val::Real(f) => Some(*f),
            Val::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub(crate) fn text(self) -> String {
        match self {
            Val::Text(s) => s,
            Val::Int(i) => i.to_string(),
            _ => String::new(),
        }
    }

    pub(crate) fn blob(self) -> Vec<u8> {
        match self {
            Val::Blob(b) => b,
            _ => Vec::new(),
        }
    }
}

pub(crate) type Row = Vec<Val>;

pub(crate) enum Db {
    Sqlite(rusqlite::Connection),
    Pg(Box<postgres::Client>),
}

/// How long a writer waits for another one's transaction before giving up.
const BUSY: Duration = Duration::from_secs(60);

impl Db {
    /// `postgres://` or `postgresql://` opens PostgreSQL; anything else is a SQLite file.
    pub(crate) fn open(location: &str) -> Result<Db, StoreError> {
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            let client = postgres::Client::connect(location, postgres::NoTls).map_err(|e| {
                StoreError::Open(format!(
                    "cannot connect to PostgreSQL at {}: {e}",
                    crate::error::redact_url(location)
                ))
            })?;
            return Ok(Db::Pg(Box::new(client)));
        }
        let open = |e: rusqlite::Error| {
            StoreError::Open(format!("cannot open the SQLite store {location}: {e}"))
        };
        let c = rusqlite::Connection::open(location).map_err(open)?;
        c.busy_timeout(BUSY).map_err(open)?;
        // WAL: readers never wait for a writer, and a writer killed mid-transaction leaves
        // only an uncommitted tail the next opener discards.
        let mode: String = c
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(open)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Open(format!(
                "{location}: SQLite could not use its write-ahead log (journal mode {mode}): keep the store on a local disk"
            )));
        }
        c.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(open)?;
        Ok(Db::Sqlite(c))
    }

    pub(crate) fn is_pg(&self) -> bool {
        matches!(self, Db::Pg(_))
    }

    /// Runs `f` in one transaction that holds the write lock from its start (SQLite's
    /// `BEGIN IMMEDIATE`; PostgreSQL's rows are locked as written), committed when `f` succeeds.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Db) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.batch("BEGIN IMMEDIATE", "BEGIN")?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT", "COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK", "ROLLBACK");
                Err(e)
            }
        }
    }

    fn batch(&mut self, sqlite: &str, pg: &str) -> Result<(), StoreError> {
        match self {
            Db::Sqlite(c) => c.execute_batch(sqlite).map_err(lite_err),
            Db::Pg(c) => c.batch_execute(pg).map_err(pg_err),
        }
    }

    /// Statements without parameters, separated by `;` (a migration).
    pub(crate) fn script(&mut self, sql: &str) -> Result<(), StoreError> {
        match self {
            Db::Sqlite(c) => c.execute_batch(sql).map_err(sql_err_in(sql)),
            Db::Pg(c) => c.batch_execute(sql).map_err(pg_err),
        }
    }

    pub(crate) fn exec(&mut self, sql: &str, params: &[Val]) -> Result<u64, StoreError> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(sql_err_in(sql))?;
                let n = st
                    .execute(rusqlite::params_from_iter(params.iter().map(lite)))
                    .map_err(lite_err)?;
                Ok(n as u64)
            }
            Db::Pg(c) => {
                let owned = pg_params(params);
                let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
                c.execute(sql, &refs).map_err(pg_err)
            }
        }
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Row>, StoreError> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(sql_err_in(sql))?;
                let n = st.column_count();
                let rows = st
                    .query_map(rusqlite::params_from_iter(params.iter().map(lite)), |r| {
                        (0..n).map(|i| r.get_ref(i).map(from_lite)).collect()
                    })
                    .map_err(lite_err)?;
                rows.collect::<Result<Vec<Row>, _>>().map_err(lite_err)
            }
            Db::Pg(c) => {
                let owned = pg_params(params);
                let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
                let rows = c.query(sql, &refs).map_err(pg_err)?;
                rows.iter().map(from_pg).collect()
            }
        }
    }
}

fn lite(v: &Val) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match v {
        Val::Int(i) => Value::Integer(*i),
        Val::Real(f) => Value::Real(*f),
        Val::Text(s) => Value::Text(s.clone()),
        Val::Blob(b) => Value::Blob(b.clone()),
        Val::Null => Value::Null,
    }
}

fn from_lite(v: rusqlite::types::ValueRef<'_>) -> Val {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(f) => Val::Real(f),
        ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Val::Blob(b.to_vec()),
        ValueRef::Null => Val::Null,
    }
}

fn pg_params(params: &[Val]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Val::Int(i) => Box::new(*i),
                Val::Real(f) => Box::new(*f),
                Val::Text(s) => Box::new(s.clone()),
                Val::Blob(b) => Box::new(b.clone()),
                Val::Null => Box::new(None::<f64>),
            }
        })
        .collect()
}

fn from_pg(row: &postgres::Row) -> Result<Row, StoreError> {
    (0..row.len())
        .map(|i| {
            let t = row.columns()[i].type_().clone();
            Ok(if t == Type::INT8 {
                row.try_get::<_, Option<i64>>(i)
                    .map_err(pg_err)?
                    .map_or(Val::Null, Val::Int)
            } else if t == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)
                    .map_err(pg_err)?
                    .map_or(Val::Null, |v| Val::Int(v.into()))
            } else if t == Type::FLOAT8 {
                row.try_get::<_, Option<f64>>(i)
                    .map_err(pg_err)?
                    .map_or(Val::Null, Val::Real)
            } else if t == Type::BYTEA {
                row.try_get::<_, Option<Vec<u8>>>(i)
                    .map_err(pg_err)?
                    .map_or(Val::Null, Val::Blob)
            } else {
                row.try_get::<_, Option<String>>(i)
                    .map_err(pg_err)?
                    .map_or(Val::Null, Val::Text)
            })
        })
        .collect()
}

fn lite_err(e: rusqlite::Error) -> StoreError {
    StoreError::Db(e.to_string())
}

fn sql_err_in(statement: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Db(format!("{e} (in {})", statement.trim()))
}

fn pg_err(e: postgres::Error) -> StoreError {
    StoreError::Db(e.to_string())
}

/// Seconds since 1970, now.
pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
