//! `herd serve`'s flags (herd-mock's `ServeFlags`), and listen addresses as people write them.

use std::net::SocketAddr;
use std::num::NonZeroUsize;

use herd_mock::Route;

const ROUTE_HELP: &str = "\
Route specs (--route, repeatable, first match wins):
  PATH [OPTION]...    PATH is exact (/health) or a prefix ending in '*' (/api/*)
    method=POST                       only this method
    latency=50ms | fixed:50ms | uniform:10ms:50ms | normal:100ms:20ms
            | lognormal:200ms:0.5 (median, sigma) | exp:100ms (mean)
    size=512 | 10kb | 1mib            body bytes (kb = 1000, kib = 1024)
    status=503                        200..599
    error-rate=0.1 | 10%              share of requests that fail (500 without fault=)
    fault=reset|close|stall|garbage|truncate   how they fail (every request if no error-rate)
    header=Name:value                 extra response header, repeatable
    echo                              answer with the request itself
    auth=hmac:KEY                     401 unless 'Authorization: Bearer JWT', an HS256 JWT
                                      signed with KEY whose exp (if any) is not past
    grpc                              match gRPC calls to the path (/herd.echo.Echo/*), only them
    grpc-status=unavailable,5 | all   with grpc: the status failing calls end with, in turn
Without --route: '/echo echo' and '/*' (200, \"hello from herd serve\").
gRPC is always on: herd.echo.Echo, helloworld.Greeter and server reflection (docs/serve.md).

Examples:
  herd serve --route '/slow latency=lognormal:200ms:0.5 size=10kb'
  herd serve --route '/flaky error-rate=0.1 fault=reset' --route '/*'
  herd serve --route '/herd.echo.Echo/* grpc latency=20ms error-rate=1% grpc-status=unavailable'";

/// Run a mock HTTP server with configurable latency, body sizes, statuses and faults
#[derive(clap::Args, Debug)]
#[command(after_help = ROUTE_HELP)]
pub struct ServeArgs {
    /// Address to listen on: HOST:PORT (localhost:8080, 0.0.0.0:8080, or IPv6 in brackets), or a port
    /// alone (8080, :8080), which means loopback only, 127.0.0.1; port 0 picks a free port
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    pub listen: SocketAddr,

    /// Worker threads [default: number of cores]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,

    /// A route: PATH then key=value options (see below)
    #[arg(long = "route", value_name = "SPEC", value_parser = parse_route)]
    pub routes: Vec<Route>,

    /// Seed for latency samples and injected errors (repeatable runs)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// Serve HTTPS, HTTP/2 or HTTP/1.1 as the client's ALPN asks, with a self-signed certificate
    /// for localhost made at start (clients must not verify it: herd's --insecure) unless
    /// --tls-cert and --tls-key give one. Without it the port speaks HTTP/1.1 and h2c
    #[arg(long)]
    pub tls: bool,

    /// PEM certificate chain for --tls
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// PEM private key for --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
}

/// `--dashboard 127.0.0.1:5665 URL`, a space where `=` was required (the address is
/// optional, so clap takes the next word as the URL): the word after `--dashboard` is its value
/// when it is an address or a port; a word that means to be one and is not (`localhost:99999`)
/// is refused with how to write it.
pub fn listen_values(args: Vec<std::ffi::OsString>) -> Result<Vec<std::ffi::OsString>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(a) = args.next() {
        let next = args.peek().and_then(|n| n.to_str()).map(str::to_owned);
        let Some(next) = next.filter(|_| a == "--dashboard") else {
            out.push(a);
            continue;
        };
        let addressy = !next.starts_with('-')
            && !next.contains("://")
            && !next.ends_with(".yaml")
            && !next.ends_with(".yml")
            && (next.contains(':') || next.bytes().all(|b| b.is_ascii_digit()));
        if !addressy {
            out.push(a);
            continue;
        }
        match parse_listen(&next) {
            Ok(_) => {
                out.push(format!("--dashboard={next}").into());
                args.next();
            }
            Err(e) => {
                return Err(format!(
                    "--dashboard {next}: {e}; write --dashboard=HOST:PORT (or --dashboard \
                     alone for {})",
                    herd_live::dashboard::DEFAULT_ADDR
                ))
            }
        }
    }
    Ok(out)
}

/// A listen address as people write it. A port alone binds loopback, not every interface: a mock
/// server is for tests on this machine, and exposing it takes an explicit `0.0.0.0:PORT`.
pub use herd_mock::parse_listen;

/// Clap already quotes the spec in its error, so only the parser's message is passed on.
fn parse_route(spec: &str) -> Result<Route, String> {
    Route::parse(spec).map_err(|e| match e {
        herd_mock::MockError::Spec { message, .. } => message,
        other => other.to_string(),
    })
}

impl ServeArgs {
    /// The server the flags describe, as herd-mock serves it.
    pub fn flags(&self) -> herd_mock::ServeFlags {
        herd_mock::ServeFlags {
            listen: self.listen,
            threads: self.threads,
            routes: self.routes.clone(),
            seed: self.seed,
            tls: self.tls,
            tls_files: self.tls_cert.clone().zip(self.tls_key.clone()),
        }
    }
}
