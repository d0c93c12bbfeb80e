//! `herd sweep`'s flags: the targets, the levels, the stop rule, the tables and the outputs
//! (autobench + httperf, seed 001; ab at 1 to 1000 users, seed 004), and what every step's run
//! keeps (`SeriesArgs`).

use crate::series::SeriesArgs;
use clap::Args;
use herd_series::sweep::SweepFlags;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("levels").required(true).args(["rates", "connections"]))]
pub struct SweepArgs {
    /// The URL or workload file to sweep (or use --target, repeatable)
    pub url: Option<String>,

    /// A target, `NAME=URL`, a URL or a workload file; several are swept step by step side by side
    #[arg(long = "target", value_name = "[NAME=]URL|FILE")]
    pub targets: Vec<String>,

    /// Open model: request rates per second (scenario iterations per second for a workload file),
    /// low:high:step (20:600:20) or a list (100,200,400)
    #[arg(long, value_name = "LEVELS")]
    pub rates: Option<String>,

    /// Closed model: concurrent connections (users), e.g. 1,5,10,100,1000 or 10:100:10
    #[arg(short = 'c', long, value_name = "LEVELS")]
    pub connections: Option<String>,

    /// How long each step measures [default: 10s unless --num-conns]
    #[arg(long = "step-duration", value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub step_duration: Option<Duration>,

    /// Each step makes this many connections of --calls-per-conn requests (autobench's --num_conn)
    #[arg(long = "num-conns", value_name = "N", conflicts_with = "step_duration")]
    pub num_conns: Option<u64>,

    /// Pause between steps, so one step's backlog does not spill into the next
    #[arg(long, value_name = "TIME", default_value = "2s", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub cooldown: Duration,

    /// The stop rule: a step breaks it when more than this share of requests get no OK answer
    #[arg(long = "stop-errors", value_name = "PERCENT", default_value = "10%", value_parser = crate::values::percent)]
    pub stop_errors: f64,

    /// ... or when its p99 latency exceeds this
    #[arg(long = "stop-p99", value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub stop_p99: Option<Duration>,

    /// The stop rule as criteria of a healthy step, in the grammar of thresholds and --slo,
    /// e.g. "p99 < 100ms, errors < 5%" (replaces --stop-errors and --stop-p99)
    #[arg(long = "stop", value_name = "CRITERIA", conflicts_with_all = ["stop_errors", "stop_p99", "no_stop"])]
    pub stop: Option<String>,

    /// Run every level (the sweep otherwise stops once every target broke the stop rule two steps
    /// in a row)
    #[arg(long = "no-stop")]
    pub no_stop: bool,

    /// Write the table as autobench's TSV to FILE (--csv writes it as CSV)
    #[arg(long, value_name = "FILE")]
    pub tsv: Option<PathBuf>,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,

    #[command(flatten)]
    pub series: SeriesArgs,
}

impl SweepArgs {
    /// The flags that shape the series, for herd-series to read.
    pub fn flags(&self) -> SweepFlags {
        SweepFlags {
            rates: self.rates.clone(),
            connections: self.connections.clone(),
            step_duration: self.step_duration,
            num_conns: self.num_conns,
            calls_per_conn: self.series.per_run.calls_per_conn,
            stop: self.stop.clone(),
            stop_errors: self.stop_errors,
            stop_p99: self.stop_p99,
            no_stop: self.no_stop,
            cooldown: self.cooldown,
        }
    }

    /// The targets as given: the URL, then each --target.
    pub fn given(&self) -> Vec<String> {
        let mut given: Vec<String> = self.url.iter().cloned().collect();
        given.extend(self.targets.iter().cloned());
        given
    }
}
