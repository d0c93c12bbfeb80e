//! The one engine loop on real loopback sockets through this crate's transport, against tiny
//! thread-per-connection servers: counting, connection reuse and replacement, deadlines,
//! refused connections, early closes, the open model's queue, Ctrl-C. Every answer is the same
//! small HTTP response, so byte counts are exact.

use herd_engine::metrics::{ErrorKind, Stats};
use herd_engine::{run, Control, Load, Plan, Request, Single, SystemClock};
use herd_http::{HttpTransport, Target, TlsOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
const ASK: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";

/// Reads one request (the fixed `ASK`), or fails at a close.
fn read_request(conn: &mut TcpStream) -> bool {
    let mut buf = [0u8; ASK.len()];
    conn.read_exact(&mut buf).is_ok()
}

/// How the test server treats a connection.
#[derive(Clone, Copy)]
enum Serve {
    /// Answer every request.
    Answer,
    /// Answer this many requests, then close.
    CloseAfter(u64),
    /// Read requests, never answer.
    Stall,
    /// Answer part of the response, then close.
    Truncate,
    /// Answer the first request after 1.1 s, then close on the next one without answering: a
    /// keep-alive connection that sat idle and was closed by the server.
    SlowThenGone,
    /// Answer every request twice: the extra answer arrives ahead of the next request.
    Twice,
    /// Answer every request this many milliseconds after it came.
    Delay(u64),
}

/// A thread-per-connection server on 127.0.0.1:0; counts the connections it accepted. Its
/// threads end when their client closes (the test process ends them otherwise).
fn server(serve: Serve) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut answered = 0;
                while read_request(&mut conn) {
                    match serve {
                        Serve::Stall => continue,
                        Serve::Truncate => {
                            let _ = conn.write_all(&ANSWER[..20]);
                            return;
                        }
                        Serve::SlowThenGone if answered == 1 => return,
                        // The extra answer; a failed write shows on the next one.
                        Serve::Twice => {
                            let _ = conn.write_all(ANSWER);
                        }
                        Serve::SlowThenGone => {
                            std::thread::sleep(Duration::from_millis(1_100));
                        }
                        Serve::CloseAfter(k) if answered == k => return,
                        Serve::Delay(ms) => std::thread::sleep(Duration::from_millis(ms)),
                        _ => {}
                    }
                    if conn.write_all(ANSWER).is_err() {
                        return;
                    }
                    answered += 1;
                }
            });
        }
    });
    (addr, accepted)
}

fn plan(users: u64, requests: u64) -> Plan {
    Plan {
        load: Load::Closed { users },
        duration: None,
        requests: Some(requests),
        timeout: Duration::from_secs(10),
        ..Plan::default()
    }
}

fn run_on(
    plan: &Plan,
    addr: SocketAddr,
    control: Arc<Control>,
    progress: impl FnMut(&herd_engine::Progress),
) -> herd_engine::RunOutput {
    let target = Target::parse(&format!("http://{addr}/")).unwrap();
    let transport = HttpTransport::new(&target, TlsOptions::default()).unwrap();
    let request = Request::new(ASK);
    run(
        plan,
        Arc::new(SystemClock),
        |_| transport.wire(),
        |_| Single(request.clone()),
        control,
        progress,
    )
    .unwrap()
}

fn run_plan(plan: &Plan, addr: SocketAddr) -> herd_engine::RunOutput {
    run_on(plan, addr, Control::new().into(), |_| {})
}

fn errors(s: &Stats, kind: ErrorKind) -> u64 {
    s.error_count(kind)
}

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

#[test]
fn a_stalled_server_times_out_at_the_deadline() {
    let (addr, _) = server(Serve::Stall);
    let p = Plan {
        timeout: Duration::from_millis(100),
        ..plan(2, 4)
    };
    let out = run_plan(&p, addr);
    assert_eq!(errors(&out.total, ErrorKind::Timeout), 4);
    assert_eq!(out.total.completed, 0);
    // The deadline is exact: not a 10 ms tick late (failures have their own histogram,
    // time to error).
    let p50 = Duration::from_micros(out.total.time_to_error.value_at_quantile(0.5));
    assert!(
        p50 >= Duration::from_millis(100) && p50 < Duration::from_millis(105),
        "timed out at {p50:?}"
    );
    let (kind, _, message) = out.total.errors.iter().next().unwrap();
    assert_eq!(kind, ErrorKind::Timeout);
    assert_eq!(message, Some("no complete response within 100ms"));
}

#[test]
fn refused_connections_are_counted_not_fatal() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let out = run_plan(&plan(3, 50), addr);
    assert_eq!(errors(&out.total, ErrorKind::ConnectRefused), 50);
    assert_eq!(out.scheduled, 50);
    assert_eq!(out.total.bytes_sent, 0, "nothing was sent");
    let (_, _, message) = out.total.errors.iter().next().unwrap();
    assert!(message.unwrap().starts_with(&format!("connect to {addr}:")));
}

#[test]
fn a_server_closing_mid_run_costs_one_error_per_close() {
    let (addr, accepted) = server(Serve::CloseAfter(4));
    let out = run_plan(&plan(1, 50), addr);
    // Every fifth request meets a closed connection (nothing received: eof), and the user
    // reconnects for the next one.
    assert_eq!(out.total.ok, 40);
    assert_eq!(errors(&out.total, ErrorKind::Eof), 10);
    assert_eq!(accepted.load(Ordering::SeqCst), 10);
}

#[test]
fn a_response_cut_short_by_a_close_is_eof_not_a_timeout() {
    // The bytes and the close arrive together, in one edge: the worker must read on to the
    // close rather than wait for an edge that never comes.
    let (addr, _) = server(Serve::Truncate);
    let p = Plan {
        timeout: Duration::from_secs(5),
        ..plan(2, 20)
    };
    let out = run_plan(&p, addr);
    assert_eq!(
        errors(&out.total, ErrorKind::Eof),
        20,
        "{:?}",
        out.total.errors
    );
    assert_eq!(out.total.bytes_received, 20 * 20);
}

#[test]
fn a_connection_closed_while_idle_is_retried_once_not_counted() {
    let (addr, accepted) = server(Serve::SlowThenGone);
    let out = run_plan(&plan(1, 2), addr);
    assert_eq!(out.total.ok, 2, "{:?}", out.total.errors);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "the retry opened a fresh connection"
    );
}

#[test]
fn an_answer_that_came_ahead_is_the_next_requests_response() {
    let (addr, _) = server(Serve::Twice);
    let out = run_plan(&plan(1, 10), addr);
    assert_eq!(out.total.ok, 10);
    assert_eq!(out.total.errors.total(), 0);
    // Each response counts its own bytes, whether it was read before or after its request.
    assert_eq!(out.total.bytes_received, 10 * ANSWER.len() as u64);
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

/// Runs `p` against an answering server and presses Ctrl-C once the first second is in.
fn run_until_ctrl_c(p: &Plan) -> herd_engine::RunOutput {
    let (addr, _) = server(Serve::Answer);
    let control: Arc<Control> = Control::new().into();
    let stopper = Arc::clone(&control);
    run_on(p, addr, control, move |pr| {
        if pr.requests > 0 {
            stopper.cancel();
        }
    })
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

/// The open model at `rate` with at most `conns` connections, for 500 ms or `requests`.
fn open(rate: f64, conns: u64, requests: Option<u64>) -> Plan {
    Plan {
        load: Load::Open {
            rate,
            max_connections: conns,
        },
        duration: requests.is_none().then_some(Duration::from_millis(500)),
        requests,
        timeout: Duration::from_secs(10),
        ..Plan::default()
    }
}

#[test]
fn the_open_model_sends_the_whole_schedule() {
    let (addr, _) = server(Serve::Answer);
    // 400 req/s for 500 ms is 200 arrivals, whatever the server does.
    let out = run_plan(&open(400.0, 50, None), addr);
    assert_eq!(out.scheduled, 200);
    // All 200 are answered, unless the host stalled all 50 connections just before the end (an
    // arrival still waiting then is dropped, and counted so).
    assert_eq!(out.total.ok + out.dropped, 200);
    assert_eq!(out.total.bytes_sent, out.total.ok * ASK.len() as u64);
    assert!(out.generator.peak_connections <= 50);
    // With a request count instead of a duration: exactly that many, on two threads.
    let p = Plan {
        threads: 2,
        ..open(2_000.0, 8, Some(301))
    };
    let out = run_plan(&p, addr);
    assert_eq!((out.scheduled, out.total.ok, out.dropped), (301, 301, 0));
}

#[test]
fn open_arrivals_that_find_no_connection_wait_and_at_the_end_are_dropped() {
    // One connection to a server that never answers: the first arrival takes it and times out
    // after the end of the run; the other 49 of 500 ms at 100 req/s wait for it in vain.
    let (addr, accepted) = server(Serve::Stall);
    let p = Plan {
        timeout: Duration::from_millis(800),
        ..open(100.0, 1, None)
    };
    let out = run_plan(&p, addr);
    assert_eq!(
        out.scheduled, 50,
        "scheduled = completed + errors + dropped"
    );
    assert_eq!(errors(&out.total, ErrorKind::Timeout), 1);
    assert_eq!(out.dropped, 49);
    assert_eq!(out.total.completed, 0);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "never more than the cap"
    );
}

#[test]
fn an_arrival_that_waited_is_measured_from_its_intended_time() {
    // 10 arrivals 10 ms apart on one connection to a server that takes 20 ms: each waits for the
    // one before. The tenth, intended at 90 ms, cannot start before 9 x 20 ms, so its latency
    // from the schedule is at least 110 ms though the server took only 20 ms of it.
    let (addr, _) = server(Serve::Delay(20));
    let out = run_plan(&open(100.0, 1, Some(10)), addr);
    assert_eq!(out.total.ok, 10);
    let (lat, svc) = (&out.total.latency, &out.total.service);
    assert!(svc.min() >= 20_000, "service {} us", svc.min());
    assert!(
        lat.max() >= 110_000,
        "latency {} us: the wait counts",
        lat.max()
    );
    assert!(lat.min() >= svc.min());
}

#[test]
fn ctrl_c_ends_an_open_run_and_counts_what_was_left() {
    let p = Plan {
        duration: Some(Duration::from_secs(30)),
        ..open(1_000.0, 4, None)
    };
    let out = run_until_ctrl_c(&p);
    assert!(out.interrupted);
    assert!(out.total.ok > 0);
    assert_eq!(out.scheduled, out.total.ended() + out.dropped);
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

/// Client-side sockets to `port` in TIME_WAIT (remote port `port`), from /proc/net/tcp.
fn time_wait_toward(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3
                && f[3] == "06"
                && f[2]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    == Some(port)
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
    let transport = HttpTransport::new(&target, TlsOptions::default()).unwrap();
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
        Control::new().into(),
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
        time_wait_toward(addr.port()),
        0,
        "the generator's ports are left free: the server closed first"
    );
}
