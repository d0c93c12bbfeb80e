//! `herd doctor [URL] [--rate R] [-c N]`'s flags: the load planned, for herd-monitor's checks.

use clap::Args;
use herd_monitor::doctor::Load;

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

impl DoctorArgs {
    /// The load planned, as herd-monitor's checks read it (the defaults `herd run` takes), or
    /// why it cannot be.
    pub fn load(&self) -> Result<Load, String> {
        if let Some(r) = self.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return Err(format!("--rate {r}: must be above 0"));
        }
        if self.calls_per_conn == Some(0) || self.connections == Some(0) {
            return Err("-c and --calls-per-conn must be at least 1".to_owned());
        }
        let default = match self.rate {
            Some(_) => herd_run::DEFAULT_OPEN_CAP,
            None => herd_run::DEFAULT_CONNECTIONS,
        };
        Ok(Load {
            connections: self.connections.unwrap_or(default),
            rate: self.rate,
            calls_per_conn: self.calls_per_conn,
            spare_fds: herd_run::SPARE_FDS,
        })
    }
}
