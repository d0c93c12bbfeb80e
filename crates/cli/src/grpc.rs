//! `herd grpc`: ghz's flags -> a `RunSpec` whose URL's request is the call (herd-run checks it
//! with herd-grpc and plays it on the engine over HTTP/2); the rest is `herd run`'s path.

use crate::exit::Exit;
use crate::grpc_args::GrpcArgs;
use herd_run::{ConnectFlags, HttpFlags, LoadFlags, RequestFlags, RunSpec, Source};
use std::time::Duration;

/// ghz's defaults: 50 calls in flight, 200 calls, a 20 s timeout, one connection.
const CONCURRENCY: u64 = 50;
const TOTAL: u64 = 200;
const TIMEOUT: Duration = Duration::from_secs(20);

/// The run ghz's flags describe. `-c` calls in flight over `--connections` connections are
/// HTTP/2 streams: ceil(c / connections) on each.
pub fn spec(a: &GrpcArgs, binary: Option<Vec<u8>>) -> RunSpec {
    let connections = a.connections.unwrap_or(1).max(1);
    let concurrency = a.concurrency.unwrap_or(CONCURRENCY).max(1);
    let streams = concurrency.div_ceil(connections) as usize;
    let call = herd_run::GrpcCall {
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
        // Neither --proto nor --protoset: the server says its types, when it speaks plaintext.
        reflect: a.insecure.then(|| a.host.clone()),
    };
    let request = RequestFlags {
        headers: a.authority.iter().map(|h| format!("Host: {h}")).collect(),
        grpc: Some(Box::new(call)),
        ..RequestFlags::default()
    };
    let (duration, requests) = match a.duration {
        Some(d) => (Some(d), None),
        None => (None, Some(a.total.unwrap_or(TOTAL))),
    };
    RunSpec {
        request,
        load: LoadFlags {
            connections: Some(connections),
            rate: a.rps,
            duration,
            requests,
            timeout: Some(a.timeout.unwrap_or(TIMEOUT)),
            threads: a.threads,
            ..LoadFlags::default()
        },
        insecure: a.skip_tls,
        connect: ConnectFlags {
            cert: a.cert.clone(),
            key: a.key.clone(),
            cacert: a.cacert.clone(),
            ..ConnectFlags::default()
        },
        http: HttpFlags {
            http2: true,
            streams: Some(streams),
            ..HttpFlags::default()
        },
        ..RunSpec::new(Source::Url { url: url(a) })
    }
}

/// ghz's host is `HOST:PORT`, TLS unless --insecure; a URL is taken as given.
fn url(a: &GrpcArgs) -> String {
    if a.host.contains("://") {
        return a.host.clone();
    }
    let scheme = if a.insecure { "http" } else { "https" };
    format!("{scheme}://{}/", a.host)
}

pub fn cmd(a: &GrpcArgs) -> Result<i32, Exit> {
    if a.insecure && (a.skip_tls || a.cacert.is_some() || a.cert.is_some()) {
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
    spec.shard = a.shard.resolve()?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    crate::run::play(&prepared, &a.outputs)
}
