//! The direct worker on real loopback sockets, with a toy protocol (every answer is five bytes)
//! so these tests check the event loop itself: counting, connection reuse and replacement,
//! deadlines, refused connections and early closes. The HTTP codec on top of it is tested in the
//! http crate and end to end in the CLI's tests.

use herd_engine::metrics::{ErrorKind, Stats};
use herd_engine::{run_direct, Codec, Control, Failure, Load, Parse, Plan, Request, Response};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ANSWER: &[u8] = b"pong!";

/// Five bytes make a response; fewer at a close are an `eof`.
#[derive(Clone)]
struct Five;

struct FiveParser {
    got: usize,
}

impl Codec for Five {
    type Parser = FiveParser;
    fn parser(&self, _req: &Request) -> FiveParser {
        FiveParser { got: 0 }
    }
}

impl Parse for FiveParser {
    fn feed(&mut self, bytes: &[u8], resp: &mut Response) -> Result<(usize, bool), Failure> {
        let take = bytes.len().min(ANSWER.len() - self.got);
        self.got += take;
        let done = self.got == ANSWER.len();
        if done {
            resp.status = 200;
            resp.keep_alive = true;
            resp.body_len = ANSWER.len() as u64;
        }
        Ok((take, done))
    }

    fn closed(&mut self, _unconsumed: &[u8], _resp: &mut Response) -> Result<(), Failure> {
        Err(Failure::new(
            ErrorKind::Eof,
            format!("closed after {} bytes", self.got),
        ))
    }
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
    /// Answer three bytes of five, then close.
    Truncate,
    /// Answer the first request after 1.1 s, then close on the next one without answering: a
    /// keep-alive connection that sat idle and was closed by the server.
    SlowThenGone,
    /// Answer every request twice: the extra answer arrives ahead of the next request.
    Twice,
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
                let mut buf = [0u8; 5];
                let mut answered = 0;
                while conn.read_exact(&mut buf).is_ok() {
                    match serve {
                        Serve::Stall => continue,
                        Serve::Truncate => {
                            let _ = conn.write_all(&ANSWER[..3]);
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

fn run(plan: &Plan, addr: SocketAddr) -> herd_engine::RunOutput {
    run_direct(
        plan,
        addr,
        Request::new(&b"ping\n"[..]),
        Five,
        Control::new().into(),
        |_| {},
    )
    .unwrap()
}

fn errors(s: &Stats, kind: ErrorKind) -> u64 {
    s.error_count(kind)
}

#[test]
fn runs_exactly_the_requests_asked_for_on_kept_alive_connections() {
    let (addr, accepted) = server(Serve::Answer);
    let out = run(&plan(8, 2_000), addr);
    assert_eq!(out.total.completed, 2_000);
    assert_eq!(out.total.ok, 2_000);
    assert_eq!(
        out.scheduled, 2_000,
        "scheduled = completed + errors + dropped"
    );
    assert_eq!(out.total.bytes_received, 2_000 * 5);
    assert_eq!(out.total.bytes_sent, 2_000 * 5);
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
    let out = run(&p, addr);
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
    let out = run(&p, addr);
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
    let out = run(&p, addr);
    assert_eq!(errors(&out.total, ErrorKind::Timeout), 4);
    assert_eq!(out.total.completed, 0);
    // The deadline is swept every 10 ms tick.
    let p50 = Duration::from_micros(out.total.latency.value_at_quantile(0.5));
    assert!(
        p50 >= Duration::from_millis(100) && p50 < Duration::from_secs(2),
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
    let out = run(&plan(3, 50), addr);
    assert_eq!(errors(&out.total, ErrorKind::ConnectRefused), 50);
    assert_eq!(out.scheduled, 50);
    assert_eq!(out.total.bytes_sent, 0, "nothing was sent");
    let (_, _, message) = out.total.errors.iter().next().unwrap();
    assert!(message.unwrap().starts_with(&format!("connect to {addr}:")));
}

#[test]
fn a_server_closing_mid_run_costs_one_error_per_close() {
    let (addr, accepted) = server(Serve::CloseAfter(4));
    let out = run(&plan(1, 50), addr);
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
    let out = run(&p, addr);
    assert_eq!(
        errors(&out.total, ErrorKind::Eof),
        20,
        "{:?}",
        out.total.errors
    );
    assert_eq!(out.total.bytes_received, 20 * 3);
}

#[test]
fn a_connection_closed_while_idle_is_retried_once_not_counted() {
    let (addr, accepted) = server(Serve::SlowThenGone);
    let out = run(&plan(1, 2), addr);
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
    let out = run(&plan(1, 10), addr);
    assert_eq!(out.total.ok, 10);
    assert_eq!(out.total.errors.total(), 0);
    // Each response counts its own five bytes, whether it was read before or after its request.
    assert_eq!(out.total.bytes_received, 10 * 5);
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
    let out = run(&p, addr);
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
    let (addr, _) = server(Serve::Answer);
    let control = Arc::new(Control::new());
    let p = Plan {
        duration: Some(Duration::from_secs(60)),
        requests: None,
        ..plan(4, 0)
    };
    let stopper = Arc::clone(&control);
    let out = run_direct(
        &p,
        addr,
        Request::new(&b"ping\n"[..]),
        Five,
        control,
        move |pr| {
            if pr.requests > 0 {
                stopper.cancel();
            }
        },
    )
    .unwrap();
    assert!(out.interrupted);
    assert!(out.total.ok > 0);
    assert_eq!(out.scheduled, out.total.ended());
}

#[test]
fn only_the_closed_model_runs_direct() {
    let p = Plan {
        load: Load::Open {
            rate: 10.0,
            max_connections: 1,
        },
        ..Plan::default()
    };
    assert!(!herd_engine::direct_supports(&p));
    assert!(herd_engine::direct_supports(&plan(1, 1)));
    let (addr, _) = server(Serve::Answer);
    assert!(run_direct(
        &p,
        addr,
        Request::new(&b"ping\n"[..]),
        Five,
        Control::new().into(),
        |_| {}
    )
    .is_err());
}

#[test]
fn every_thread_reports_its_seconds() {
    let (addr, _) = server(Serve::Answer);
    let p = Plan {
        threads: 2,
        ..plan(2, 500)
    };
    let out = run(&p, addr);
    let in_timeline: u64 = out.timeline.iter().map(|s| s.requests()).sum();
    assert_eq!(in_timeline, 500, "the timeline holds every request once");
}
