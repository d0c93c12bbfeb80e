//! `herd run --http3` end to end against a real Caddy: what Caddy logs is what herd counted.

use crate::common::*;

#[test]
fn http3_run_counts_what_caddy_logs() {
    let caddy = Caddy::start(&[]);
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
        // The QUIC handshakes are the connections' connect times, and their TLS phase.
        assert_eq!(r["connect_ms"]["count"], 4);
        assert!(r["connect_ms"]["max"].as_f64().unwrap() > 0.0);
        assert_eq!(r["phases"]["tls_ms"]["count"], 4);
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
    let mut caddy = Caddy::start(&[]);
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

#[test]
fn http3_reconnects_resume_their_session_and_send_the_first_get_in_0rtt() {
    let caddy = Caddy::start(&[]);
    let dir = TempDir::new("h3-0rtt");
    // Two requests a connection: the second comes back after the session ticket, which the
    // next connection resumes.
    let ran = Herd::new(&["run", "--http3", "-k", "-c", "1", "-n", "20", "-t", "1"])
        .args(&["--calls-per-conn", "2", &caddy.url("/hello")])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(0).json();
    assert_matches_schema("result.schema.json", &r);
    assert_eq!(r["totals"]["ok"], 20, "{}", ran.stdout());
    assert_eq!(r["totals"]["errors"], 0);
    let h3 = &r["generator"]["protocols"][0];
    assert_eq!(h3["protocol"], "h3");
    assert_eq!(h3["connections"], 10);
    let h = &h3["handshakes"];
    let n = |k: &str| h[k]["count"].as_u64().unwrap();
    assert_eq!(n("full") + n("resumed"), 10, "{h}");
    assert!(n("full") >= 1, "the first connection has no session: {h}");
    assert!(n("resumed") >= 5, "reconnects resume: {h}");
    let accepted = h["early_data_accepted"].as_u64().unwrap();
    assert!(accepted >= 5, "Caddy takes a GET in 0-RTT: {h}");
    assert_eq!(h["early_data_rejected"], 0, "{h}");
    assert!(h["resumed"]["mean_ms"].as_f64().unwrap() > 0.0, "{h}");
    assert!(ran.stdout().contains("in 0-RTT"), "{}", ran.stdout());
    // What QUIC's TLS settled on, as for TCP's: TLS 1.3, its cipher suite, ALPN h3.
    let rows = r["generator"]["tls"]
        .as_array()
        .expect("generator.tls rows for h3");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (
            &rows[0]["version"],
            &rows[0]["alpn"],
            &rows[0]["connections"]
        ),
        (&"TLSv1.3".into(), &"h3".into(), &10.into()),
        "{rows:?}"
    );
    assert!(
        rows[0]["cipher"].as_str().unwrap().starts_with("TLS13_"),
        "{rows:?}"
    );
    // Sent early or not, each request reached Caddy once.
    assert_eq!(caddy.access_log(20).len(), 20);

    // 20 connections reconnecting side by side each find a ticket of their own (rustls' own
    // store would keep 8), all but the first 20 handshakes resumed.
    let ran = Herd::new(&["run", "--http3", "-k", "-c", "20", "-n", "80", "-t", "1"])
        .args(&["--calls-per-conn", "2", &caddy.url("/hello")])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(0).json();
    assert_eq!(r["totals"]["ok"], 80, "{}", ran.stdout());
    let h = &r["generator"]["protocols"][0]["handshakes"];
    assert_eq!(
        h["full"]["count"].as_u64().unwrap() + h["resumed"]["count"].as_u64().unwrap(),
        40
    );
    assert!(h["resumed"]["count"].as_u64().unwrap() >= 15, "{h}");
}

#[test]
fn http3_streams_multiplex_requests_up_to_the_servers_limit() {
    let caddy = Caddy::start(&[]);
    let dir = TempDir::new("h3-streams");
    let url = caddy.url("/hello");
    // quic-go, Caddy's QUIC, lets a client open 100 streams at once: 300 asked for are capped
    // there, the rest waiting for a stream, none refused.
    let mut total = 0;
    for (c, streams, n) in [("2", "8", 400), ("1", "300", 600)] {
        let ran = Herd::new(&["run", "--http3", "-k", "-c", c, "--streams", streams])
            .args(&["-n", &n.to_string(), "-t", "1", &url])
            .json(&dir.path("r.json"))
            .run();
        let r = ran.code(0).json();
        assert_eq!(r["totals"]["ok"], n, "{}", ran.stdout());
        assert_eq!(r["totals"]["errors"], 0, "{}", r["error_samples"]);
        assert_eq!(r["generator"]["connections_opened"].to_string(), c);
        assert_eq!(r["generator"]["protocols"][0]["requests"], n);
        assert_eq!(r["config"]["streams"].to_string(), streams);
        assert!(r["config"]["pipeline"].is_null(), "{}", r["config"]);
        assert!(
            ran.stdout().contains(&format!("x {streams} streams")),
            "{}",
            ran.stdout()
        );
        total += n;
    }
    assert_eq!(caddy.access_log(total).len(), total);
    refused(
        &["run", "--http3", "--pipeline", "4", "-n", "1", &url],
        "--pipeline is HTTP/1.1's; over HTTP/2 and HTTP/3 requests share a connection as --streams",
    );
}

#[test]
fn http3_with_an_untrusted_certificate_names_cacert_and_k() {
    // Caddy's internal CA signs its certificate: not one herd trusts.
    let caddy = Caddy::start(&[]);
    let dir = TempDir::new("h3-untrusted");
    let r = Herd::new(&["run", "--http3", "-c", "1", "-n", "3", "-t", "1"])
        .args(&[&caddy.url("/hello")])
        .json(&dir.path("r.json"))
        .run()
        .json();
    assert_eq!(r["totals"]["errors"], 3, "{}", r["errors"]);
    let samples = r["error_samples"].to_string();
    assert!(
        samples.contains("--cacert") && samples.contains("-k"),
        "{samples}"
    );
    assert!(!samples.contains("the connection is over"), "{samples}");
}
