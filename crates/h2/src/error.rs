/// What went wrong inside a session. Errors of single streams are not errors here: they are
/// [`StreamEnd::Reset`](crate::StreamEnd) events.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum H2Error {
    /// nghttp2 refused a call or found the connection broken (the peer sent bytes that are not
    /// HTTP/2, flooded, ...). The session is over.
    #[error("HTTP/2 {call}: {message}")]
    Nghttp2 {
        call: &'static str,
        code: i32,
        message: String,
    },
    /// The peer broke the protocol badly enough that the connection is over (nghttp2 sent it
    /// GOAWAY); the message says how.
    #[error("HTTP/2 connection error: {message}")]
    Broken { message: String },
    /// A request with nothing to send it on: the peer sent GOAWAY or the session ended.
    #[error("HTTP/2 connection takes no new streams (GOAWAY received or session over)")]
    Closed,
}

/// RFC 9113's name for an HTTP/2 error code, as servers' logs and h2load print it.
pub fn code_name(code: u32) -> &'static str {
    match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => "unknown error code",
    }
}
