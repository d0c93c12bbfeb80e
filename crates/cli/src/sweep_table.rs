//! `herd sweep`'s table on stdout, a line per target per step as each run ends, and what each
//! run hands the live dashboard and the requests log.

use herd_live::dashboard::LevelRow;
use herd_report::series_text;
use herd_result::format::rate;
use herd_result::sweep::{row_of, too_short};
use herd_result::{Model, RunResult};
use herd_run::{Sink, Stepped};
use std::io::Write;

/// The table on stdout, one line per target per step, flushed as each run ends; the same step
/// as a row of the series' page.
#[derive(Clone, Copy)]
pub(crate) struct LiveTable {
    pub model: Model,
    pub named: bool,
    /// What the open model's level counts: `req/s`, or `iterations/s` for a workload.
    pub unit: &'static str,
    /// HTTP/2's streams per connection: a closed level is then connections of that many.
    pub streams: Option<usize>,
}

impl Sink for LiveTable {
    fn stepped(&mut self, step: &Stepped, run: &mut RunResult) {
        if let Stepped::Swept { level, target } = step {
            let name = self.named.then_some(target.name.as_str());
            println!(
                "{}",
                series_text::sweep_line(*level, name, &row_of(run), too_short(run))
            );
            let _ = std::io::stdout().flush();
        }
    }
}

impl LiveTable {
    pub fn header(&self) {
        let h = series_text::sweep_header(self.model, self.unit, self.streams, self.named);
        println!("{h}");
        let _ = std::io::stdout().flush();
    }

    /// The step's row on the series' page.
    pub fn row(&self, step: &Stepped, run: &RunResult) -> LevelRow {
        let (level, target) = match step {
            Stepped::Swept { level, target } => (*level, target.name.clone()),
            Stepped::Probed { .. } => (step.level(), String::new()),
        };
        let row = row_of(run);
        let x = row.extra.as_ref();
        LevelRow {
            asked: series_text::step_asked(self.model, self.streams, self.unit, level),
            target,
            achieved: format!("{} replies/s", rate(row.avg_rep_rate)),
            p50_ms: x.map_or(0.0, |x| x.p50),
            p99_ms: x.map_or(0.0, |x| x.p99),
            errors_percent: row.errors,
            verdict: series_text::step_verdict(&row, too_short(run)).to_owned(),
        }
    }
}
