//! Shutdown joins the server's threads, counted in /proc: the test runs alone in a process of
//! its own (`common::alone`) so that no other test's server threads are counted.

use std::time::{Duration, Instant};

use crate::common::{alone, Client, TIMEOUT};
use herd_mock::{Config, Route, Server};

fn mock_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("herd-mock-"))
        .count()
}

#[test]
#[cfg(target_os = "linux")]
fn shutdown_joins_every_worker_thread_even_with_busy_connections() {
    if !alone("shutdown::shutdown_joins_every_worker_thread_even_with_busy_connections") {
        return;
    }
    let routes = vec![
        Route::parse("/stall fault=stall").unwrap(),
        Route::parse("/slow latency=60s").unwrap(),
    ];
    let server = Server::start(Config {
        threads: 4,
        routes,
        ..Config::default()
    })
    .unwrap();
    // A thread names itself once it runs, a moment after `start` returns.
    let named = Instant::now();
    while mock_threads() < 4 && named.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(mock_threads(), 4);
    let mut stalled = Client::connect(server.local_addr());
    stalled.send(b"GET /stall HTTP/1.1\r\n\r\n");
    let mut slow = Client::connect(server.local_addr());
    slow.send(b"GET /slow HTTP/1.1\r\n\r\n");
    let _idle = Client::connect(server.local_addr());
    let sent = Instant::now();
    // Wait (bounded) until the server has accepted all three and read both requests.
    while (server.stats().requests < 2 || server.stats().connections < 3)
        && sent.elapsed() < TIMEOUT
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    let stats = server.shutdown();
    assert_eq!((stats.connections, stats.requests), (3, 2));
    // `shutdown` joined every thread; the kernel lets a joined thread's /proc entry go a moment
    // later (the join returns when the thread's tid is cleared, before it is reaped).
    let joined = Instant::now();
    while mock_threads() > 0 && joined.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(mock_threads(), 0);
}
