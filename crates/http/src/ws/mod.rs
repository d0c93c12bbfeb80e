//! WebSocket (RFC 6455) on the engine's one loop: each connection opens as HTTP/1.1 (TCP, the
//! proxy's tunnel, TLS), sends the Upgrade request and, on `101 Switching Protocols` with the
//! right `Sec-WebSocket-Accept`, carries messages. A message is an exchange: the loop hands
//! the session a [`Request`](herd_engine::Request) whose bytes are the payload, the session
//! frames and masks it, and the reply (the next message by default, or the one whose JSON
//! field names the same value, `--match id`) is its [`Response`](herd_engine::Response), timed
//! like any other from its intended instant. Pings are answered, a server's close is an error
//! of its own (`ws_closed`, its code in the message), and a refused handshake is counted by its
//! status. Apart from the messages, each socket tells the loop (`Note::Socket`) its pongs (with
//! `--ping-interval`, a ping on a fixed schedule, its round trip timed from its intended
//! instant), the server's close by its code (1006 when the connection ended without a close
//! frame) and a refused Upgrade by its status: counted per run and per second.

mod frame;
mod h2;
mod session;
mod socket;

pub use h2::WsH2;
pub use session::WsSession;

use base64::Engine as _;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

/// RFC 6455 section 1.3's GUID, appended to the key before hashing.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A message larger than this (once its fragments are joined) ends the connection as an error.
const MAX_MESSAGE: u64 = 16 << 20;

/// How replies are matched to the messages sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Each reply answers the oldest message not yet answered.
    InOrder,
    /// A reply answers the message whose JSON field of this name has the same value.
    Field(String),
}

/// What every connection of a WebSocket run says and expects: the Upgrade request and the
/// `Sec-WebSocket-Accept` its key calls for, and how replies are matched.
#[derive(Debug)]
pub struct WebSocket {
    pub(crate) handshake: Arc<[u8]>,
    pub(crate) accept: String,
    /// `"name"`, quoted as the field's key is in JSON; `None`: in order.
    pub(crate) field: Option<Box<[u8]>>,
    /// Each open socket pings the server this often (`--ping-interval`), each pong timed from
    /// its ping's intended instant; `None`: no pings.
    pub ping_interval: Option<std::time::Duration>,
    /// The extended CONNECT that opens a socket on an HTTP/2 stream (RFC 8441).
    pub(crate) connect: Connect,
}

/// What an HTTP/2 stream's extended CONNECT says: `:scheme`, `:authority`, `:path`, and the
/// header fields after herd's own (`sec-websocket-version: 13`).
#[derive(Debug)]
pub(crate) struct Connect {
    pub scheme: &'static str,
    pub authority: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl WebSocket {
    /// The Upgrade request for `target` (its path; `Host` its authority) with `headers` added
    /// after herd's own, replies matched as `matching` says.
    pub fn new(target: &crate::Target, headers: &[(String, String)], matching: Match) -> Self {
        let key = key();
        let mut head = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nUser-Agent: herd/{}\r\n",
            target.path_and_query(),
            target.authority(),
            env!("CARGO_PKG_VERSION"),
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut fields = vec![
            ("sec-websocket-version".to_owned(), "13".to_owned()),
            (
                "user-agent".to_owned(),
                format!("herd/{}", env!("CARGO_PKG_VERSION")),
            ),
        ];
        fields.extend(headers.iter().cloned());
        WebSocket {
            connect: Connect {
                scheme: match target.scheme() {
                    crate::Scheme::Https => "https",
                    crate::Scheme::Http => "http",
                },
                authority: target.authority().to_owned(),
                path: target.path_and_query().to_owned(),
                headers: fields,
            },
            handshake: head.into_bytes().into(),
            accept: accept(&key),
            field: match matching {
                Match::InOrder => None,
                Match::Field(name) => Some(format!("\"{name}\"").into_bytes().into()),
            },
            ping_interval: None,
        }
    }
}

impl WebSocket {
    /// A user's own socket, opened by `head` (a workload's `ws: { connect }`: its Upgrade
    /// request, rendered with the user's headers): the `Sec-WebSocket-Accept` its key calls
    /// for; replies in order, no pings; HTTP/1.1 only.
    pub fn upgrade(head: Arc<[u8]>) -> Self {
        let key = std::str::from_utf8(&head)
            .unwrap_or_default()
            .split("\r\n")
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("sec-websocket-key")
                    .then(|| value.trim())
            })
            .unwrap_or_default()
            .to_owned();
        WebSocket {
            accept: accept(&key),
            handshake: head,
            field: None,
            ping_interval: None,
            connect: Connect {
                scheme: "http",
                authority: String::new(),
                path: String::new(),
                headers: Vec::new(),
            },
        }
    }
}

/// What a workload's `ws: { connect: ... }` opens its socket on, as the request's target:
/// a path on the workload's `target` (its http:// becoming ws://, https:// wss://) as is, or
/// a `ws://` or `wss://` URL of the same host and port, as its path and query. Says what is
/// wrong with anything else.
pub fn socket_path(target: &crate::Target, connect: &str) -> Result<String, String> {
    if connect.starts_with('/') {
        return Ok(connect.to_owned());
    }
    let Some((scheme, _)) = connect.split_once("://") else {
        return Err(format!(
            "`connect: {connect}` is neither a path (/chat) nor a ws:// or wss:// URL"
        ));
    };
    let want = match target.scheme() {
        crate::Scheme::Http => "ws",
        crate::Scheme::Https => "wss",
    };
    if !scheme.eq_ignore_ascii_case(want) {
        return Err(format!(
            "`connect: {connect}`: a socket of an {}:// target opens with {want}://, on the \
             target's host",
            target.scheme().as_str()
        ));
    }
    let parts = crate::target::UrlParts::split(connect).map_err(|e| e.to_string())?;
    if !target.is(&parts) {
        return Err(format!(
            "`connect: {connect}` is on another host than the target ({target}): a socket \
             opens on the target's host and port"
        ));
    }
    Ok(parts.path_and_query().into_owned())
}

/// A fresh `Sec-WebSocket-Key`: 16 random bytes in base64 (the hasher's keys are random per
/// process and per call).
pub fn key() -> String {
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0);
        half.copy_from_slice(&h.finish().to_ne_bytes());
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The `Sec-WebSocket-Accept` a server answers `key` with: base64 of SHA-1 of key and GUID.
pub fn accept(key: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{GUID}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

/// The value of `field` (its key quoted, `"id"`) in a JSON message, as written: a string's
/// contents or a number's digits. The JSON is not parsed: the field is found by its bytes, as
/// the event streams' are.
pub(crate) fn field_value<'a>(message: &'a [u8], field: &[u8]) -> Option<&'a [u8]> {
    let at = memchr::memmem::find(message, field)? + field.len();
    let rest = message[at..].trim_ascii_start().strip_prefix(b":")?;
    let rest = rest.trim_ascii_start();
    if let Some(s) = rest.strip_prefix(b"\"") {
        let end = memchr::memchr(b'"', s)?;
        return Some(&s[..end]);
    }
    let end = rest
        .iter()
        .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_accept() {
        // RFC 6455 section 1.3's example.
        assert_eq!(
            accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_ne!(key(), key());
        assert_eq!(key().len(), 24);
    }

    #[test]
    fn a_fields_value_is_found_by_its_bytes() {
        let id = b"\"id\"";
        assert_eq!(
            field_value(br#"{"op":"ping","id":"17"}"#, id),
            Some(&b"17"[..])
        );
        assert_eq!(field_value(br#"{"id": 42, "x":1}"#, id), Some(&b"42"[..]));
        assert_eq!(field_value(br#"{"id":7}"#, id), Some(&b"7"[..]));
        assert_eq!(field_value(br#"{"op":"ping"}"#, id), None);
        assert_eq!(field_value(br#"{"id": }"#, id), None);
    }

    #[test]
    fn the_upgrade_request() {
        let t = crate::Target::parse("ws://127.0.0.1:9/chat?room=1").unwrap();
        let ws = WebSocket::new(&t, &[("X-Token".into(), "a".into())], Match::InOrder);
        let head = std::str::from_utf8(&ws.handshake).unwrap();
        assert!(head.starts_with("GET /chat?room=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
        assert!(head.contains("Upgrade: websocket\r\nConnection: Upgrade\r\n"));
        assert!(head.ends_with("X-Token: a\r\n\r\n"), "{head}");
        let key = head
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .unwrap();
        assert_eq!(ws.accept, accept(key));
    }
}
