//! Responses serialized once at start, and the route table that picks them.
//!
//! The fast path of a request is a table lookup and a few `extend_from_slice` calls into the
//! connection's output buffer: nothing is formatted or allocated per request.

use crate::latency::Delay;
use crate::route::{Fault, Route, HELLO};
use crate::MockError;

/// Bytes a [`Fault::Garbage`] route answers with: binary noise that no HTTP parser accepts.
pub(crate) const GARBAGE: &[u8] = b"\x00\xff\x16\x03herd-mock garbage: this is not HTTP\r\n\r\n";

/// What the connection says about its own future, appended after a response's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persist {
    /// HTTP/1.1 keep-alive: the default needs no header.
    Implicit,
    /// HTTP/1.0 client that asked for keep-alive: it must be told it got it.
    KeepAlive,
    /// The server closes after this response.
    Close,
}

impl Persist {
    fn header(self) -> &'static [u8] {
        match self {
            Persist::Implicit => b"",
            Persist::KeepAlive => b"Connection: keep-alive\r\n",
            Persist::Close => b"Connection: close\r\n",
        }
    }
}

/// A header field's name and value, as HTTP/2 sends them.
pub(crate) type Field = (Box<[u8]>, Box<[u8]>);

/// A response serialized once. `head` stops before the blank line ending the headers so that
/// the `Connection` header can be chosen per request without copying or formatting.
#[derive(Debug)]
pub(crate) struct Prepared {
    head: Box<[u8]>,
    body: Box<[u8]>,
    pub(crate) status: u16,
    /// The header fields as HTTP/2 sends them (lower-case names, no Content-Length).
    pub(crate) fields: Box<[Field]>,
}

impl Prepared {
    pub(crate) fn new(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Prepared {
        let mut head = Vec::with_capacity(128);
        write_head(&mut head, status, headers, body.len());
        let body = if has_body(status) { body } else { Vec::new() };
        Prepared {
            head: head.into(),
            body: body.into(),
            status,
            fields: h2_fields(headers),
        }
    }

    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }

    fn text(status: u16, body: &str) -> Prepared {
        Prepared::new(status, &[], body.as_bytes().to_vec())
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>, persist: Persist, head_only: bool) {
        out.extend_from_slice(&self.head);
        end_head(out, persist);
        if !head_only {
            out.extend_from_slice(&self.body);
        }
    }
}

/// Ends a head written by [`write_head`]: the `Connection` header, if any, and the blank line.
pub(crate) fn end_head(out: &mut Vec<u8>, persist: Persist) {
    out.extend_from_slice(persist.header());
    out.extend_from_slice(b"\r\n");
}

/// Writes the status line and headers of a response with a `len`-byte body, without the
/// final blank line. 1xx, 204 and 304 responses carry no body and so no Content-Length.
pub(crate) fn write_head(out: &mut Vec<u8>, status: u16, headers: &[(String, String)], len: usize) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    if has_body(status) {
        out.extend_from_slice(format!("Content-Length: {len}\r\n").as_bytes());
    }
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        out.extend_from_slice(b"Content-Type: text/plain\r\n");
    }
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// A route's headers for HTTP/2: names in lower case (RFC 9113 section 8.2.1), and the
/// `content-type` HTTP/1.1 answers get unless the route sets one.
pub(crate) fn h2_fields(headers: &[(String, String)]) -> Box<[Field]> {
    let field = |name: &str, value: &str| {
        (
            name.to_ascii_lowercase().into_bytes().into_boxed_slice(),
            value.as_bytes().into(),
        )
    };
    let typed = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    let default = (!typed).then(|| field("content-type", "text/plain"));
    default
        .into_iter()
        .chain(headers.iter().map(|(n, v)| field(n, v)))
        .collect()
}

fn has_body(status: u16) -> bool {
    !(status < 200 || status == 204 || status == 304)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// What a failing request of a route gets.
#[derive(Debug)]
pub(crate) enum Failure {
    Status(Prepared),
    Fault(Fault),
}

/// A [`Route`] checked and serialized.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// Its place in the table, so an answer decided now and sent after a delay can find it.
    pub(crate) index: usize,
    path: Box<str>,
    prefix: bool,
    method: Option<Box<str>>,
    pub(crate) delay: Delay,
    pub(crate) error_rate: f64,
    pub(crate) ok: Prepared,
    pub(crate) failure: Failure,
    /// Headers plus half the body, for [`Fault::Truncate`].
    pub(crate) truncated: Box<[u8]>,
    pub(crate) echo: bool,
    pub(crate) goaway_after: Option<u32>,
    pub(crate) close_after: Option<u32>,
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    /// The HS256 key a request's bearer token must be signed with (`auth=hmac:KEY`).
    pub(crate) auth_key: Option<Box<[u8]>>,
    /// The answer to a request without a valid token.
    pub(crate) unauthorized: Prepared,
    /// Server-Sent Events instead of the body (`sse`, `sse=llm`).
    pub(crate) events: Option<crate::events::Compiled>,
    /// Matches gRPC calls only (`grpc`), whose failing share ends with these codes in turn.
    pub(crate) grpc: bool,
    pub(crate) grpc_status: Box<[u8]>,
}

impl Compiled {
    fn new((index, route): (usize, &Route)) -> Result<Compiled, MockError> {
        let delay = route.check().map_err(|message| MockError::InvalidRoute {
            path: route.path.clone(),
            message,
        })?;
        let body: Vec<u8> = HELLO.bytes().cycle().take(route.size).collect();
        let declared = route.size.max(2);
        let mut truncated = Vec::new();
        write_head(&mut truncated, 200, &route.headers, declared);
        truncated.extend_from_slice(b"\r\n");
        truncated.extend(HELLO.bytes().cycle().take(declared / 2));
        let (path, prefix) = match route.path.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (route.path.as_str(), false),
        };
        Ok(Compiled {
            index,
            path: path.into(),
            prefix,
            method: route.method.as_deref().map(Into::into),
            delay,
            error_rate: route.error_rate,
            ok: Prepared::new(route.status, &route.headers, body),
            failure: match route.fault {
                Some(fault) => Failure::Fault(fault),
                None => Failure::Status(Prepared::text(500, "injected error\n")),
            },
            truncated: truncated.into(),
            echo: route.echo,
            goaway_after: route.goaway_after,
            close_after: route.close_after,
            status: route.status,
            headers: route.headers.clone(),
            auth_key: route.auth.as_ref().map(|a| match a {
                crate::route::Auth::Hs256Jwt { key } => key.as_bytes().into(),
            }),
            unauthorized: Prepared::new(
                401,
                &[("WWW-Authenticate".into(), "Bearer".into())],
                b"missing or invalid bearer token\n".to_vec(),
            ),
            events: match &route.events {
                Some(e) => Some(e.compile().map_err(|message| MockError::InvalidRoute {
                    path: route.path.clone(),
                    message,
                })?),
                None => None,
            },
            grpc: route.grpc,
            grpc_status: route.grpc_status.clone().into(),
        })
    }

    fn matches_path(&self, path: &str) -> bool {
        if self.prefix {
            path.starts_with(&*self.path)
        } else {
            path == &*self.path
        }
    }
}

/// Result of looking a request up in the [`Table`].
pub(crate) enum Lookup<'t> {
    Found(&'t Compiled),
    NotFound,
    MethodNotAllowed,
}

/// Every route of a server plus the fixed answers, shared read-only by all worker threads.
#[derive(Debug)]
pub(crate) struct Table {
    routes: Vec<Compiled>,
    pub(crate) not_found: Prepared,
    pub(crate) method_not_allowed: Prepared,
    pub(crate) bad_request: Prepared,
    pub(crate) too_large: Prepared,
    /// HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS: the smallest `max-streams` of any route.
    pub(crate) max_streams: Option<u32>,
}

impl Table {
    pub(crate) fn compile(routes: &[Route]) -> Result<Table, MockError> {
        Ok(Table {
            routes: routes
                .iter()
                .enumerate()
                .map(Compiled::new)
                .collect::<Result<_, _>>()?,
            not_found: Prepared::text(404, "no route matches this path\n"),
            method_not_allowed: Prepared::text(405, "no route matches this method\n"),
            bad_request: Prepared::text(400, "malformed request\n"),
            too_large: Prepared::text(431, "request head too large\n"),
            max_streams: routes.iter().filter_map(|r| r.max_streams).min(),
        })
    }

    pub(crate) fn route(&self, index: usize) -> &Compiled {
        &self.routes[index]
    }

    pub(crate) fn routes(&self) -> usize {
        self.routes.len()
    }

    /// The first gRPC route whose path matches a call's (`/package.Service/Method`).
    pub(crate) fn lookup_grpc(&self, path: &str) -> Option<&Compiled> {
        self.routes.iter().find(|r| r.grpc && r.matches_path(path))
    }

    pub(crate) fn lookup(&self, method: &str, target: &str) -> Lookup<'_> {
        let path = target.split_once('?').map_or(target, |(p, _)| p);
        let mut path_matched = false;
        for route in self.routes.iter().filter(|r| !r.grpc) {
            if route.matches_path(path) {
                match &route.method {
                    Some(m) if &**m != method => path_matched = true,
                    _ => return Lookup::Found(route),
                }
            }
        }
        if path_matched {
            Lookup::MethodNotAllowed
        } else {
            Lookup::NotFound
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_responses_frame_their_body() {
        let p = Prepared::new(200, &[("X-Mock".into(), "yes".into())], b"hi".to_vec());
        let mut out = Vec::new();
        p.write(&mut out, Persist::Close, false);
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nX-Mock: yes\r\nConnection: close\r\n\r\nhi"
        );
        out.clear();
        p.write(&mut out, Persist::Implicit, true);
        assert!(out.ends_with(b"X-Mock: yes\r\n\r\n"), "HEAD has no body");
    }

    #[test]
    fn no_content_has_neither_body_nor_length() {
        let mut out = Vec::new();
        Prepared::new(204, &[], b"ignored".to_vec()).write(&mut out, Persist::Implicit, false);
        assert_eq!(
            out,
            b"HTTP/1.1 204 No Content\r\nContent-Type: text/plain\r\n\r\n"
        );
    }

    #[test]
    fn lookup_takes_the_first_match_and_tells_404_from_405() {
        let routes = [
            Route {
                method: Some("POST".into()),
                ..Route::new("/api/*")
            },
            Route::new("/exact"),
            Route {
                method: Some("GET".into()),
                ..Route::new("/get")
            },
        ];
        let table = Table::compile(&routes).unwrap();
        let found = |m, t| matches!(table.lookup(m, t), Lookup::Found(_));
        assert!(found("POST", "/api/users?page=2"));
        assert!(found("GET", "/exact?x"));
        assert!(!found("GET", "/exact/more"));
        assert!(matches!(
            table.lookup("GET", "/api/x"),
            Lookup::MethodNotAllowed
        ));
        assert!(matches!(table.lookup("GET", "/nope"), Lookup::NotFound));
    }

    #[test]
    fn truncated_answer_declares_more_than_it_sends() {
        let c = Compiled::new((
            0,
            &Route {
                size: 0,
                ..Route::new("/t")
            },
        ))
        .unwrap();
        let text = String::from_utf8_lossy(&c.truncated);
        assert!(text.contains("Content-Length: 2\r\n"));
        assert!(text.ends_with("\r\n\r\nh"));
    }
}
