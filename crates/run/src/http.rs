//! Which HTTP a run speaks: `--http2` (`--proto h2`) and HTTP/2's knobs, checked with the
//! other flags and applied to the plan (streams are the connection's window) and the
//! transport (the session and ALPN).

use herd_engine::{Load, Plan};
use herd_http::{H2Settings, Protocol};

/// HTTP/2's smallest legal window (RFC 9113 section 6.9.2) and its largest.
const MIN_WINDOW: u32 = 65_535;
const MAX_WINDOW: u32 = (1 << 31) - 1;

/// The protocol flags of `herd run`, `herd sweep` and `herd capacity`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpFlags {
    /// HTTP/2: over https by ALPN, over http by prior knowledge (h2c).
    pub http2: bool,
    /// Streams in flight on one HTTP/2 or HTTP/3 connection (h2load's `-m`), capped by the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS (HTTP/2) or QUIC's stream limit (HTTP/3);
    /// `None`: 1, as h2load.
    pub streams: Option<usize>,
    /// The window each stream offers the server (SETTINGS_INITIAL_WINDOW_SIZE).
    pub stream_window: Option<u32>,
    /// The window of the whole connection.
    pub connection_window: Option<u32>,
    /// HTTP/3 over QUIC (UDP); the URL must be https://.
    pub http3: bool,
}

impl HttpFlags {
    /// Every problem of these flags, in words a user can act on.
    pub(crate) fn check(&self, problems: &mut Vec<String>) {
        if self.http2 && self.http3 {
            problems.push("--http2 and --http3 ask for two protocols: choose one".into());
        }
        if !self.http2 && !self.http3 && self.streams.is_some() {
            problems
                .push("--streams is an HTTP/2 and HTTP/3 setting: add --http2 or --http3".into());
        }
        if !self.http2 {
            let h2_only = [
                (self.stream_window.is_some(), "--h2-window"),
                (self.connection_window.is_some(), "--h2-connection-window"),
            ];
            for (given, flag) in h2_only {
                if given {
                    problems.push(format!(
                        "{flag} is an HTTP/2 setting: add --http2 (or --proto h2)"
                    ));
                }
            }
        }
        if self.streams == Some(0) {
            problems.push("--streams must be at least 1".into());
        }
        for (window, flag) in [
            (self.stream_window, "--h2-window"),
            (self.connection_window, "--h2-connection-window"),
        ] {
            if let Some(w) = window {
                if !(MIN_WINDOW..=MAX_WINDOW).contains(&w) {
                    problems.push(format!(
                        "{flag} {w} is outside HTTP/2's windows, {MIN_WINDOW} to {MAX_WINDOW} bytes"
                    ));
                }
            }
        }
    }

    pub fn protocol(&self) -> Protocol {
        if !self.http2 {
            return Protocol::Http1;
        }
        let default = H2Settings::default();
        Protocol::Http2(H2Settings {
            stream_window: self.stream_window.unwrap_or(default.stream_window),
            connection_window: self.connection_window.unwrap_or(default.connection_window),
            ..default
        })
    }

    /// HTTP/2 and HTTP/3 as h2load counts them: `-c N --streams M` is N connections of M
    /// streams, N x M requests in flight; the open model's cap is on connections, each taking
    /// M at once.
    pub(crate) fn apply(&self, plan: &mut Plan) {
        if !self.http2 && !self.http3 {
            return;
        }
        let streams = self.streams.unwrap_or(1).max(1);
        plan.pipeline = streams;
        if let Load::Closed { users } = &mut plan.load {
            if plan.connections.is_none() && plan.stages.is_empty() {
                plan.connections = Some(*users);
                *users = users.saturating_mul(streams as u64);
            }
        }
    }
}
