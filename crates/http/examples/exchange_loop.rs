//! Closed-loop load on one thread, to measure what the transport costs in CPU per request:
//!
//! ```text
//! cargo run --release -p herd-http --example exchange_loop -- http://127.0.0.1:8080/ 50 10
//! ```
//!
//! prints requests per second and CPU microseconds per request (user + system, this process).
//! Run `wrk -t1 -c50 -d10s URL` under `/usr/bin/time` against the same server for the peer
//! figure.

use herd_engine::{Response, Transport};
use herd_http::{prepare, HttpTransport, RequestSpec, Target, TlsOptions};
use std::rc::Rc;
use std::time::Duration;
use tokio::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).map_or("http://127.0.0.1:8080/", String::as_str);
    let connections: usize = args.get(2).map_or(50, |a| a.parse().expect("connections"));
    let seconds: u64 = args.get(3).map_or(10, |a| a.parse().expect("seconds"));

    let target = Target::parse(url).unwrap_or_else(|e| panic!("{e}"));
    let request = Rc::new(prepare(&target, &RequestSpec::get("")).unwrap());
    let transport = Rc::new(HttpTransport::new(&target, TlsOptions { insecure: true }).unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();

    let (cpu_before, wall_before) = (cpu_time(), std::time::Instant::now());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (done, failed) = local.block_on(&runtime, async {
        let workers: Vec<_> = (0..connections)
            .map(|_| {
                let (transport, request) = (transport.clone(), request.clone());
                tokio::task::spawn_local(async move {
                    let (mut done, mut failed) = (0u64, 0u64);
                    let mut resp = Response::default();
                    let mut conn = None;
                    while Instant::now() < deadline {
                        if conn.is_none() {
                            conn = transport.connect().await.ok();
                        }
                        let Some(c) = conn.as_mut() else {
                            failed += 1;
                            continue;
                        };
                        resp.reset();
                        match transport.exchange(c, &request, &mut resp).await {
                            Ok(()) if resp.keep_alive => done += 1,
                            Ok(()) => (done, conn) = (done + 1, None),
                            Err(_) => (failed, conn) = (failed + 1, None),
                        }
                    }
                    (done, failed)
                })
            })
            .collect();
        let mut totals = (0, 0);
        for w in workers {
            let (d, f) = w.await.unwrap();
            totals = (totals.0 + d, totals.1 + f);
        }
        totals
    });
    let (cpu, wall) = (cpu_time() - cpu_before, wall_before.elapsed());
    println!(
        "{done} requests ({failed} failed) in {:.2}s: {:.0} req/s, {:.2} µs CPU per request",
        wall.as_secs_f64(),
        done as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / done.max(1) as f64
    );
}

/// User plus system time of this process.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_secs_f64(ticks as f64 / 100.0)
}
