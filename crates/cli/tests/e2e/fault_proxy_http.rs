//! `herd proxy`'s `http` toxic met by curl, as a user would meet each fault: a 429 with
//! `Retry-After`, a late body, a reset in the middle of a body, the first request of each
//! connection dropped; and TLS passing through untouched.

use std::process::{Command, Output};

use crate::common::*;
use crate::fault_proxy::HerdProxy;

/// The one toxic of the proxy, replaced by `attrs` (an `http` toxic named `f`).
fn fault(proxy: &HerdProxy, attrs: &[&str]) {
    let toxics = proxy.api_get("/proxies/web/toxics");
    if !toxics.as_array().unwrap().is_empty() {
        proxy.cli(&["toxic", "remove", "-n", "f", "web"]);
    }
    let mut args = vec!["toxic", "add", "-t", "http", "-n", "f"];
    for a in attrs {
        args.extend_from_slice(&["-a", a]);
    }
    args.push("web");
    proxy.cli(&args);
}

fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .expect("run curl")
}

#[test]
fn curl_meets_each_http_fault_as_a_client_would() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let url = format!("http://{}/", proxy.listen);

    // 429 with Retry-After on one path only.
    fault(&proxy, &["path=/api/*", "status=429", "retry_after=7"]);
    let out = curl(&["-i", &format!("{url}api/orders")]);
    let text = stdout(&out);
    assert!(
        text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{text}"
    );
    assert!(text.contains("Retry-After: 7\r\n"), "{text}");
    assert_eq!(
        stdout(&curl(&[&url])),
        "hello from nginx\n",
        "another path is untouched"
    );

    // The body 300 ms after the head: curl's time to the first byte is the server's, its
    // total 300 ms more.
    fault(&proxy, &["body_delay=300"]);
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{time_starttransfer} %{time_total}",
        &url,
    ]);
    let times: Vec<f64> = stdout(&out)
        .split(' ')
        .map(|t| t.parse().unwrap())
        .collect();
    assert!(times[0] < 0.2 && times[1] >= 0.3, "{times:?}");

    // Reset after 5 bytes of the body: curl gets those 5 bytes, then the reset (exit 56).
    fault(&proxy, &["reset=5"]);
    let out = curl(&[&url]);
    assert_eq!(out.status.code(), Some(56), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello");
    assert!(stderr(&out).contains("reset"), "{}", stderr(&out));

    let hits = |proxy: &HerdProxy| proxy.metric("herd_proxy_http_faults_total{proxy=\"web\"}");
    assert_eq!(hits(&proxy), 3, "429, delay, reset");

    // The first request of each connection gets no answer: curl says so (exit 52).
    fault(&proxy, &["drop_first=1"]);
    let out = curl(&[&url]);
    assert_eq!(out.status.code(), Some(52), "{}", stderr(&out));
    assert!(stderr(&out).contains("Empty reply"), "{}", stderr(&out));
    assert_eq!(hits(&proxy), 4);
}

#[test]
fn tls_passes_through_an_http_toxic_untouched() {
    let dir = TempDir::new("fault-tls");
    let tls = nginx_tls(&dir, "");
    let nginx = Nginx::start_with(&tls, "ssl");
    let proxy = HerdProxy::start(nginx.addr, "web");
    fault(&proxy, &["status=503"]);
    let r = Herd::new(&[
        "run",
        "-k",
        "-c",
        "2",
        "-n",
        "50",
        "-t",
        "1",
        &format!("https://{}/", proxy.listen),
    ])
    .json(&dir.path("r.json"))
    .run()
    .code(0)
    .json();
    assert_eq!(r["totals"]["ok"], 50, "{}", r["status"]);
    assert_eq!(
        proxy.metric("herd_proxy_http_faults_total{proxy=\"web\"}"),
        0
    );
    // The same toxic on plain HTTP answers 503 to each.
    let plain = Nginx::start("");
    let proxy = HerdProxy::start(plain.addr, "web");
    fault(&proxy, &["status=503"]);
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{}/", proxy.listen),
    ]);
    assert_eq!(stdout(&out), "503");
}
