//! `herd capacity`'s flags: the search (herd-series' `CapacityFlags`), the outputs and what
//! every probe's run keeps (`SeriesArgs`).

use crate::series::SeriesArgs;
use clap::Args;
use herd_series::capacity::CapacityFlags;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CapacityArgs {
    /// The URL or workload file to load (for a workload, a rate is scenario iterations per second)
    pub url: String,

    /// What "sustains" means, e.g. "p99<100ms, errors<1%" (errors: requests without an OK answer)
    #[arg(long, value_name = "SLO")]
    pub slo: String,

    /// Closed model: find the most concurrent users (connections) within the SLO, not a rate
    #[arg(long)]
    pub users: bool,

    /// The first level probed [default: 50 req/s, or 1 user]
    #[arg(long, value_name = "LEVEL")]
    pub start: Option<f64>,

    /// Never probe above this level [default: 1000000 req/s, or 10000 users]
    #[arg(long, visible_aliases = ["max-rate", "max-users"], value_name = "LEVEL")]
    pub max: Option<f64>,

    /// How long each probe measures; low rates probe longer to get enough requests, and the
    /// confirmation of the answer lasts twice as long
    #[arg(long = "probe-duration", value_name = "TIME", default_value = "5s", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub probe_duration: Duration,

    /// The most probes to run, confirmations included
    #[arg(long = "max-probes", value_name = "N", default_value_t = 20)]
    pub max_probes: usize,

    /// Stop narrowing when the highest level that held and the lowest that broke are this close
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = crate::values::percent)]
    pub precision: f64,

    /// Pause between probes, so one probe's backlog does not spill into the next
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub cooldown: Duration,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,

    #[command(flatten)]
    pub series: SeriesArgs,
}

impl CapacityArgs {
    /// The flags that shape the search, for herd-series to read.
    pub fn flags(&self) -> CapacityFlags {
        CapacityFlags {
            target: self.url.clone(),
            slo: self.slo.clone(),
            users: self.users,
            start: self.start,
            max: self.max,
            probe: self.probe_duration,
            max_probes: self.max_probes,
            precision: self.precision,
            cooldown: self.cooldown,
        }
    }
}
