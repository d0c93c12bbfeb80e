//! `herd sweep`'s table on stdout, a line per target per step as each run ends, and what each
//! run hands the live dashboard and the requests log.

use crate::series::StepOutputs;
use herd_result::format::{duration_ms, rate};
use herd_result::sweep::{level_text, row_of, too_short, Row, SweepTarget};
use herd_result::{GeneratorVerdict, Model, RunResult};
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

    fn ran(&mut self, level: f64, target: &SweepTarget, run: &mut RunResult) {
        let row = row_of(run);
        let short = too_short(run);
        self.line(level, &target.name, &row, short);
        let (model, streams, unit) = (self.model, self.streams, self.unit);
        self.outputs.ended(run, || {
            let x = row.extra.as_ref();
            let asked = match (model, streams) {
                (Model::Open, _) => format!("{} {unit}", level_text(level)),
                (Model::Closed, Some(m)) => {
                    format!("{} connections x {m} streams", level_text(level))
                }
                (Model::Closed, None) => format!("{} users", level_text(level)),
            };
            herd_live::dashboard::LevelRow {
                asked,
                target: target.name.clone(),
                achieved: format!("{} replies/s", rate(row.avg_rep_rate)),
                p50_ms: x.map_or(0.0, |x| x.p50),
                p99_ms: x.map_or(0.0, |x| x.p99),
                errors_percent: row.errors,
                verdict: verdict(&row, short).to_owned(),
            }
        });
    }
}

/// The table's last column: whether the step measured the server.
fn verdict(r: &Row, short: bool) -> &'static str {
    match r.extra.as_ref().map(|x| x.generator) {
        Some(GeneratorVerdict::GeneratorLimited) => "LIMITED: herd, not the server",
        _ if short => "ok; too short to judge (under 0.25 s)",
        _ => "ok",
    }
}

impl LiveTable {
    pub fn header(&self) {
        let level = match (self.model, self.unit, self.streams) {
            (Model::Closed, _, Some(m)) => format!("conns x{m}"),
            (Model::Closed, _, None) => "users".into(),
            (Model::Open, "req/s", _) => "req/s asked".into(),
            (Model::Open, _, _) => "iter/s asked".into(),
        };
        let target = if self.named { "  target          " } else { "" };
        println!(
            "{level:>11}{target}  {:>9}  {:>22}  {:>9}  {:>9}  {:>9}  {:>7}  generator",
            "sent/s", "replies/s min/avg/max", "mean", "p50", "p99", "errors"
        );
        let _ = std::io::stdout().flush();
    }

    fn line(&self, level: f64, name: &str, r: &Row, short: bool) {
        let x = r.extra.as_ref();
        let target = if self.named {
            format!("  {name:<16}")
        } else {
            String::new()
        };
        let verdict = verdict(r, short);
        let reply = format!(
            "{}/{}/{}",
            rate(r.min_rep_rate),
            rate(r.avg_rep_rate),
            rate(r.max_rep_rate)
        );
        println!(
            "{:>11}{target}  {:>9}  {reply:>22}  {:>9}  {:>9}  {:>9}  {:>7}  {verdict}",
            level_text(level),
            rate(r.req_rate),
            duration_ms(r.resp_time),
            duration_ms(x.map_or(0.0, |x| x.p50)),
            duration_ms(x.map_or(0.0, |x| x.p99)),
            format!("{:.2}%", r.errors),
        );
        let _ = std::io::stdout().flush();
    }
}
