//! Which HTTP a run speaks.

use std::sync::Arc;

/// The protocol of every connection of a run.
#[derive(Debug, Clone, Default)]
pub enum Protocol {
    /// HTTP/1.1, one request at a time or pipelined.
    #[default]
    Http1,
    /// HTTP/2: over https by ALPN, over http by prior knowledge (h2c), with these settings.
    Http2(herd_h2::Settings),
    /// WebSocket over HTTP/1.1's Upgrade: each exchange is a message and its reply.
    WebSocket(Arc<crate::ws::WebSocket>),
    /// WebSockets over HTTP/2 (RFC 8441): each connection's sockets are its streams, opened by
    /// extended CONNECT where the server's SETTINGS offer it.
    WebSocketH2(Arc<crate::ws::WebSocket>, herd_h2::Settings),
}
