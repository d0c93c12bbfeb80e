//! A request as HTTP/3 sends it, made once before the run from the HTTP/1.1 bytes every other
//! part of herd prepares (`serialize`, workload scripts): the request line and `Host` become
//! pseudo-headers, the connection-specific headers HTTP/3 forbids are dropped, and the HEADERS
//! and DATA frames are laid out in one buffer written as is on every repetition.

use super::frame::{put_frame_header, DATA, HEADERS};
use super::qpack;
use crate::HttpError;
use herd_engine::Parts;
use std::sync::Arc;

/// The frames of one request stream, ready to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H3Request {
    pub(crate) frames: Arc<[u8]>,
    pub(crate) head: bool,
    pub(crate) keep_response: bool,
    /// Sending it twice does what sending it once does (RFC 9110 §9.2.2): it may go in 0-RTT,
    /// which an attacker on the path can replay.
    pub(crate) replayable: bool,
    /// An event-stream response is read as an LLM's tokens (`--sse llm`).
    pub(crate) llm: bool,
}

fn idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

/// Headers that describe an HTTP/1.1 connection, which HTTP/3 forbids (RFC 9114 §4.2).
const CONNECTION_SPECIFIC: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

impl H3Request {
    /// Translates a serialized HTTP/1.1 request (head and body) for `scheme`.
    pub fn from_http1(bytes: &[u8], scheme: &str) -> Result<H3Request, HttpError> {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Request::new(&mut headers);
        let bad = |reason: &'static str| HttpError::H3Request {
            request: crate::error::excerpt(bytes),
            reason,
        };
        let head_len = match parsed.parse(bytes) {
            Ok(httparse::Status::Complete(n)) => n,
            _ => return Err(bad("not a complete HTTP/1.1 request head")),
        };
        let (method, path) = (parsed.method.unwrap_or("GET"), parsed.path.unwrap_or("/"));
        let mut authority = "";
        let mut fields = Vec::with_capacity(parsed.headers.len());
        for h in parsed.headers.iter() {
            let value =
                std::str::from_utf8(h.value).map_err(|_| bad("a header value is not UTF-8"))?;
            if h.name.eq_ignore_ascii_case("host") {
                authority = value;
            }
            let te_trailers = h.name.eq_ignore_ascii_case("te") && value == "trailers";
            let forbidden = CONNECTION_SPECIFIC
                .iter()
                .any(|n| h.name.eq_ignore_ascii_case(n))
                || (h.name.eq_ignore_ascii_case("te") && !te_trailers);
            if !forbidden {
                fields.push((h.name, value));
            }
        }
        let block = qpack::encode_request(method, scheme, authority, path, fields);
        Ok(H3Request {
            frames: frames(&block, &bytes[head_len..]),
            head: method == "HEAD",
            keep_response: false,
            replayable: idempotent(method),
            llm: false,
        })
    }

    /// Encodes a request's parts (method, target, headers, body) as HTTP/3 frames.
    pub fn from_parts(parts: &Parts, head: bool) -> H3Request {
        let fields = parts.headers.iter().filter_map(|(n, v)| {
            let forbidden = CONNECTION_SPECIFIC
                .iter()
                .any(|c| n.eq_ignore_ascii_case(c))
                || (n.eq_ignore_ascii_case("te") && v != "trailers");
            (!forbidden).then_some((n.as_str(), v.as_str()))
        });
        let block = qpack::encode_request(
            &parts.method,
            "https",
            &parts.authority,
            &parts.path,
            fields,
        );
        H3Request {
            frames: frames(&block, &parts.body),
            head,
            keep_response: false,
            replayable: idempotent(&parts.method),
            llm: false,
        }
    }

    /// Keeps the response's headers and body (for checks and extraction).
    pub fn keeping_response(mut self, keep: bool) -> Self {
        self.keep_response = keep;
        self
    }

    /// Reads an event-stream response as an LLM's tokens (`--sse llm`, a step's `stream: llm`).
    pub fn reading_llm(mut self, llm: bool) -> Self {
        self.llm = llm;
        self
    }
}

/// A HEADERS frame of `block`, then a DATA frame of `body` if there is one.
fn frames(block: &[u8], body: &[u8]) -> Arc<[u8]> {
    let mut frames = Vec::with_capacity(block.len() + body.len() + 16);
    put_frame_header(&mut frames, HEADERS, block.len());
    frames.extend_from_slice(block);
    if !body.is_empty() {
        put_frame_header(&mut frames, DATA, body.len());
        frames.extend_from_slice(body);
    }
    frames.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h3::frame::get_frame_header;

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        qpack::decode(
            block,
            |_| true,
            &mut Vec::new(),
            |n, v| {
                out.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ))
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn http1_requests_become_pseudo_headers_and_frames() {
        let http1 = b"POST /items?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nConnection: close\r\n\
                      User-Agent: herd\r\nContent-Length: 2\r\nTE: trailers\r\n\r\n{}";
        let req = H3Request::from_http1(http1, "https").unwrap();
        let frames = &req.frames[..];
        let h = get_frame_header(frames).unwrap();
        assert_eq!(h.kind, HEADERS);
        let block = &frames[h.header_len..h.header_len + h.len as usize];
        let fields = decoded(block);
        let fields: Vec<_> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                (":method", "POST"),
                (":scheme", "https"),
                (":authority", "127.0.0.1:8443"),
                (":path", "/items?x=1"),
                ("user-agent", "herd"),
                ("content-length", "2"),
                ("te", "trailers"),
            ]
        );
        let rest = &frames[h.header_len + h.len as usize..];
        assert_eq!(rest, [0x00, 0x02, b'{', b'}']);
        assert!(!req.head);
        assert!(!req.replayable, "a POST never goes in 0-RTT");
    }

    #[test]
    fn head_requests_are_marked_and_bodiless() {
        let req = H3Request::from_http1(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", "https").unwrap();
        assert!(req.head && req.replayable);
        let h = get_frame_header(&req.frames).unwrap();
        assert_eq!(req.frames.len(), h.header_len + h.len as usize);
    }

    #[test]
    fn a_partial_head_is_refused() {
        assert!(H3Request::from_http1(b"GET / HTTP/1.1\r\nHost: a\r\n", "https").is_err());
    }
}
