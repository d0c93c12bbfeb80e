//! The closed model on the one loop: exact counts, connections kept alive, shared between
//! threads and replaced after `--calls-per-conn`, the warm-up, Ctrl-C, stages of users.

use crate::common::loop_server::{plan, run_plan, run_until_ctrl_c, server, Serve, ANSWER, ASK};
use herd_engine::{run, Plan, Request, Single, SystemClock};
use herd_http::{HttpTransport, Target, TlsOptions};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn runs_exactly_the_requests_asked_for_on_kept_alive_connections() {
    let (addr, accepted) = server(Serve::Answer);
    let out = run_plan(&plan(8, 2_000), addr);
    assert_eq!(out.total.completed, 2_000);
    assert_eq!(out.total.ok, 2_000);
    assert_eq!(
        out.scheduled, 2_000,
        "scheduled = completed + errors + dropped"
    );
    assert_eq!(out.total.bytes_received, 2_000 * ANSWER.len() as u64);
    assert_eq!(out.total.bytes_sent, 2_000 * ASK.len() as u64);
    assert_eq!(
        out.generator.connections_opened, 8,
        "one connection per user"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 8);
    assert_eq!(
        out.total.connect.len(),
        8,
        "connect time once per connection"
    );
    assert_eq!(out.total.service.len(), 2_000);
}

#[test]
fn several_threads_share_the_count() {
    let (addr, _) = server(Serve::Answer);
    let p = Plan {
        threads: 2,
        ..plan(5, 1_001)
    };
    let out = run_plan(&p, addr);
    assert_eq!(out.total.completed, 1_001);
    assert_eq!(out.generator.connections_opened, 5);
}

#[test]
fn every_thread_reports_its_seconds() {
    let (addr, _) = server(Serve::Answer);
    let p = Plan {
        threads: 2,
        ..plan(2, 500)
    };
    let out = run_plan(&p, addr);
    let in_timeline: u64 = out.timeline.iter().map(|s| s.requests()).sum();
    assert_eq!(in_timeline, 500, "the timeline holds every request once");
}

#[test]
fn calls_per_conn_replaces_the_connection() {
    let (addr, accepted) = server(Serve::Answer);
    let p = Plan {
        calls_per_conn: Some(3),
        ..plan(1, 30)
    };
    let out = run_plan(&p, addr);
    assert_eq!(out.total.ok, 30);
    assert_eq!(out.generator.connections_opened, 10);
    assert_eq!(accepted.load(Ordering::SeqCst), 10);
}

/// The client's own address in the test below: TIME_WAIT sockets toward a reused server port,
/// left by the other tests of this binary (or other processes) from 127.0.0.1, are not counted.
const SOURCE: std::net::Ipv4Addr = std::net::Ipv4Addr::new(127, 0, 0, 211);

/// Client-side sockets from `source` to `port` in TIME_WAIT, from /proc/net/tcp.
fn time_wait_toward(source: std::net::Ipv4Addr, port: u16) -> usize {
    // "0100007F:1F90": the address as the kernel's u32 in hex (host order, little-endian here).
    let parse = |field: &str| {
        let (ip, port) = field.split_once(':')?;
        let ip = u32::from_str_radix(ip, 16).ok()?.to_le_bytes();
        Some((
            std::net::Ipv4Addr::from(ip),
            u16::from_str_radix(port, 16).ok()?,
        ))
    };
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3
                && f[3] == "06"
                && parse(f[1]).is_some_and(|(ip, _)| ip == source)
                && parse(f[2]).is_some_and(|(_, p)| p == port)
        })
        .count()
}

#[test]
fn the_last_call_of_a_connection_asks_the_server_to_close_and_the_server_closes_first() {
    // A server that honours `Connection: close` by closing after its answer, as nginx does,
    // and counts the requests that asked for it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&asked);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let count = Arc::clone(&count);
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&pending[..end]).to_string();
                    pending.drain(..end + 4);
                    if head.contains("\r\nConnection: close") {
                        count.fetch_add(1, Ordering::SeqCst);
                        let _ = conn.write_all(
                            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
                        );
                        return; // closes first
                    }
                    if conn.write_all(ANSWER).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let target = Target::parse(&format!("http://{addr}/")).unwrap();
    let options = TlsOptions {
        source: Some(SOURCE.into()),
        ..TlsOptions::default()
    };
    let transport = HttpTransport::new(&target, options).unwrap();
    let request = herd_http::with_closing(Request::new(ASK));
    let plan = Plan {
        calls_per_conn: Some(3),
        ..plan(1, 30)
    };
    let out = run(
        &plan,
        Arc::new(SystemClock),
        |_| transport.wire(),
        |_| Single(request.clone()),
        herd_engine::Hooks::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.total.ok, 30, "{:?}", out.total.errors);
    assert_eq!(out.generator.connections_opened, 10);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        10,
        "every third request asked for the close"
    );
    assert_eq!(
        time_wait_toward(SOURCE, addr.port()),
        0,
        "the generator's ports are left free: the server closed first"
    );
}

#[test]
fn warm_up_requests_are_run_but_not_counted() {
    let (addr, _) = server(Serve::Answer);
    let p = Plan {
        warmup: Duration::from_millis(200),
        duration: Some(Duration::from_millis(200)),
        requests: None,
        ..plan(2, 0)
    };
    let out = run_plan(&p, addr);
    assert!(out.warmup_requests > 0);
    assert!(out.total.ok > 0);
    assert_eq!(out.scheduled, out.total.ended());
    assert_eq!(
        out.generator.connections_opened, 2,
        "connections outlive the warm-up"
    );
}

#[test]
fn ctrl_c_stops_a_run_and_keeps_what_was_measured() {
    let p = Plan {
        duration: Some(Duration::from_secs(60)),
        requests: None,
        ..plan(4, 0)
    };
    let out = run_until_ctrl_c(&p);
    assert!(out.interrupted);
    assert!(out.total.ok > 0);
    assert_eq!(out.scheduled, out.total.ended());
}

#[test]
fn stages_of_users_run_on_the_same_loop() {
    // 0 -> 2 users over 1 s, then 2 for 0.5 s: the first joins at 0.5 s, the second at 1 s.
    let (addr, accepted) = server(Serve::Answer);
    let stage = |ms, target| herd_engine::Stage {
        duration: Duration::from_millis(ms),
        target,
    };
    let staged = Plan {
        duration: None,
        requests: None,
        stages: vec![stage(1_000, 2.0), stage(500, 2.0)],
        ..plan(2, 1)
    };
    let out = run_plan(&staged, addr);
    assert!(out.total.ok > 0);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
