//! Local ports: herd is judged by its own connections, not by every socket of the machine. A run
//! with 2 keep-alive connections while the port range is nearly full of other sockets in
//! TIME_WAIT is ok, with a warning, not "generator-limited".
//!
//! The test runs in a network namespace of its own (root, as `scripts/check` runs): its loopback,
//! port range and TIME_WAIT sockets are private, so a small range (1,000 ports) fills
//! deterministically and no other test on the machine sees those sockets.

use crate::common::*;
use herd_mock::{Config, Server};
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;

const RANGE: (u16, u16) = (40_000, 40_999);

/// Moves the calling thread into a new network namespace with loopback up, a 1,000-port local
/// range and no TIME_WAIT reuse; `false` when this process may not (not root).
fn private_network() -> bool {
    // SAFETY: unshare only changes the calling thread's namespaces; the flag is documented.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return false;
    }
    // Children spawned from this thread inherit its namespace.
    let script = format!(
        "ip link set lo up && echo '{} {}' > /proc/sys/net/ipv4/ip_local_port_range && \
         echo 0 > /proc/sys/net/ipv4/tcp_tw_reuse",
        RANGE.0, RANGE.1
    );
    let ok = Command::new("sh")
        .args(["-c", &script])
        .status()
        .expect("spawn sh");
    assert!(ok.success(), "set up the private network");
    true
}

/// Connects and closes `n` times from this side first, so each client port ends in TIME_WAIT
/// (60 s), as the ports of earlier runs and other programs do.
fn leave_time_wait(n: usize) {
    let listener = TcpListener::bind("127.0.0.1:9").unwrap(); // below the range: only clients count
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        for _ in 0..n {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1];
            let _ = s.read(&mut buf); // returns at the client's FIN; then this side closes
        }
    });
    for _ in 0..n {
        drop(TcpStream::connect(addr).unwrap());
    }
    server.join().unwrap();
}

fn sockets_in_range() -> usize {
    let mut n = 0;
    for table in ["tcp", "tcp6"] {
        // This thread's namespace, not the process's.
        let text =
            std::fs::read_to_string(format!("/proc/thread-self/net/{table}")).unwrap_or_default();
        n += text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1)?.rsplit(':').next())
            .filter_map(|p| u16::from_str_radix(p, 16).ok())
            .filter(|p| (RANGE.0..=RANGE.1).contains(p))
            .count();
    }
    n
}

#[test]
fn two_keep_alive_connections_among_many_time_wait_sockets_are_judged_ok() {
    let outcome = std::thread::spawn(|| {
        if !private_network() {
            eprintln!("skipped: a network namespace needs root (CAP_SYS_ADMIN)");
            return None;
        }
        let s = Server::start(Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            ..Config::default()
        })
        .unwrap();
        leave_time_wait(960);
        // Well above the 80% at which machine-wide pressure is reported (the kernel may already
        // have let a few go).
        let busy = sockets_in_range();
        assert!(busy >= 850, "{busy} sockets in the range");
        let dir = TempDir::new("ports");
        let json = dir.path("r.json");
        let out = run_herd(&[
            "run",
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "2s",
            "-q",
            "--json",
            json.to_str().unwrap(),
            &format!("http://{}/", s.local_addr()),
        ]);
        Some((out, read_json(&json)))
    })
    .join()
    .unwrap();
    let Some((out, r)) = outcome else { return };
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let g = &r["generator"];
    assert_eq!(g["verdict"], "ok", "{g}");
    assert!(g["ephemeral_ports_peak"].as_u64().unwrap() >= 850, "{g}");
    let warning = g["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("of 1,000 local ports were in use machine-wide")
            && warning.contains("herd's own ~2 "),
        "{warning}"
    );
    assert!(text.contains("generator warning: "), "{text}");
    assert_matches_schema("result.schema.json", &r);
}

#[test]
fn connections_the_server_closes_first_are_not_counted_as_herds_time_wait() {
    let outcome = std::thread::spawn(|| {
        if !private_network() {
            eprintln!("skipped: a network namespace needs root (CAP_SYS_ADMIN)");
            return None;
        }
        let s = Server::start(Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            ..Config::default()
        })
        .unwrap();
        let dir = TempDir::new("ports-close");
        let json = dir.path("r.json");
        // 1,200 connections, one request each, through a 1,000-port range without TIME_WAIT
        // reuse: herd asks `Connection: close` and the server closes first.
        let out = run_herd(&[
            "run",
            "--rate",
            "600",
            "--calls-per-conn",
            "1",
            "-t",
            "1",
            "-d",
            "2s",
            "-q",
            "--json",
            json.to_str().unwrap(),
            &format!("http://{}/", s.local_addr()),
        ]);
        // What `ss` would show on the client side: the ports herd used, in TIME_WAIT or not.
        Some((out, read_json(&json), sockets_in_range()))
    })
    .join()
    .unwrap();
    let Some((out, r, client_side)) = outcome else {
        return;
    };
    let text = stdout(&out);
    let g = &r["generator"];
    assert!(r["totals"]["ok"].as_u64().unwrap() >= 1_000, "{text}");
    assert!(client_side < 100, "{client_side} client ports still held");
    let said = format!("{} {}", g["reasons"], g["warnings"]);
    // It once claimed herd held ~1,200 ports in TIME_WAIT here, and judged itself limited.
    assert!(!said.contains("herd's own connections held"), "{said}");
    assert!(!text.contains("TIME_WAIT"), "{text}");
}
