//! What can keep a watch from starting. Once started, nothing stops it: a process that exits
//! or a scrape that fails becomes a note or a gap in the series.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum MonitorError {
    #[error("no process has pid {0} (list them with `ps -e`)")]
    NoSuchPid(u32),
    #[error("no process is named {0:?} (compare `ps -eo pid,comm`; the name is the executable's, e.g. nginx)")]
    NoSuchName(String),
    #[error("no process named {name:?} runs in the tree of pid {parent} (--watch-parent): compare `ps -o pid,ppid,comm --ppid {parent}`, or leave --watch-parent out")]
    NotInTree { name: String, parent: u32 },
    #[error("{0}")]
    BadUrl(String),
    #[error("cannot scrape {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("--watch-metric {0}")]
    BadSelector(String),
    #[error("{url} has no series {selector}: {hint}")]
    NoMetric {
        url: String,
        selector: String,
        hint: String,
    },
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[source] std::io::Error),
}
