//! `herd sweep`'s table on stdout, a line per target per step as each run ends, and what each
//! run hands the live dashboard and the requests log.

use herd_report::series_text;
use herd_result::sweep::{row_of, too_short};
use herd_result::{Model, RunResult};
use herd_run::{Sink, Stepped};
use std::io::Write;

/// The table on stdout, one line per target per step, flushed as each run ends.
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
    /// The words of its levels, for the series' page.
    pub fn words(&self) -> herd_live::LevelWords {
        let (model, streams, unit) = (self.model, self.streams, self.unit);
        herd_live::LevelWords {
            model,
            streams,
            unit,
        }
    }

    pub fn header(&self) {
        let h = series_text::sweep_header(self.model, self.unit, self.streams, self.named);
        println!("{h}");
        let _ = std::io::stdout().flush();
    }
}
