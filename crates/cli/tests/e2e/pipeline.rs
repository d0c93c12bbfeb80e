//! `--pipeline K` against a real nginx: a sliding window of requests on each connection, the
//! connections nginx closes after `keepalive_requests` costing nothing, and methods HTTP says
//! not to pipeline refused unless forced.

use crate::common::*;

#[test]
fn pipelined_requests_against_nginx_each_answered_once_across_its_closes() {
    // nginx closes each connection after 50 requests; the requests pipelined behind the 50th
    // were never read, so they go again on a new connection. Its log has every request once.
    let nginx = Nginx::start_configured(
        "log_format piped '$pipe';",
        "keepalive_requests 50; access_log pipe.log piped;",
        "",
    );
    let dir = TempDir::new("pipeline");
    let json = dir.path("r.json");
    let r = Herd::new(&["run", "-c", "4", "--pipeline", "8", "-n", "2000", "-t", "1"])
        .args(&[&nginx.url("/")])
        .json(&json)
        .run()
        .code(0)
        .json();
    assert_eq!(r["totals"]["scheduled"], 2000);
    assert_eq!(r["totals"]["ok"], 2000, "{}", r["errors"]);
    assert_eq!(r["totals"]["errors"], 0);
    let log = std::fs::read_to_string(nginx.dir.path("pipe.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2000, "nginx acted on each request once");
    let piped = lines.iter().filter(|l| **l == "p").count();
    assert!(piped > 1000, "most requests arrived pipelined: {piped}");
}

#[test]
fn a_post_is_not_pipelined_unless_forced() {
    refused(
        &[
            "run",
            "--pipeline",
            "4",
            "-m",
            "POST",
            "-n",
            "1",
            "http://127.0.0.1:9/",
        ],
        "--pipeline-any-method",
    );
}
