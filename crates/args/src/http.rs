//! The protocol flags of `herd run`, `herd sweep` and `herd capacity`: HTTP/1.1, HTTP/2
//! (h2load's `-m` as `--streams`) or HTTP/3.

use clap::Args;
use herd_run::HttpFlags;

#[derive(Args, Debug, Clone, Default)]
pub struct HttpArgs {
    /// Speak HTTP/2 (as h2load): over https:// by ALPN, over http:// by prior knowledge (h2c).
    /// -c counts connections, each carrying --streams requests at once
    #[arg(long, conflicts_with = "proto")]
    pub http2: bool,

    /// Speak HTTP/3 over QUIC (UDP), as h2load --h3; the URL must be https://
    #[arg(long, conflicts_with_all = ["proto", "http2"])]
    pub http3: bool,

    /// The protocol: h1 (HTTP/1.1, the default), h2 (the same as --http2) or h3 (--http3)
    #[arg(long, value_name = "h1|h2|h3", value_parser = ["h1", "h2", "h3"])]
    pub proto: Option<String>,

    /// HTTP/2 and HTTP/3: requests in flight on each connection (h2load's -m), capped by the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS (HTTP/2) or QUIC stream limit (HTTP/3)
    /// [default: 1]
    #[arg(long, value_name = "M")]
    pub streams: Option<usize>,

    /// HTTP/2: the window each stream offers the server, in bytes [default: 2^30-1, as h2load]
    #[arg(long = "h2-window", value_name = "BYTES")]
    pub stream_window: Option<u32>,

    /// HTTP/2: the window of a whole connection, in bytes [default: 2^30-1, as h2load]
    #[arg(long = "h2-connection-window", value_name = "BYTES")]
    pub connection_window: Option<u32>,
}

impl HttpArgs {
    pub fn flags(&self) -> HttpFlags {
        HttpFlags {
            http2: self.http2 || self.proto.as_deref() == Some("h2"),
            streams: self.streams,
            stream_window: self.stream_window,
            connection_window: self.connection_window,
            http3: self.http3 || self.proto.as_deref() == Some("h3"),
        }
    }
}
