//! toxiproxy's HTTP API on std threads: a thread per API connection, which only ever takes
//! the registry's lock for a moment (see `registry`), never a socket of the data path.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::metrics;
use crate::registry::Shared;

const BODY_MAX: usize = 4 << 20;

pub(crate) fn serve(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let shared = Arc::clone(&shared);
        let _ = std::thread::Builder::new()
            .name("herd-proxy-api".into())
            .spawn(move || {
                let _ = handle(conn, &shared);
            });
    }
}

struct Request {
    method: String,
    path: String,
    browser: bool,
    close: bool,
    body: Vec<u8>,
}

/// Answers requests on one connection, kept alive as HTTP/1.1 clients expect.
fn handle(conn: TcpStream, shared: &Shared) -> io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(60)))?;
    let _ = conn.set_nodelay(true);
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    loop {
        let req = match read_request(&mut reader)? {
            Some(Ok(r)) => r,
            Some(Err(msg)) => {
                write_response(
                    &mut out,
                    400,
                    "application/json",
                    &json!({"error": msg, "status": 400}).to_string(),
                    true,
                )?;
                return Ok(());
            }
            None => return Ok(()),
        };
        let (status, ctype, body) = route(shared, &req);
        write_response(&mut out, status, ctype, &body, req.close)?;
        if req.close {
            return Ok(());
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Result<Request, String>>> {
    let mut head = Vec::new();
    loop {
        let n = reader.read_until(b'\n', &mut head)?;
        if n == 0 {
            return Ok(None);
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
        if head.len() > 64 * 1024 {
            return Ok(Some(Err("request head over 64 KiB".into())));
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut headers);
    if parsed.parse(&head).is_err() {
        return Ok(Some(Err("malformed HTTP request".into())));
    }
    let mut length = 0usize;
    let mut close = parsed.version == Some(0);
    let mut browser = false;
    for h in parsed.headers.iter() {
        let v = String::from_utf8_lossy(h.value);
        if h.name.eq_ignore_ascii_case("content-length") {
            match v.trim().parse() {
                Ok(n) if n <= BODY_MAX => length = n,
                _ => return Ok(Some(Err(format!("bad or too large Content-Length: {v}")))),
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Ok(Some(Err(
                "chunked request bodies are not taken: send Content-Length".into(),
            )));
        } else if h.name.eq_ignore_ascii_case("connection") {
            close = v.eq_ignore_ascii_case("close");
        } else if h.name.eq_ignore_ascii_case("user-agent") {
            browser = v.starts_with("Mozilla/");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some(Ok(Request {
        method: parsed.method.unwrap_or("").to_string(),
        path: parsed.path.unwrap_or("/").to_string(),
        browser,
        close,
        body,
    })))
}

fn write_response(
    out: &mut TcpStream,
    status: u16,
    ctype: &str,
    body: &str,
    close: bool,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        _ => "Internal Server Error",
    };
    let mut msg = format!("HTTP/1.1 {status} {reason}\r\n");
    if status != 204 {
        msg.push_str(&format!(
            "Content-Type: {ctype}\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    if close {
        msg.push_str("Connection: close\r\n");
    }
    msg.push_str("\r\n");
    if status != 204 {
        msg.push_str(body);
    }
    out.write_all(msg.as_bytes())
}

type Answer = (u16, &'static str, String);

fn route(shared: &Shared, req: &Request) -> Answer {
    let path = req.path.split('?').next().unwrap_or("");
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let m = req.method.as_str();
    if req.browser && m != "GET" {
        // toxiproxy refuses browsers, so that a page cannot drive the proxy behind its user.
        return error(&ApiError::new("User agent not allowed", 403));
    }
    if parts == ["metrics"] && m == "GET" {
        return (200, "text/plain; version=0.0.4", metrics::render(shared));
    }
    if parts == ["version"] && m == "GET" {
        let v = json!({ "version": concat!("herd-proxy ", env!("CARGO_PKG_VERSION")) });
        return (200, "application/json", v.to_string());
    }
    let body = || -> Result<Value, ApiError> {
        serde_json::from_slice(&req.body).map_err(|e| ApiError::bad_body(e.to_string()))
    };
    let result: Result<(u16, Option<Value>), ApiError> = match (m, parts.as_slice()) {
        ("POST", ["reset"]) => shared.reset().map(|()| (204, None)),
        ("GET", ["proxies"]) => Ok((200, Some(shared.proxies_json()))),
        ("POST", ["proxies"]) => body()
            .and_then(|b| shared.create(&b))
            .map(|v| (201, Some(v))),
        ("POST", ["populate"]) => body()
            .and_then(|b| shared.populate(&b))
            .map(|v| (201, Some(v))),
        ("GET", ["proxies", p]) => shared.proxy_json(p).map(|v| (200, Some(v))),
        ("POST" | "PATCH", ["proxies", p]) => body()
            .and_then(|b| shared.update(p, &b))
            .map(|v| (200, Some(v))),
        ("DELETE", ["proxies", p]) => shared.delete(p).map(|()| (204, None)),
        ("GET", ["proxies", p, "toxics"]) => shared.toxics_json(p).map(|v| (200, Some(v))),
        ("POST", ["proxies", p, "toxics"]) => body()
            .and_then(|b| shared.add_toxic(p, &b))
            .map(|v| (200, Some(v))),
        ("GET", ["proxies", p, "toxics", t]) => shared.toxic_json(p, t).map(|v| (200, Some(v))),
        ("POST" | "PATCH", ["proxies", p, "toxics", t]) => body()
            .and_then(|b| shared.update_toxic(p, t, &b))
            .map(|v| (200, Some(v))),
        ("DELETE", ["proxies", p, "toxics", t]) => shared.remove_toxic(p, t).map(|()| (204, None)),
        (_, ["reset" | "proxies" | "populate" | "version" | "metrics"])
        | (_, ["proxies", _] | ["proxies", _, "toxics"] | ["proxies", _, "toxics", _]) => Err(
            ApiError::new(format!("method {m} not allowed on {path}"), 405),
        ),
        _ => Err(ApiError::new(format!("no such endpoint: {path}"), 404)),
    };
    match result {
        Ok((status, v)) => (
            status,
            "application/json",
            v.map(|v| v.to_string()).unwrap_or_default(),
        ),
        Err(e) => error(&e),
    }
}

fn error(e: &ApiError) -> Answer {
    (e.status, "application/json", e.to_json().to_string())
}
