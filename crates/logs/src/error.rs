//! What can go wrong reading logs, each said whole.

use crate::read_stats::ReadStats;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Format(String),
    #[error("{}", nothing_read(.0))]
    NothingRead(Box<ReadStats>),
}

fn nothing_read(s: &ReadStats) -> String {
    if s.lines == 0 {
        return format!("{}: no lines (the file is empty)", s.files.join(", "));
    }
    let mut m = format!(
        "not one of the {} lines could be read as {} (give the format with --format: common, combined, json, an Apache LogFormat string or an nginx log_format line)",
        s.lines,
        s.formats.join(" / ")
    );
    for b in &s.bad_samples {
        m.push_str(&format!(
            "\n  {}:{}: {}: {}",
            b.file, b.line, b.reason, b.text
        ));
    }
    m
}
