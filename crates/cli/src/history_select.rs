//! Which stored runs a `herd history` question is about: the store and the filters every
//! question shares, and what every answer is written with.

use crate::exit::Exit;
use clap::Args;
use herd_store::{Filter, RunRow, Store};
use std::path::PathBuf;

/// Which runs: the store and the filters every question shares.
#[derive(Args, Debug)]
pub struct Select {
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Only runs with this label; repeat for runs with all of them
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Only runs against this target (as listed)
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Only runs of this workload file (or URL, for a run of one URL)
    #[arg(long, value_name = "FILE|URL")]
    pub workload: Option<String>,
    /// Only runs started at or after: 2026-11-01, 2026-11-01T12:00:00Z, or a time ago (7d, 12h)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only runs started before (same forms as --since)
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only the last N of them
    #[arg(long, value_name = "N", value_parser = crate::values::count::<usize>)]
    pub last: Option<usize>,
    /// Also write the answer as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

impl Select {
    fn filter(&self) -> Result<Filter, Exit> {
        let bad = |e: herd_store::StoreError| Exit::bad_input(e.to_string());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let time = |t: &Option<String>| {
            t.as_deref()
                .map(|t| herd_store::parse_time(t, now))
                .transpose()
        };
        Ok(Filter {
            labels: herd_store::parse_labels(&self.labels)
                .map_err(Exit::bad_input)?
                .into_iter()
                .collect(),
            target: self.target.clone(),
            workload: self.workload.clone(),
            workload_hash: None,
            since: time(&self.since).map_err(bad)?,
            until: time(&self.until).map_err(bad)?,
            last: self.last,
        })
    }

    pub fn open(&self) -> Result<(Store, Filter), Exit> {
        let filter = self.filter()?;
        let (store, _) = crate::store_cmd::open(self.store.as_deref())?;
        Ok((store, filter))
    }
}

pub fn store_err(e: herd_store::StoreError) -> Exit {
    Exit::bad_input(e.to_string())
}

/// `KEY=VALUE` pairs, comma-separated.
pub fn labels_text(r: &RunRow) -> String {
    r.labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<(), Exit> {
    let mut buf = serde_json::to_vec_pretty(value).map_err(|e| Exit::bad_input(e.to_string()))?;
    buf.push(b'\n');
    crate::sweep::write_file(path, &buf)
}
