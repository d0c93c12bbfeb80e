use std::fmt::Write as _;

/// A target URL, request or TLS setup that herd cannot use. Raised while preparing a run, before
/// any request is sent; failures during the run are [`herd_engine::Failure`]s instead.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("missing scheme in {url:?}: did you mean {suggestion:?}?")]
    MissingScheme { url: String, suggestion: String },
    #[error(
        "unsupported scheme {scheme:?} in {url:?}: herd speaks http://, https://, ws:// and wss://"
    )]
    UnsupportedScheme { scheme: String, url: String },
    #[error("missing host in {url:?}")]
    MissingHost { url: String },
    #[error("bad host {host:?} in {url:?}: {reason}")]
    BadHost {
        host: String,
        url: String,
        reason: &'static str,
    },
    #[error("bad port {port:?} in {url:?}: expected a number from 1 to 65535")]
    BadPort { port: String, url: String },
    #[error("credentials in {url:?} are not supported: send an Authorization header instead")]
    Credentials { url: String },
    #[error("cannot resolve host {host:?}: {source}")]
    Resolve {
        host: String,
        source: std::io::Error,
    },
    #[error("host {host:?} resolved to no address")]
    NoAddress { host: String },
    #[error("bad method {method:?}: expected a token such as GET or POST")]
    BadMethod { method: String },
    #[error(
        "the path of {url:?} has {what}: percent-encode it, as in {suggestion:?} (a space is %20)"
    )]
    UnencodedPath {
        url: String,
        what: &'static str,
        suggestion: String,
    },
    #[error("bad path {path:?}: {reason}")]
    BadPath { path: String, reason: &'static str },
    #[error(
        "request URL {url:?} is not on the target {target}: herd sends every request to one host"
    )]
    OtherTarget { url: String, target: String },
    #[error("the Host header cannot be removed: HTTP/1.1 requires it (set another value with -H 'Host: name')")]
    NoHost,
    #[error("bad header name {name:?}: expected a token such as X-Request-Id")]
    BadHeaderName { name: String },
    #[error("value of header {name:?} contains CR, LF or NUL")]
    BadHeaderValue { name: String },
    #[error("cannot read the body file {path}: {source}")]
    BodyFile {
        path: String,
        source: std::io::Error,
    },
    #[error("Content-Length header says {declared:?} but the body has {actual} bytes")]
    ContentLength { declared: String, actual: usize },
    #[error("host {host:?} is not a valid TLS server name")]
    ServerName { host: String },
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
    #[error("cannot send {request} over HTTP/3: {reason}")]
    H3Request {
        request: String,
        reason: &'static str,
    },
    #[error("HTTP/3 runs over QUIC, which is always encrypted: use {suggestion:?} instead")]
    H3Cleartext { suggestion: String },
    #[error("QUIC setup: {0}")]
    Quic(String),
    #[error("proxy {proxy}: {reason}")]
    Proxy { proxy: String, reason: String },
    #[error("{flag} {path}: {reason}")]
    TlsFile {
        flag: &'static str,
        path: String,
        reason: String,
    },
}

/// Quotes the first bytes of what a server sent, escaped, for a failure message: enough to
/// recognise an HTML error page or a TLS record without flooding the sample table.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    const MAX: usize = 40;
    let cut = bytes.len().min(MAX);
    let mut s = String::with_capacity(cut + 8);
    let _ = write!(s, "\"{}\"", bytes[..cut].escape_ascii());
    if bytes.len() > cut {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn excerpt_escapes_and_cuts_server_bytes() {
        assert_eq!(excerpt(b"HTTP/1.1 2\r\n"), r#""HTTP/1.1 2\r\n""#);
        assert_eq!(excerpt(&[0x16, 0x03, 0x01]), r#""\x16\x03\x01""#);
        let long = [b'a'; 100];
        assert_eq!(excerpt(&long), format!("\"{}\"…", "a".repeat(40)));
    }
}
