//! Thread-per-connection servers for the engine loop's tests, each treating its connections one
//! way (`Serve`), and the runs of a plan against them on real loopback sockets. Every answer is
//! the same small HTTP response, so byte counts are exact.

use herd_engine::metrics::{ErrorKind, Stats};
use herd_engine::{run, Control, Load, Plan, Request, Single, SystemClock};
use herd_http::{HttpTransport, Target, TlsOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

pub const ASK: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";

/// Reads one request (the fixed `ASK`), or fails at a close.
pub fn read_request(conn: &mut TcpStream) -> bool {
    let mut buf = [0u8; ASK.len()];
    conn.read_exact(&mut buf).is_ok()
}

/// How the test server treats a connection.
#[derive(Clone, Copy)]
pub enum Serve {
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
pub fn server(serve: Serve) -> (SocketAddr, Arc<AtomicU64>) {
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

pub fn plan(users: u64, requests: u64) -> Plan {
    Plan {
        load: Load::Closed { users },
        duration: None,
        requests: Some(requests),
        timeout: Duration::from_secs(10),
        ..Plan::default()
    }
}

/// The open model at `rate` with at most `conns` connections, for 500 ms or `requests`.
pub fn open(rate: f64, conns: u64, requests: Option<u64>) -> Plan {
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

pub fn run_on(
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

pub fn run_plan(plan: &Plan, addr: SocketAddr) -> herd_engine::RunOutput {
    run_on(plan, addr, Control::new().into(), |_| {})
}

/// Runs `p` against an answering server and presses Ctrl-C once the first second is in.
pub fn run_until_ctrl_c(p: &Plan) -> herd_engine::RunOutput {
    let (addr, _) = server(Serve::Answer);
    let control: Arc<Control> = Control::new().into();
    let stopper = Arc::clone(&control);
    run_on(p, addr, control, move |pr| {
        if pr.requests > 0 {
            stopper.cancel();
        }
    })
}

pub fn errors(s: &Stats, kind: ErrorKind) -> u64 {
    s.error_count(kind)
}
