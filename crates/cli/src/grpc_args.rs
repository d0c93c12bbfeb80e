//! Flags of `herd grpc`: ghz's, with ghz's meanings (so a ghz command line runs with `ghz`
//! replaced by `herd grpc`), and herd's own long flags where ghz has none. The load and the
//! reach are `herd run`'s groups, spelled as ghz spells them (`load_args::GRPC`).

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
#[command(mut_args = crate::load_args::grpc)]
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

    // `herd run`'s load flags in ghz's words (`load_args::GRPC`): -n/--total, -z/--duration,
    // -r/--rps, --connections, -t/--timeout, --threads...
    #[command(flatten)]
    pub load: crate::load_args::LoadArgs,

    // `herd run`'s reach: --skipTLS (herd's -k), --cacert, --cert, --key, routes, the watch,
    // the shard...
    #[command(flatten)]
    pub reach: crate::args::ReachArgs,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}
