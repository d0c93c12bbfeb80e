//! `herd doctor [URL] [--rate R] [-c N]`'s flags: the load planned, for herd-monitor's checks.

use clap::Args;

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The URL you will load: checked to resolve and accept a connection
    pub url: Option<String>,

    /// The arrival rate you plan (herd run --rate)
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,

    /// The connections you plan (herd run -c) [default: 10, or 1000 with --rate]
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<u64>,

    /// Requests per connection you plan (herd run --calls-per-conn) [default: keep-alive]
    #[arg(long = "calls-per-conn", value_name = "K")]
    pub calls_per_conn: Option<u64>,
}
