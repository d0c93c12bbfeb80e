//! Which HTTP a run speaks.

/// The protocol of every connection of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1, one request at a time or pipelined.
    #[default]
    Http1,
    /// HTTP/2: over https by ALPN, over http by prior knowledge (h2c), with these settings.
    Http2(herd_h2::Settings),
}
