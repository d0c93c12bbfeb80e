//! `herd grpc`: ghz's flags -> a `RunSpec` whose URL's request is the call (herd-run checks it
//! with herd-grpc and plays it on the engine over HTTP/2), filled by the one constructor
//! (`ReachArgs::spec`) from `herd run`'s groups; the rest is `herd run`'s path.

use crate::args::RequestArgs;
use crate::exit::Exit;
use crate::grpc_args::GrpcArgs;
use herd_run::{HttpFlags, LoadFlags, RunSpec, Source};
use std::time::Duration;

/// ghz's defaults: 50 calls in flight, 200 calls, a 20 s timeout, one connection.
const CONCURRENCY: u64 = 50;
const TOTAL: u64 = 200;
const TIMEOUT: Duration = Duration::from_secs(20);

/// The run ghz's flags describe. `-c` calls in flight over `--connections` connections are
/// HTTP/2 streams: ceil(c / connections) on each.
pub fn spec(a: &GrpcArgs, binary: Option<Vec<u8>>) -> RunSpec {
    let given = a.load.flags();
    let connections = given.connections.unwrap_or(1).max(1);
    let concurrency = a.concurrency.unwrap_or(CONCURRENCY).max(1);
    let streams = concurrency.div_ceil(connections) as usize;
    let load = LoadFlags {
        connections: Some(connections),
        // ghz's -z wins over -n.
        requests: match given.duration {
            Some(_) => None,
            None => Some(given.requests.unwrap_or(TOTAL)),
        },
        timeout: Some(given.timeout.unwrap_or(TIMEOUT)),
        ..given
    };
    let http = HttpFlags {
        http2: true,
        streams: Some(streams),
        ..HttpFlags::default()
    };
    let url = Source::Url { url: url(a) };
    let mut spec = a.reach.spec(url, &RequestArgs::default(), load, http);
    spec.request.headers = a.authority.iter().map(|h| format!("Host: {h}")).collect();
    spec.request.grpc = Some(Box::new(herd_run::GrpcCall {
        proto: a.proto.clone(),
        import_paths: a.import_paths.clone(),
        protoset: a.protoset.clone(),
        call: a.call.clone().unwrap_or_default(),
        data: a.data.clone(),
        data_file: a.data_file.clone(),
        binary,
        binary_file: a.binary_file.clone(),
        metadata: a.metadata.clone(),
        deadline: a.deadline,
        message_rate: a.message_rate.or_else(|| {
            let d = a.stream_interval.filter(|d| !d.is_zero())?;
            Some(1.0 / d.as_secs_f64())
        }),
        // Neither --proto nor --protoset: the server says its types (herd-run asks a TLS
        // target over TLS).
        reflect: a.plaintext.then(|| a.host.clone()),
    }));
    spec
}

/// ghz's host is `HOST:PORT`, TLS unless --insecure; a URL is taken as given.
fn url(a: &GrpcArgs) -> String {
    if a.host.contains("://") {
        return a.host.clone();
    }
    let scheme = if a.plaintext { "http" } else { "https" };
    format!("{scheme}://{}/", a.host)
}

pub fn cmd(a: &GrpcArgs) -> Result<i32, Exit> {
    let tls = &a.reach.connect;
    if a.plaintext && (a.reach.insecure || tls.cacert.is_some() || tls.cert.is_some()) {
        return Err(Exit::bad_input(
            "--insecure calls in plaintext (h2c): --skipTLS, --cacert and --cert are TLS's; \
             drop one side",
        ));
    }
    let binary = if a.binary {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| Exit::bad_input(format!("-b: cannot read stdin: {e}")))?;
        Some(bytes)
    } else {
        None
    };
    let mut spec = spec(a, binary);
    spec.shard = a.reach.shard.resolve()?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    crate::run::play(&prepared, &a.outputs)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use std::time::Duration;

    fn spec(args: &[&str]) -> herd_run::RunSpec {
        let cli = crate::Cli::try_parse_from([&["herd", "grpc"][..], args].concat())
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let crate::Command::Grpc(a) = &cli.command else {
            panic!("not grpc")
        };
        super::spec(a, None)
    }

    /// A ghz command line means in herd what it means in ghz, through `herd run`'s groups.
    #[test]
    fn ghz_spellings_fill_the_one_spec() {
        let s = spec(&[
            "-d",
            "{}",
            "-z",
            "2s",
            "-n",
            "5",
            "-c",
            "4",
            "--connections",
            "2",
            "-r",
            "100",
            "-t",
            "3s",
            "--threads",
            "1",
            "--skipTLS",
            "--warmup",
            "1s",
            "127.0.0.1:9",
        ]);
        let l = &s.load;
        assert_eq!(l.duration, Some(Duration::from_secs(2)));
        assert_eq!(l.requests, None, "-z wins over -n, as in ghz");
        assert_eq!(l.connections, Some(2));
        assert_eq!(l.rate, Some(100.0));
        assert_eq!(l.timeout, Some(Duration::from_secs(3)));
        assert_eq!(
            (l.threads, l.warmup),
            (Some(1), Some(Duration::from_secs(1)))
        );
        assert!(s.insecure, "--skipTLS is herd's -k");
        assert!(s.http.http2 && !s.http.http3);
        assert_eq!(s.http.streams, Some(2), "4 calls over 2 connections");
        let call = s.request.grpc.as_ref().expect("a call");
        assert_eq!(call.data.as_deref(), Some("{}"));
        assert!(
            matches!(&s.source, herd_run::Source::Url { url } if url == "https://127.0.0.1:9/")
        );
    }

    #[test]
    fn ghz_defaults_hold_without_flags() {
        let s = spec(&["--insecure", "--rps", "5", "--total", "7", "127.0.0.1:9"]);
        assert_eq!(s.load.requests, Some(7));
        assert_eq!(s.load.rate, Some(5.0), "--rps");
        assert_eq!(s.load.timeout, Some(Duration::from_secs(20)));
        assert_eq!(s.load.connections, Some(1));
        assert_eq!(s.http.streams, Some(50));
        assert!(!s.insecure, "--insecure is ghz's plaintext, not herd's -k");
        let s = spec(&["127.0.0.1:9"]);
        assert_eq!(s.load.requests, Some(200));
        assert_eq!(
            spec(&["--rate", "5", "h:1"]).load.rate,
            Some(5.0),
            "--rate: an alias"
        );
    }
}
