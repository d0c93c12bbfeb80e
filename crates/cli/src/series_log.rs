//! `--requests-log FILE` for a series: a file per run, numbered in the order the runs went
//! (`r.csv.gz` -> `r-1.csv.gz`, `r-2.csv.gz`...): a sweep's levels one after the other, each
//! level's targets in order; a capacity search's probes as its table numbers them. Each run's
//! times count from its own start, so one file per run reads like a `herd run`'s, and each
//! run of the series' JSON names its file.

use crate::exit::Exit;
use herd_engine::Control;
use herd_live::requests_log::Writer;
use herd_result::{RequestsLogged, RunResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct SeriesLog {
    base: PathBuf,
    /// Request names of each target, by the target's place; run `n` is of target `n % len`.
    names: Vec<Vec<String>>,
    control: Arc<Control>,
    /// The run under way.
    writing: Option<Writer>,
    runs: usize,
    logged: Vec<RequestsLogged>,
    problems: Vec<String>,
}

/// Run `n`'s file (from 1): `-n` before the `.csv` (or the last extension).
pub fn path_of(base: &Path, n: usize) -> PathBuf {
    let name = base
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = name
        .find(".csv")
        .or_else(|| name.rfind('.'))
        .unwrap_or(name.len());
    base.with_file_name(format!("{}-{n}{}", &name[..at], &name[at..]))
}

impl SeriesLog {
    pub fn new(base: &Path, names: Vec<Vec<String>>, control: &Arc<Control>) -> SeriesLog {
        SeriesLog {
            base: base.to_owned(),
            names,
            control: Arc::clone(control),
            writing: None,
            runs: 0,
            logged: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The next run begins: its file is created and takes its lines.
    pub fn begin(&mut self) {
        self.end();
        self.runs += 1;
        let path = path_of(&self.base, self.runs);
        let names = self
            .names
            .get((self.runs - 1) % self.names.len().max(1))
            .cloned()
            .unwrap_or_default();
        match Writer::start(&path, names, &self.control) {
            Ok(w) => self.writing = Some(w),
            Err(e) => self.problems.push(format!("cannot write {e}")),
        }
    }

    /// The run under way ended: its file is finished.
    pub fn end(&mut self) {
        let Some(w) = self.writing.take() else {
            return;
        };
        match w.finish(&self.control) {
            Ok(l) => self.logged.push(l),
            Err(e) => self.problems.push(format!("cannot write {e}")),
        }
    }

    /// Each run's file, named in its result in the order they ran; the error of a file that
    /// could not be written, for the end.
    pub fn finish<'a>(mut self, results: impl Iterator<Item = &'a mut RunResult>) -> Option<Exit> {
        self.end();
        for (r, l) in results.zip(self.logged) {
            crate::outputs::note_requests_log(Some(Ok(l)), r);
        }
        (!self.problems.is_empty()).then(|| Exit::bad_input(self.problems.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::path_of;
    use std::path::Path;

    #[test]
    fn a_runs_file_is_numbered_before_its_extensions() {
        let p = |s: &str| path_of(Path::new(s), 2).display().to_string();
        assert_eq!(p("out/r.csv.gz"), "out/r-2.csv.gz");
        assert_eq!(p("r.csv"), "r-2.csv");
        assert_eq!(p("r.log.gz"), "r.log-2.gz");
        assert_eq!(p("r"), "r-2");
    }
}
