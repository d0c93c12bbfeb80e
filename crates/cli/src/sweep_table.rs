//! `herd sweep`'s table on stdout, a line per target per step as each run ends, and what each
//! run hands the live dashboard and the requests log.

use crate::series::StepOutputs;
use herd_report::series_text;
use herd_result::format::rate;
use herd_result::sweep::{row_of, too_short, Row, SweepTarget};
use herd_result::{Model, RunResult};
use std::io::Write;

/// The table on stdout, one line per target per step, flushed as each run ends.
pub(crate) struct LiveTable {
    pub model: Model,
    pub named: bool,
    /// What the open model's level counts: `req/s`, or `iterations/s` for a workload.
    pub unit: &'static str,
    /// HTTP/2's streams per connection: a closed level is then connections of that many.
    pub streams: Option<usize>,
    /// Each run's outputs, and the series' page.
    pub outputs: StepOutputs,
}

impl herd_series::Observer for LiveTable {
    fn live(&mut self) -> &mut dyn herd_run::Observer {
        self.outputs.begin()
    }

    fn swept(&mut self, so_far: &dyn Fn() -> herd_result::sweep::SweepResult) {
        self.outputs.so_far(so_far);
    }

    fn ran(&mut self, level: f64, target: &SweepTarget, run: &mut RunResult) {
        let row = row_of(run);
        let short = too_short(run);
        self.line(level, &target.name, &row, short);
        let (model, streams, unit) = (self.model, self.streams, self.unit);
        self.outputs.ended(run, level, || {
            let x = row.extra.as_ref();
            herd_live::dashboard::LevelRow {
                asked: series_text::step_asked(model, streams, unit, level),
                target: target.name.clone(),
                achieved: format!("{} replies/s", rate(row.avg_rep_rate)),
                p50_ms: x.map_or(0.0, |x| x.p50),
                p99_ms: x.map_or(0.0, |x| x.p99),
                errors_percent: row.errors,
                verdict: series_text::step_verdict(&row, short).to_owned(),
            }
        });
    }
}

impl LiveTable {
    pub fn header(&self) {
        let h = series_text::sweep_header(self.model, self.unit, self.streams, self.named);
        println!("{h}");
        let _ = std::io::stdout().flush();
    }

    fn line(&self, level: f64, name: &str, r: &Row, short: bool) {
        let name = self.named.then_some(name);
        println!("{}", series_text::sweep_line(level, name, r, short));
        let _ = std::io::stdout().flush();
    }
}
