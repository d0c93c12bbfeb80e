//! wrk2's stop-the-server experiment against a real nginx: 200 req/s for 10 s, nginx stopped
//! (SIGSTOP) for about a second in the middle. Every request intended during the stop waits for
//! it, so ~10% of requests have latencies spread evenly over 0..stop: p99 ~ 0.9 x stop and
//! p95 ~ 0.5 x stop. A tool that measures from the actual send (coordinated omission) reports a
//! few milliseconds instead; herd's service-time view shows exactly that difference.
//!
//! The rate is low on purpose: after the stop, the stalled requests drain through 50
//! connections, and each adds its service time to the ones behind it. At 1,000 req/s a loaded
//! machine's drain of 1,000 requests moved p95 by 11% (CI, session 15); at 200 req/s the drain of
//! 200 is a fifth of that, far inside the tolerance.

use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn latency_from_intended_time_matches_the_analytic_p95_and_p99() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("stop");
    let json = dir.path("r.json");
    let child = herd()
        .args([
            "run", "--rate", "200", "-d", "10s", "-c", "50", "-t", "1", "-q", "--json",
        ])
        .arg(&json)
        .arg(nginx.url("/"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The experiment itself: stop the server for one second, four seconds in.
    std::thread::sleep(Duration::from_secs(4));
    let stopped = Instant::now();
    nginx.signal(SIGSTOP);
    std::thread::sleep(Duration::from_secs(1));
    nginx.signal(SIGCONT);
    let stop = stopped.elapsed().as_secs_f64() * 1000.0;
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = read_json(&json);
    assert_eq!(r["totals"]["scheduled"], 2_000);
    assert_eq!(
        r["totals"]["ok"], 2_000,
        "nothing lost or failed: {}",
        r["totals"]
    );
    let p95 = r["latency_ms"]["p95"].as_f64().unwrap();
    let p99 = r["latency_ms"]["p99"].as_f64().unwrap();
    let (want95, want99) = (0.5 * stop, 0.9 * stop);
    assert!(
        (p95 - want95).abs() <= 0.1 * want95,
        "latency p95 {p95:.0} ms, analytic {want95:.0} ms (stop {stop:.0} ms)"
    );
    assert!(
        (p99 - want99).abs() <= 0.1 * want99,
        "latency p99 {p99:.0} ms, analytic {want99:.0} ms (stop {stop:.0} ms)"
    );
    // what a coordinated-omission tool would have said: the service time hides the stall
    let s95 = r["service_time_ms"]["p95"].as_f64().unwrap();
    assert!(
        s95 < want95 / 5.0,
        "service-time p95 {s95} ms is the actual-send view"
    );
    let text = stdout(&out);
    assert!(
        text.contains("intended") && text.contains("actual send"),
        "both views are labelled:\n{text}"
    );
}
