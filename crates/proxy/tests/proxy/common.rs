use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;

use herd_proxy::{Config, Server};
use serde_json::Value;

pub fn server(seed: u64) -> Server {
    Server::start(Config {
        api: "127.0.0.1:0".parse().unwrap(),
        seed,
        populate: None,
    })
    .unwrap()
}

/// One API call as toxiproxy's client makes it: (status, JSON body or Null).
pub fn call(api: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut s = TcpStream::connect(api).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: toxiproxy-cli\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// An echo server: each line read is written back, on every connection.
pub fn echo() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                let mut r = BufReader::new(c);
                let mut line = String::new();
                while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                    if w.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
    addr
}

/// A server that writes `n` bytes to each connection, then closes it.
pub fn blob(n: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            thread::spawn(move || {
                let _ = c.write_all(&vec![b'b'; n]);
            });
        }
    });
    addr
}

pub fn create(api: SocketAddr, name: &str, upstream: SocketAddr) -> SocketAddr {
    let (status, v) = call(
        api,
        "POST",
        "/proxies",
        Some(
            serde_json::json!({"name": name, "listen": "127.0.0.1:0", "upstream": upstream.to_string()}),
        ),
    );
    assert_eq!(status, 201, "{v}");
    v["listen"].as_str().unwrap().parse().unwrap()
}

/// A value of `/metrics` whose line starts with `prefix`.
pub fn metric(api: SocketAddr, prefix: &str) -> u64 {
    let mut s = TcpStream::connect(api).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in:\n{text}"))
}

/// Sends a line and reads the echo back.
pub fn round_trip(c: &mut BufReader<TcpStream>, line: &str) -> String {
    c.get_mut().write_all(line.as_bytes()).unwrap();
    let mut got = String::new();
    c.read_line(&mut got).unwrap();
    got
}
