//! Flags of `herd grpc`: ghz's, with ghz's meanings (so a ghz command line runs with `ghz`
//! replaced by `herd grpc`), and herd's own long flags where ghz has none. The load and the
//! reach are `herd run`'s groups, spelled as ghz spells them (`load::GRPC`). The run they make
//! is a `RunSpec` whose URL's request is the call (herd-run checks it with herd-grpc).

use crate::run::RequestArgs;
use clap::Args;
use herd_run::{HttpFlags, LoadFlags, RunSpec, Source};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
#[command(mut_args = crate::load::grpc)]
pub struct GrpcArgs {
    /// The server, HOST:PORT (ghz's host), e.g. 127.0.0.1:50051; TLS unless --insecure
    #[arg(value_name = "HOST:PORT")]
    pub host: String,

    /// A fully-qualified method: package.Service/Method or package.Service.Method
    #[arg(long, value_name = "METHOD")]
    pub call: Option<String>,

    /// The Protocol Buffer .proto file, compiled in-process (no protoc needed)
    #[arg(long, value_name = "FILE.proto")]
    pub proto: Option<PathBuf>,

    /// Where the .proto's imports are, comma separated (its own directory is searched too)
    #[arg(
        short = 'i',
        long = "import-paths",
        value_name = "DIR,DIR",
        value_delimiter = ','
    )]
    pub import_paths: Vec<PathBuf>,

    /// A compiled FileDescriptorSet (protoc --include_imports -o FILE); --proto wins over it
    #[arg(long, value_name = "FILE")]
    pub protoset: Option<PathBuf>,

    /// The request message as JSON (an array: a client stream's messages)
    #[arg(short = 'd', long = "data", value_name = "JSON")]
    pub data: Option<String>,

    /// The request message as JSON, from a file
    #[arg(short = 'D', long = "data-file", value_name = "FILE")]
    pub data_file: Option<PathBuf>,

    /// The request message as a serialized protobuf message read from stdin
    #[arg(short = 'b', long = "binary")]
    pub binary: bool,

    /// The request message as a serialized protobuf message, from a file
    #[arg(short = 'B', long = "binary-file", value_name = "FILE")]
    pub binary_file: Option<PathBuf>,

    /// Request metadata as a JSON object of strings, e.g. '{"authorization":"Bearer t"}'
    #[arg(short = 'm', long = "metadata", value_name = "JSON")]
    pub metadata: Option<String>,

    /// Plaintext (h2c): no TLS, as ghz's --insecure
    #[arg(long = "insecure")]
    pub plaintext: bool,

    /// The :authority the calls carry [default: HOST:PORT]
    #[arg(long, value_name = "AUTHORITY")]
    pub authority: Option<String>,

    /// Calls in flight at once (ghz's workers), spread over --connections [default: 50]
    #[arg(short = 'c', long = "concurrency", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub concurrency: Option<u64>,

    /// A client stream's messages (-d's array) per second, each after the one before; each
    /// reply message is timed as it arrives [default: all at once]
    #[arg(long = "message-rate", value_name = "R", value_parser = crate::values::rate)]
    pub message_rate: Option<f64>,

    /// The time between a client stream's messages (ghz's; --message-rate's inverse; 0: all
    /// at once)
    #[arg(long = "stream-interval", value_name = "TIME", value_parser = crate::values::duration, conflicts_with = "message_rate")]
    pub stream_interval: Option<Duration>,

    /// Each call's deadline, sent as grpc-timeout
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration)]
    pub deadline: Option<Duration>,

    // `herd run`'s load flags in ghz's words (`load::GRPC`): -n/--total, -z/--duration,
    // -r/--rps, --connections, -t/--timeout, --threads...
    #[command(flatten)]
    pub load: crate::load::LoadArgs,

    // `herd run`'s reach: --skipTLS (herd's -k), --cacert, --cert, --key, routes, the watch,
    // the shard...
    #[command(flatten)]
    pub reach: crate::run::ReachArgs,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

impl GrpcArgs {
    /// ghz's --insecure (plaintext) given with a TLS flag.
    pub fn refused(&self) -> Option<&'static str> {
        let tls = &self.reach.connect;
        let tls_given = self.reach.insecure || tls.cacert.is_some() || tls.cert.is_some();
        (self.plaintext && tls_given).then_some(
            "--insecure calls in plaintext (h2c): --skipTLS, --cacert and --cert are TLS's; \
             drop one side",
        )
    }
}

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
