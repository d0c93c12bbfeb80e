//! A sweep: the same target(s) loaded at rising levels, one step per level (autobench's rate
//! series, seed 004's 1..1000 users). [`SweepResult`] is the `kind: "sweep"` JSON and keeps
//! every step's full [`RunResult`]; [`Table`] is what a spreadsheet sees, one [`Row`] per target
//! per step, written and read as autobench's TSV by [`write_table`] and [`read_table`].

mod conclusion;
mod knees;
mod row;
mod stop;
mod tsv;

pub use conclusion::{errors_start, latency_rise, Point};
pub use conclusion::{level_text, level_unit};
pub use knees::{good_rate, too_short, TargetKnee, MIN_STEP_S};
pub use row::{implausible, row_of, Extra, Row, Table, TableStep};
pub use stop::StopRule;
pub use tsv::{read_table, write_table, Separator, TableError, COLUMNS, EXTRA_COLUMNS};

use crate::{Kind, Model, RunResult};
use serde::{Deserialize, Serialize};

/// Everything a `herd sweep` measured, as written to `--json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    pub herd_version: String,
    /// The format's version within this herd series ([`crate::SCHEMA_VERSION`]); absent in
    /// files written before it existed, which read as 1.
    #[serde(default = "crate::first_schema_version")]
    pub schema_version: u32,
    /// Always [`Kind::Sweep`].
    pub kind: Kind,
    /// Open: levels are arrival rates (req/s); closed: levels are concurrent users.
    pub model: Model,
    /// In the order of the columns and of each step's `runs`.
    pub targets: Vec<SweepTarget>,
    pub config: SweepConfig,
    /// One per level that ran, in order.
    pub steps: Vec<SweepStep>,
    /// Why the sweep ended before its last level (past saturation), if it did.
    pub stopped_early: Option<String>,
    /// Ctrl-C: the last step may be partial and later levels did not run.
    pub interrupted: bool,
}

/// A target of the sweep: the short name used in column suffixes and legends, and what it loads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepTarget {
    pub name: String,
    pub url: String,
    /// The name was given (`--target NAME=URL`) rather than taken from the URL: the TSV then
    /// suffixes the columns `_NAME` even for one target, as autobench does. Absent in results of
    /// herds before it: false.
    #[serde(default)]
    pub named: bool,
}

/// How the sweep was asked to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Every level asked for, in order (req/s or users).
    pub levels: Vec<f64>,
    /// Each step's measured length, when steps are timed.
    pub step_duration_s: Option<f64>,
    /// Each step's number of requests, when steps are counted (autobench's num_conn x num_call).
    pub requests_per_step: Option<u64>,
    pub calls_per_conn: Option<u64>,
    pub timeout_s: f64,
    /// Pause between steps, so one step's backlog does not spill into the next.
    pub cooldown_s: f64,
    pub stop: StopRule,
}

/// One level: a full run per target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// Requests per second demanded (open) or concurrent users (closed).
    pub level: f64,
    pub runs: Vec<RunResult>,
}

impl SweepResult {
    /// The table a spreadsheet sees: one row per target per step.
    pub fn table(&self) -> Table {
        Table {
            model: self.model,
            targets: self.targets.iter().map(|t| t.name.clone()).collect(),
            named: self.targets.iter().any(|t| t.named),
            steps: self
                .steps
                .iter()
                .map(|s| TableStep {
                    level: s.level,
                    rows: s.runs.iter().map(row_of).collect(),
                })
                .collect(),
        }
    }

    /// The table as autobench's TSV (`--tsv`) and as CSV (`--csv`), into the files given.
    pub fn write_tables(
        &self,
        tsv: Option<&std::path::Path>,
        csv: Option<&std::path::Path>,
    ) -> Result<(), String> {
        let table = self.table();
        for (path, sep) in [(tsv, Separator::Tab), (csv, Separator::Comma)] {
            if let Some(p) = path {
                std::fs::write(p, write_table(&table, sep))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tables_are_written_as_tsv_and_csv_and_an_unwritable_one_is_named() {
        let json = include_str!("../../tests/fixtures/sweep-open.json");
        let crate::Document::Sweep(s) = crate::parse_document(json, "sweep-open.json").unwrap()
        else {
            panic!("the fixture is a sweep");
        };
        let dir = std::env::temp_dir().join(format!("herd-sweep-tables-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (tsv, csv) = (dir.join("s.tsv"), dir.join("s.csv"));
        s.write_tables(Some(&tsv), Some(&csv)).unwrap();
        let t = std::fs::read_to_string(&tsv).unwrap();
        let c = std::fs::read_to_string(&csv).unwrap();
        assert!(t.lines().next().unwrap().contains('\t'), "{t}");
        assert!(c.lines().next().unwrap().contains(','), "{c}");
        let e = s
            .write_tables(Some(&dir.join("no/such/dir.tsv")), None)
            .unwrap_err();
        assert!(e.starts_with("cannot write "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
