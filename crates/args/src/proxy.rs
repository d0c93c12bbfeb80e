//! `herd proxy`'s flags: the fault proxies (herd-proxy's `ProxyFlags`) and where the API listens.

use std::net::SocketAddr;
use std::path::PathBuf;

use herd_proxy::ProxyFlags;

const HELP: &str = "\
The API is toxiproxy's: its CLI and client libraries drive herd's proxy unchanged, e.g.
  toxiproxy-cli toxic add -t latency -a latency=50 db
  curl -X POST localhost:8474/proxies/db/toxics -d '{\"type\":\"reset_peer\",\"attributes\":{\"timeout\":0}}'
Toxics: latency, bandwidth, slow_close, timeout, reset_peer, slicer, limit_data, packet_loss;
herd's own: http (HTTP/1.1 responses by method and path: a status, delays, cuts, drop_first)
and http2 (h2c streams reset, or GOAWAY), e.g.
  toxiproxy-cli toxic add -t http2 -a action=goaway -a after=100 db
Prometheus metrics at the API's /metrics. More: docs/proxy.md.

Examples:
  herd proxy --listen 127.0.0.1:6380 --upstream 127.0.0.1:6379 --name redis
  herd proxy --config toxiproxy.json --seed 7";

/// A TCP fault proxy with toxiproxy's API and toxics
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub struct ProxyArgs {
    /// Where one proxy listens (with --upstream): HOST:PORT, or a port alone on 127.0.0.1
    #[arg(long, value_name = "ADDR", requires = "upstream", value_parser = crate::serve::parse_listen)]
    pub listen: Option<SocketAddr>,

    /// Where that proxy forwards to: HOST:PORT
    #[arg(long, value_name = "HOST:PORT", requires = "listen")]
    pub upstream: Option<String>,

    /// That proxy's name in the API
    #[arg(
        long,
        value_name = "NAME",
        default_value = "proxy",
        requires = "listen"
    )]
    pub name: String,

    /// Proxies from a file: toxiproxy's populate JSON (an array of {name, listen, upstream,
    /// enabled}); herd also reads a `toxics` array in each
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Where the API listens
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8474", value_parser = crate::serve::parse_listen)]
    pub api: SocketAddr,

    /// Seed of the toxics' random choices (toxicity, jitter, slices, losses): a run repeats them
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
}

impl ProxyArgs {
    /// The proxies the flags describe, as herd-proxy reads them.
    pub fn flags(&self) -> ProxyFlags {
        ProxyFlags {
            config: self.config.clone(),
            one: self
                .listen
                .zip(self.upstream.clone())
                .map(|(l, u)| (l, u, self.name.clone())),
            api: self.api,
            seed: self.seed,
        }
    }
}
