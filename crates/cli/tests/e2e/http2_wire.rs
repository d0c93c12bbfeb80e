//! HTTP/2 on the wire: byte counts are the frames and HPACK-compressed headers each way,
//! counted by a relay between herd and nginx; a new connection opens its streams at once,
//! before the server says its limit, and those it refuses go again.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Copies `from` to `to` until `from` ends; returns the bytes copied.
fn pipe(mut from: TcpStream, mut to: TcpStream) -> u64 {
    let mut buf = [0u8; 16 << 10];
    let mut total = 0;
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
        total += n as u64;
    }
    let _ = to.shutdown(Shutdown::Write);
    total
}

/// A TCP relay to `to` for `connections` connections: its address, and the bytes each way
/// (client to server, server to client) once every connection is over.
fn counting_relay(to: SocketAddr, connections: usize) -> (SocketAddr, JoinHandle<(u64, u64)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let relay = std::thread::spawn(move || {
        let (tx, rx) = mpsc::channel();
        for _ in 0..connections {
            let (client, _) = listener.accept().unwrap();
            let server = TcpStream::connect(to).unwrap();
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (up, down) = (tx.clone(), tx.clone());
            std::thread::spawn(move || up.send((pipe(client, server), 0)).unwrap());
            std::thread::spawn(move || down.send((0, pipe(s2, c2))).unwrap());
        }
        drop(tx);
        rx.iter().fold((0, 0), |(u, d), (a, b)| (u + a, d + b))
    });
    (addr, relay)
}

#[test]
fn http2_counts_the_frames_on_the_wire_and_says_connections_x_streams() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("h2-wire");
    let nginx = Nginx::start_with("", "http2");
    let (addr, relay) = counting_relay(nginx.addr, 2);
    let ran = Herd::new(&[
        "run",
        "--http2",
        "-c",
        "2",
        "--streams",
        "10",
        "-n",
        "1000",
        "-t",
        "1",
        &format!("http://{addr}/"),
    ])
    .json(&dir.path("r.json"))
    .run();
    let text = ran.code(0).stdout();
    assert!(
        text.contains("2 connections x 10 streams"),
        "h2load's words for what is in flight:\n{text}"
    );
    let r = ran.json();
    assert_eq!(
        (
            r["config"]["connections"].as_u64(),
            r["config"]["streams"].as_u64()
        ),
        (Some(2), Some(10)),
        "the JSON keeps both numbers"
    );
    let (up, down) = relay.join().unwrap();
    let t = &r["totals"];
    assert_eq!(t["ok"], 1000, "{t}");
    assert_eq!(
        t["bytes_sent"], up,
        "every byte herd wrote (preface, SETTINGS, HEADERS) and no HTTP/1.1 form"
    );
    assert_eq!(t["bytes_received"], down, "every byte nginx wrote");
    // HPACK indexes the repeated fields: far less than the HTTP/1.1 request each time.
    let per_request = up / 1000;
    assert!(per_request < 30, "{per_request} bytes per request");
}

#[test]
fn a_server_allowing_fewer_streams_than_opened_at_once_has_them_sent_again() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("h2-refused");
    // herd opens 10 streams at once, as h2load does, before nginx's SETTINGS say 2: nginx
    // refuses those it cannot take with REFUSED_STREAM (how many depends on how fast it
    // answers the first two), which it never processed.
    let nginx = Nginx::start_with("http2_max_concurrent_streams 2;", "http2");
    let r = Herd::new(&[
        "run",
        "--http2",
        "-c",
        "1",
        "--streams",
        "10",
        "-n",
        "500",
        "-t",
        "1",
        &nginx.url("/"),
    ])
    .json(&dir.path("r.json"))
    .run()
    .code(0)
    .json();
    assert_eq!(r["totals"]["ok"], 500, "{}", r["errors"]);
    assert_eq!(
        r["totals"]["errors"], 0,
        "refused streams are no error: {}",
        r["errors"]
    );
    assert_eq!(
        r["generator"]["connections_opened"], 1,
        "on the same connection"
    );
}
