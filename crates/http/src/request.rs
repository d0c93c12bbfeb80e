//! Requests are serialized once, before the run, as wrk does when nothing is dynamic: the hot path
//! only writes a shared byte slice.

use crate::target::UrlParts;
use crate::{HttpError, Target};
use herd_engine::{Body, Parts, Request};
use std::sync::Arc;

const USER_AGENT: &str = concat!("herd/", env!("CARGO_PKG_VERSION"));

/// A request as the user wrote it, before serialization.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestSpec {
    pub method: String,
    /// Path and query (`/a?b=1`), an absolute URL on the target, or empty for the target URL's
    /// own path.
    pub path: String,
    /// Sent in order after the defaults; a header named like a default (`Host`, `User-Agent`,
    /// `Accept`, any case) replaces it, and with an empty value removes it (curl's `-H 'Accept:'`;
    /// `Host` cannot be removed).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RequestSpec {
    /// A GET of `path` with no extra headers.
    pub fn get(path: impl Into<String>) -> Self {
        RequestSpec {
            method: "GET".to_owned(),
            path: path.into(),
            ..Default::default()
        }
    }
}

/// Serializes `spec` and marks HEAD requests so the transport expects no body.
pub fn prepare(target: &Target, spec: &RequestSpec) -> Result<Request, HttpError> {
    prepare_with(target, spec, spec.body.len(), |b| {
        b.copy_from_slice(&spec.body);
        Ok(())
    })
}

/// [`prepare`] with a body of `len` bytes that `fill` writes straight into the request's own
/// bytes (`spec.body` is not read): a large body (`--body-file`) is held once, the HTTP/1.1
/// bytes and the HTTP/2 and HTTP/3 parts sharing it, rather than read, then copied.
pub fn prepare_with(
    target: &Target,
    spec: &RequestSpec,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), HttpError>,
) -> Result<Request, HttpError> {
    let head = serialize_head(target, spec, len)?;
    // One allocation of the final size (a `TrustedLen` iterator), filled in place: a `Vec`
    // turned into an `Arc` would be copied, twice the body at the peak.
    let mut bytes: Arc<[u8]> = head
        .iter()
        .copied()
        .chain(std::iter::repeat_n(0, len))
        .collect();
    let only = Arc::get_mut(&mut bytes).expect("a request's bytes are not shared yet");
    fill(&mut only[head.len()..])?;
    let mut parts = bodiless_parts(target, spec)?;
    parts.body = Body::tail(Arc::clone(&bytes), head.len());
    let mut req = Request::new(bytes);
    req.head = spec.method == "HEAD";
    req.parts = Some(Arc::new(parts));
    Ok(req)
}

/// What `spec` asks of `target`, as HTTP/2 and HTTP/3 encode it: the pseudo-headers' values and
/// the headers HTTP/1.1 would send, but `Host` (`:authority`) and the connection-specific ones.
pub fn parts(target: &Target, spec: &RequestSpec) -> Result<Parts, HttpError> {
    let mut parts = bodiless_parts(target, spec)?;
    parts.body = spec.body.as_slice().into();
    Ok(parts)
}

/// [`parts`] without the body, which its caller holds.
fn bodiless_parts(target: &Target, spec: &RequestSpec) -> Result<Parts, HttpError> {
    let path = request_target(target, &spec.path)?;
    let mut authority = target.authority().to_owned();
    let mut headers = Vec::with_capacity(spec.headers.len() + 2);
    for (name, value) in [("user-agent", USER_AGENT), ("accept", "*/*")] {
        if !spec
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            headers.push((name.to_owned(), value.to_owned()));
        }
    }
    for (name, value) in &spec.headers {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "host" => authority = value.clone(),
            "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade" => {}
            "user-agent" | "accept" if value.is_empty() => {}
            _ => headers.push((lower, value.clone())),
        }
    }
    let scheme = match target.scheme() {
        crate::Scheme::Http => "http",
        crate::Scheme::Https => "https",
    };
    Ok(Parts {
        method: spec.method.clone(),
        scheme: scheme.to_owned(),
        authority,
        path,
        headers,
        body: Body::default(),
        paced: None,
    })
}

/// `req` with its `Connection: close` twin, sent as a connection's last request
/// (`--calls-per-conn`): made once for a request sent over and over.
pub fn with_closing(mut req: Request) -> Request {
    req.closing = closing(&req.bytes).map(Into::into);
    req
}

/// The same request asking the server to close the connection after answering: a
/// `Connection: close` header before the end of the head. `None` when the request already says
/// what to do with the connection, or is not a request head.
pub fn closing(request: &[u8]) -> Option<Vec<u8>> {
    let end = request.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = &request[..end];
    let says = head
        .split(|&b| b == b'\n')
        .any(|line| line.len() > 11 && line[..11].eq_ignore_ascii_case(b"connection:"));
    if says {
        return None;
    }
    let mut out = Vec::with_capacity(request.len() + 19);
    out.extend_from_slice(&request[..end + 2]);
    out.extend_from_slice(b"Connection: close\r\n");
    out.extend_from_slice(&request[end + 2..]);
    Some(out)
}

/// The bytes on the wire for `spec` sent to `target`: request line, `Host`, `User-Agent`,
/// `Accept`, the user's headers, `Content-Length` when there is a body (or the method usually
/// carries one), then the body.
pub fn serialize(target: &Target, spec: &RequestSpec) -> Result<Vec<u8>, HttpError> {
    let mut out = serialize_head(target, spec, spec.body.len())?;
    out.extend_from_slice(&spec.body);
    Ok(out)
}

/// The head [`serialize`] writes for a body of `len` bytes (`spec.body` is not read).
fn serialize_head(target: &Target, spec: &RequestSpec, len: usize) -> Result<Vec<u8>, HttpError> {
    if spec.method.is_empty() || !spec.method.bytes().all(is_tchar) {
        return Err(HttpError::BadMethod {
            method: spec.method.clone(),
        });
    }
    let path = request_target(target, &spec.path)?;
    let mut user_length = None;
    let mut user_chunked = false;
    for (name, value) in &spec.headers {
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(HttpError::BadHeaderName { name: name.clone() });
        }
        if value.bytes().any(|b| matches!(b, b'\r' | b'\n' | b'\0')) {
            return Err(HttpError::BadHeaderValue { name: name.clone() });
        }
        if value.is_empty() && name.eq_ignore_ascii_case("host") {
            return Err(HttpError::NoHost);
        }
        if name.eq_ignore_ascii_case("content-length") {
            user_length = Some(value.trim());
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            user_chunked = true;
        }
    }
    if let Some(declared) = user_length {
        if declared.parse::<usize>().ok() != Some(len) {
            return Err(HttpError::ContentLength {
                declared: declared.to_owned(),
                actual: len,
            });
        }
    }

    let user_has = |default: &str| {
        spec.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(default))
    };
    let mut out = Vec::with_capacity(128 + path.len());
    push_all(&mut out, &[&spec.method, " ", &path, " HTTP/1.1\r\n"]);
    for (name, value) in [
        ("Host", target.authority()),
        ("User-Agent", USER_AGENT),
        ("Accept", "*/*"),
    ] {
        if !user_has(name) {
            push_all(&mut out, &[name, ": ", value, "\r\n"]);
        }
    }
    for (name, value) in &spec.headers {
        let removes_default = value.is_empty()
            && (name.eq_ignore_ascii_case("user-agent") || name.eq_ignore_ascii_case("accept"));
        if !removes_default {
            push_all(&mut out, &[name, ": ", value, "\r\n"]);
        }
    }
    // nginx and others answer 411 to a POST without a length, even an empty one.
    let expects_body = matches!(spec.method.as_str(), "POST" | "PUT" | "PATCH");
    if user_length.is_none() && !user_chunked && (len > 0 || expects_body) {
        push_all(&mut out, &["Content-Length: ", &len.to_string(), "\r\n"]);
    }
    out.extend_from_slice(b"\r\n");
    Ok(out)
}

fn request_target(target: &Target, path: &str) -> Result<String, HttpError> {
    // An empty path means the target's own; name that one when it is the bad one.
    let shown = if path.is_empty() {
        target.path_and_query()
    } else {
        path
    };
    let bad = |reason| HttpError::BadPath {
        path: shown.to_owned(),
        reason,
    };
    let resolved = if path.is_empty() {
        target.path_and_query().to_owned()
    } else if path.starts_with('/') || path == "*" {
        path.to_owned()
    } else if path.contains("://") {
        let parts = UrlParts::split(path)?;
        if !target.is(&parts) {
            return Err(HttpError::OtherTarget {
                url: path.to_owned(),
                target: target.to_string(),
            });
        }
        parts.path_and_query().into_owned()
    } else {
        return Err(bad(
            "expected a path starting with '/' or a URL on the target",
        ));
    };
    if resolved.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad(
            "spaces and control characters must be percent-encoded (space is %20)",
        ));
    }
    Ok(resolved)
}

fn push_all(out: &mut Vec<u8>, parts: &[&str]) {
    for p in parts {
        out.extend_from_slice(p.as_bytes());
    }
}

/// RFC 9110 `tchar`: what a method or header name may contain.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::parse("http://127.0.0.1:8080/default?x=1").unwrap()
    }

    fn spec(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> RequestSpec {
        RequestSpec {
            method: method.to_owned(),
            path: path.to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.to_vec(),
        }
    }

    fn wire(s: &RequestSpec) -> String {
        String::from_utf8(serialize(&target(), s).unwrap()).unwrap()
    }

    #[test]
    fn http2_and_http3_get_the_same_request_as_parts() {
        let s = spec(
            "POST",
            "/a?b=1",
            &[("Host", "x.test"), ("X-Id", "7"), ("Accept", "")],
            b"hi",
        );
        let p = prepare(&target(), &s).unwrap().parts.unwrap();
        assert_eq!(
            (
                p.method.as_str(),
                p.scheme.as_str(),
                p.authority.as_str(),
                p.path.as_str()
            ),
            ("POST", "http", "x.test", "/a?b=1")
        );
        let names: Vec<_> = p.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["user-agent", "x-id"],
            "lower case, no Host, Accept removed"
        );
        assert_eq!(&*p.body, b"hi");
    }

    #[test]
    fn an_empty_default_header_is_removed_but_host_stays() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        let s = spec(
            "GET",
            "/",
            &[("User-Agent", ""), ("accept", ""), ("X-Empty", "")],
            b"",
        );
        assert_eq!(
            String::from_utf8(serialize(&t, &s).unwrap()).unwrap(),
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Empty: \r\n\r\n",
            "wrk's request, plus the header the user asked for"
        );
        let s = spec("GET", "/", &[("Host", "")], b"");
        assert!(matches!(serialize(&t, &s), Err(HttpError::NoHost)));
    }

    #[test]
    fn get_carries_host_user_agent_and_accept() {
        assert_eq!(
            wire(&spec("GET", "/p?q=1", &[], b"")),
            format!(
                "GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: {USER_AGENT}\r\n\
                 Accept: */*\r\n\r\n"
            )
        );
    }

    #[test]
    fn empty_path_means_the_target_url_and_absolute_urls_on_the_target_work() {
        let expect = "GET /default?x=1 HTTP/1.1\r\n";
        assert!(wire(&spec("GET", "", &[], b"")).starts_with(expect));
        let abs = wire(&spec("GET", "http://127.0.0.1:8080/abs", &[], b""));
        assert!(abs.starts_with("GET /abs HTTP/1.1\r\n"), "{abs}");
    }

    #[test]
    fn user_headers_replace_defaults_whatever_their_case() {
        let s = spec(
            "GET",
            "/",
            &[("host", "example.com"), ("USER-AGENT", "me"), ("X-Id", "7")],
            b"",
        );
        assert_eq!(
            wire(&s),
            "GET / HTTP/1.1\r\nAccept: */*\r\nhost: example.com\r\nUSER-AGENT: me\r\nX-Id: 7\r\n\r\n"
        );
    }

    #[test]
    fn body_gets_a_content_length() {
        let s = spec("POST", "/", &[("Accept", "application/json")], b"{\"a\":1}");
        assert_eq!(
            wire(&s),
            format!(
                "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: {USER_AGENT}\r\n\
                 Accept: application/json\r\nContent-Length: 7\r\n\r\n{{\"a\":1}}"
            )
        );
        assert!(wire(&spec("POST", "/", &[], b"")).contains("\r\nContent-Length: 0\r\n"));
        assert!(!wire(&spec("DELETE", "/", &[], b"")).contains("Content-Length"));
        let own = wire(&spec("PUT", "/", &[("content-length", "2")], b"ok"));
        assert_eq!(own.matches("ength").count(), 1, "{own}");
        let chunked = wire(&spec(
            "POST",
            "/",
            &[("Transfer-Encoding", "chunked")],
            b"0\r\n\r\n",
        ));
        assert!(!chunked.contains("Content-Length"), "{chunked}");
    }

    #[test]
    fn the_closing_twin_asks_for_the_close_and_keeps_the_body() {
        let spec = spec("POST", "/a", &[], b"x=1");
        let req = with_closing(prepare(&target(), &spec).unwrap());
        let closing = String::from_utf8(req.closing.unwrap().to_vec()).unwrap();
        assert!(
            closing.contains("\r\nConnection: close\r\n\r\nx=1"),
            "{closing}"
        );
        assert_eq!(closing.len(), req.bytes.len() + 19);
        // A request that already says what to do with the connection is left alone.
        let keep = spec_with_connection();
        assert!(with_closing(prepare(&target(), &keep).unwrap())
            .closing
            .is_none());
    }

    fn spec_with_connection() -> RequestSpec {
        spec("GET", "/", &[("connection", "keep-alive")], b"")
    }

    #[test]
    fn prepare_marks_head_requests() {
        assert!(
            prepare(&target(), &spec("HEAD", "/", &[], b""))
                .unwrap()
                .head
        );
        assert!(
            !prepare(&target(), &spec("GET", "/", &[], b""))
                .unwrap()
                .head
        );
    }

    #[test]
    fn invalid_requests_are_refused_before_the_run() {
        let table = [
            (
                spec("GE T", "/", &[], b""),
                r#"bad method "GE T": expected a token such as GET or POST"#,
            ),
            (
                spec("", "/", &[], b""),
                r#"bad method "": expected a token such as GET or POST"#,
            ),
            (
                spec("GET", "/a b", &[], b""),
                r#"bad path "/a b": spaces and control characters must be percent-encoded (space is %20)"#,
            ),
            (
                spec("GET", "a", &[], b""),
                r#"bad path "a": expected a path starting with '/' or a URL on the target"#,
            ),
            (
                spec("GET", "http://other:8080/", &[], b""),
                r#"request URL "http://other:8080/" is not on the target http://127.0.0.1:8080/default?x=1: herd sends every request to one host"#,
            ),
            (
                spec("GET", "/", &[("X Bad", "v")], b""),
                r#"bad header name "X Bad": expected a token such as X-Request-Id"#,
            ),
            (
                spec("GET", "/", &[("X", "a\r\nEvil: 1")], b""),
                r#"value of header "X" contains CR, LF or NUL"#,
            ),
            (
                spec("POST", "/", &[("Content-Length", "3")], b"ab"),
                r#"Content-Length header says "3" but the body has 2 bytes"#,
            ),
        ];
        for (s, want) in table {
            assert_eq!(serialize(&target(), &s).unwrap_err().to_string(), want);
        }
    }
}
