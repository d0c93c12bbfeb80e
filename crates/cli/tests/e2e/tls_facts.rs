//! What each TLS handshake settled on (version, cipher suite, ALPN protocol), counted by value
//! in the result and shown on the summary's connect line, against nginx pinned to each.

use crate::common::*;

#[test]
fn the_result_says_which_tls_version_cipher_and_alpn_each_connection_negotiated() {
    let dir = TempDir::new("tls-facts");
    // TLS 1.2 with one cipher suite nginx may choose; herd offers http/1.1 by ALPN.
    let old = Nginx::start_with(
        &nginx_tls(
            &dir,
            "ssl_protocols TLSv1.2; ssl_ciphers ECDHE-ECDSA-AES256-GCM-SHA384;",
        ),
        "ssl",
    );
    let url = format!("https://{}/", old.addr);
    let ran = Herd::new(&["run", "-k", "-c", "3", "-n", "300", "-t", "1", &url])
        .json(&dir.path("tls12.json"))
        .run();
    let r = ran.code(0).json();
    assert_eq!(
        r["generator"]["tls"],
        serde_json::json!([{
            "version": "TLSv1.2",
            "cipher": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "alpn": "http/1.1",
            "connections": 3
        }]),
        "{}",
        r["generator"]
    );
    let connect = ran
        .stdout()
        .lines()
        .find(|l| l.trim_start().starts_with("connect"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no connect line:\n{}", ran.stdout()));
    assert!(
        connect.contains("TLSv1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 http/1.1"),
        "{connect}"
    );

    // TLS 1.3 and HTTP/2 by ALPN.
    let new = Nginx::start_with(&nginx_tls(&dir, "ssl_protocols TLSv1.3;"), "ssl http2");
    let url = format!("https://{}/", new.addr);
    let r = Herd::new(&[
        "run", "-k", "--http2", "-c", "2", "-n", "200", "-t", "1", &url,
    ])
    .json(&dir.path("tls13.json"))
    .run()
    .code(0)
    .json();
    let rows = r["generator"]["tls"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["version"], "TLSv1.3");
    assert_eq!(rows[0]["alpn"], "h2");
    assert_eq!(rows[0]["connections"], 2);
    assert!(rows[0]["cipher"].as_str().unwrap().starts_with("TLS13_"));

    // Plain http has no TLS to tell of.
    let plain = Nginx::start("");
    let r = Herd::new(&["run", "-c", "1", "-n", "10", "-t", "1", &plain.url("/")])
        .json(&dir.path("plain.json"))
        .run()
        .code(0)
        .json();
    assert!(r["generator"].get("tls").is_none(), "{}", r["generator"]);
}

#[test]
fn every_tls_connection_has_a_connect_and_a_tls_phase() {
    let dir = TempDir::new("tls-phases");
    let nginx = Nginx::start_with(
        &nginx_tls(&dir, "ssl_protocols TLSv1.2 TLSv1.3;"),
        "ssl http2",
    );
    let url = format!("https://{}/", nginx.addr);
    // A new connection every 5 requests: 40 handshakes, some of them resumed.
    for (proto, extra) in [("h1", None), ("h2", Some("--http2"))] {
        let mut args = vec![
            "run",
            "-k",
            "-c",
            "4",
            "-n",
            "200",
            "--calls-per-conn",
            "5",
            "-t",
            "1",
            &url,
        ];
        args.extend(extra);
        let r = Herd::new(&args)
            .json(&dir.path(&format!("{proto}.json")))
            .run()
            .code(0)
            .json();
        let opened = r["generator"]["connections_opened"].as_u64().unwrap();
        assert_eq!(opened, 40, "{proto}: {}", r["generator"]);
        assert_eq!(
            r["connect_ms"]["count"], opened,
            "{proto}: {}",
            r["connect_ms"]
        );
        assert_eq!(
            r["phases"]["tls_ms"]["count"], opened,
            "{proto}: every connection's handshake is timed apart from its TCP connect: {}",
            r["phases"]
        );
        // The TLS handshake is part of the connection's set-up, never longer than it.
        let (connect, tls) = (
            r["connect_ms"]["max"].as_f64().unwrap(),
            r["phases"]["tls_ms"]["max"].as_f64().unwrap(),
        );
        assert!(
            tls <= connect,
            "{proto}: tls {tls} ms > connect {connect} ms"
        );
    }
}
