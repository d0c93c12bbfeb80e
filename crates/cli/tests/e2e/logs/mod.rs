//! `herd logs`, `herd model`, `herd replay --dry-run` on logs a real nginx wrote while driven
//! with a known mix, and `herd logs --against` on a real run's result and nginx's log of it.
//! Modules: `read` (herd logs, --against, bad input), `model`, `replay`; here the logging nginx
//! and the known mix it is driven with.

use crate::common::*;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

mod model;
mod read;
mod replay;

pub const TIMED: &str = r#"log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';"#;
pub const MSEC: &str =
    r#"log_format msec '$msec $remote_addr "$request" $status $body_bytes_sent $request_time';"#;
const JSON: &str = r#"log_format js escape=json '{"time_iso8601":"$time_iso8601","remote_addr":"$remote_addr","request":"$request","status":"$status","body_bytes_sent":"$body_bytes_sent","request_time":"$request_time","http_user_agent":"$http_user_agent"}';"#;

/// nginx with the three log formats in its http block, each to its own file in its directory.
pub fn nginx_logging() -> Nginx {
    Nginx::start_configured(
        &format!("{TIMED}\n    {MSEC}\n    {JSON}"),
        "access_log timed.log timed;\n        \
         access_log msec.log msec;\n        \
         access_log json.log js;",
        "",
    )
}

/// One GET on its own connection, read to the end (nginx has logged it when it closes).
pub fn get_once(addr: SocketAddr, path: &str, agent: &str) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {agent}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert!(
        out.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

/// 200 requests: half item pages (ids 1..37), 30% searches, 20% the home page.
pub fn drive_known_mix(addr: SocketAddr) {
    for i in 0..200 {
        let path = match i % 10 {
            0..=4 => format!("/items/{}", i % 37 + 1),
            5..=7 => format!("/search?q=term{i}"),
            _ => "/".to_owned(),
        };
        get_once(addr, &path, &format!("agent-{}", i % 4));
    }
}

pub fn share(r: &serde_json::Value, name: &str) -> f64 {
    r["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .map_or(0.0, |t| t["share"].as_f64().unwrap())
}
