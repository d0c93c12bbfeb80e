//! `herd run --http3` end to end against a real Caddy: what Caddy logs is what herd counted.

use crate::common::*;

#[test]
fn http3_run_counts_what_caddy_logs() {
    let caddy = Caddy::start();
    let dir = TempDir::new("h3");
    let json = dir.path("r.json");
    let (hello, missing) = (caddy.url("/hello"), caddy.url("/missing"));
    let mut total = 0;
    for (url, n, status, size) in [(&hello, 300, "200", 5.0), (&missing, 20, "404", 4.0)] {
        let ran = Herd::new(&["run", "--http3", "-k", "-c", "4", "-n", &n.to_string()])
            .args(&["-t", "1", url])
            .json(&json)
            .run();
        let r = ran.code(0).json();
        assert_eq!(r["totals"]["completed"], n, "{}", ran.stdout());
        assert_eq!(r["totals"]["errors"], 0);
        assert_eq!(r["status"][status], n);
        assert_eq!(r["response_bytes"]["max"].as_f64(), Some(size));
        // The QUIC handshakes are the connections' connect times.
        assert_eq!(r["connect_ms"]["count"], 4);
        assert!(r["connect_ms"]["max"].as_f64().unwrap() > 0.0);
        total += n;
    }
    let log = caddy.access_log(total);
    assert_eq!(log.len(), total, "one entry per request herd counted");
    assert!(log.iter().all(|e| e["request"]["proto"] == "HTTP/3.0"));
    let logged = |status: u64| log.iter().filter(|e| e["status"] == status).count();
    assert_eq!((logged(200), logged(404)), (300, 20));
    let bytes: u64 = log.iter().map(|e| e["size"].as_u64().unwrap()).sum();
    assert_eq!(bytes, 300 * 5 + 20 * 4);
}

#[test]
fn http3_refuses_a_cleartext_url() {
    refused(
        &["run", "--http3", "-n", "1", "http://127.0.0.1:9/"],
        "--http3: HTTP/3 runs over QUIC, which is always encrypted: use \"https://127.0.0.1:9/\" instead",
    );
}

#[test]
fn http3_server_killed_mid_run_counts_each_request_once() {
    let mut caddy = Caddy::start();
    let dir = TempDir::new("h3-kill");
    let json = dir.path("r.json");
    let herd = Herd::new(&[
        "run", "--http3", "-k", "-c", "2", "-t", "1", "-d", "3s", "-q",
    ])
    .args(&["--timeout", "1s", &caddy.url("/hello")])
    .json(&json)
    .spawn();
    // Some requests answered, then the server is gone for the rest of the run.
    let served = caddy.access_log(50).len();
    assert!(served >= 50, "caddy served {served} requests");
    caddy.kill();
    let out = herd.wait_with_output().unwrap();
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let t = &r["totals"];
    let n = |k: &str| t[k].as_u64().unwrap();
    assert_eq!(
        n("scheduled"),
        n("completed") + n("errors") + n("dropped"),
        "{t}"
    );
    // Every response herd counted is one Caddy logged, none twice; a request Caddy logged as it
    // died may have lost its response on the way, and is then one of herd's errors.
    let logged = caddy.access_log(0).len() as u64;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(n("completed") <= logged, "{logged} logged: {said}");
    assert!(
        logged <= n("completed") + n("errors"),
        "{logged} logged: {said}"
    );
    assert!(
        n("errors") > 0,
        "the dead server's requests are errors: {t}"
    );
    let classes: Vec<&String> = r["errors"].as_object().unwrap().keys().collect();
    for class in &classes {
        assert!(
            [
                "connect_refused",
                "connect_timeout",
                "timeout",
                "quic_timeout",
                "quic_closed"
            ]
            .contains(&class.as_str()),
            "{classes:?}: {}",
            r["error_samples"]
        );
    }
}
