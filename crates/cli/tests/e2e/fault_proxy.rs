//! `herd proxy` end to end: started as a user starts it, driven by toxiproxy's own CLI (its Go
//! module, built by scripts/check), with nginx behind it and herd run and curl through it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use crate::common::*;

/// toxiproxy's CLI as scripts/check builds it (or where TOXIPROXY_CLI says).
fn toxiproxy_cli() -> PathBuf {
    let path = std::env::var_os("TOXIPROXY_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/herd/go-bin/toxiproxy-cli")
        });
    assert!(
        path.exists(),
        "toxiproxy-cli not found at {}: scripts/check builds it (go install \
         github.com/Shopify/toxiproxy/v2/cmd/cli@v2.12.0), or set TOXIPROXY_CLI",
        path.display()
    );
    path
}

/// `herd proxy` as a child process, killed when dropped.
pub(crate) struct HerdProxy {
    child: Child,
    pub api: SocketAddr,
    pub listen: SocketAddr,
}

impl HerdProxy {
    pub fn start(upstream: SocketAddr, name: &str) -> HerdProxy {
        let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = herd()
            .args(["proxy", "--name", name, "--seed", "1"])
            .args([
                "--listen",
                &listen.to_string(),
                "--upstream",
                &upstream.to_string(),
            ])
            .args(["--api", &api.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn herd proxy");
        wait_listening(api, "herd proxy's API");
        wait_listening(listen, "herd proxy's listener");
        HerdProxy { child, api, listen }
    }

    pub fn cli(&self, args: &[&str]) -> Output {
        let out = Command::new(toxiproxy_cli())
            .args(["--host", &format!("http://{}", self.api)])
            .args(args)
            .output()
            .expect("run toxiproxy-cli");
        assert!(
            out.status.success(),
            "toxiproxy-cli {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        out
    }

    /// The API's answer to a GET, as JSON.
    pub fn api_get(&self, path: &str) -> serde_json::Value {
        let text = get(self.api, path);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: {e}: {text}"))
    }

    /// A line of the API's /metrics, by its start.
    pub fn metric(&self, prefix: &str) -> u64 {
        let mut s = TcpStream::connect(self.api).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {prefix} in /metrics:\n{text}"))
    }
}

impl Drop for HerdProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A short closed-model run of one user: the p50 of its latency, in ms.
fn p50(url: &str, dir: &TempDir, name: &str) -> f64 {
    let r = Herd::new(&["run", "-c", "1", "-t", "1", "-n", "60", url])
        .json(&dir.path(name))
        .run()
        .code(0)
        .json();
    assert_eq!(r["totals"]["ok"], 60, "{}", r["totals"]);
    r["latency_ms"]["p50"].as_f64().unwrap()
}

#[test]
fn toxiproxy_cli_adds_50ms_of_latency_that_herd_run_measures_and_removes_it() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-proxy");
    let through = format!("http://{}/", proxy.listen);

    // toxiproxy's CLI sees herd's proxy as its own.
    let list = stdout(&proxy.cli(&["list"]));
    assert!(
        list.contains("web") && list.contains(&proxy.listen.to_string()),
        "{list}"
    );

    let direct = p50(&nginx.url("/"), &dir, "direct.json");
    proxy.cli(&["toxic", "add", "-t", "latency", "-a", "latency=50", "web"]);
    let toxics = proxy.api_get("/proxies/web/toxics");
    assert_eq!(toxics[0]["name"], "latency_downstream", "{toxics}");
    assert_eq!(toxics[0]["attributes"]["latency"], 50);
    let slowed = p50(&through, &dir, "slowed.json");
    assert!(
        (slowed - direct - 50.0).abs() <= 5.0,
        "p50 through the 50 ms toxic {slowed:.3} ms, direct {direct:.3} ms"
    );

    proxy.cli(&["toxic", "remove", "-n", "latency_downstream", "web"]);
    assert_eq!(proxy.api_get("/proxies/web/toxics"), serde_json::json!([]));
    let healed = p50(&through, &dir, "healed.json");
    eprintln!("p50 direct {direct:.3} ms, with the toxic {slowed:.3} ms, without {healed:.3} ms");
    assert!(
        (healed - direct).abs() <= 1.0,
        "p50 through the proxy without toxic {healed:.3} ms, direct {direct:.3} ms"
    );
}

/// `herd run -n N` through a proxy with one toxic added by toxiproxy's CLI; the JSON result.
fn run_through_toxic(proxy: &HerdProxy, n: &str, toxic: &[&str]) -> serde_json::Value {
    let mut args = vec!["toxic", "add"];
    args.extend_from_slice(toxic);
    args.push("web");
    proxy.cli(&args);
    let dir = TempDir::new("fault-proxy");
    let ran = Herd::new(&[
        "run",
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        n,
        &format!("http://{}/", proxy.listen),
    ])
    .json(&dir.path("r.json"))
    .run();
    let r = ran.json();
    let t = &r["totals"];
    let k = |key: &str| t[key].as_u64().unwrap();
    assert_eq!(
        k("scheduled"),
        k("completed") + k("errors") + k("dropped"),
        "{t}"
    );
    r
}

#[test]
fn reset_peer_every_reset_is_an_error_herd_counts_as_the_proxy_does() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let r = run_through_toxic(
        &proxy,
        "200",
        &["-t", "reset_peer", "-a", "timeout=0", "--tox", "0.3"],
    );
    let resets = proxy.metric("herd_proxy_resets_total{proxy=\"web\"}");
    assert!(
        resets > 0,
        "toxicity 0.3 of 200 requests reset some connections"
    );
    assert_eq!(
        r["errors"]["reset"].as_u64().unwrap_or(0),
        resets,
        "{}",
        r["errors"]
    );
    assert_eq!(
        r["totals"]["errors"].as_u64().unwrap(),
        resets,
        "{}",
        r["totals"]
    );
    assert_eq!(r["totals"]["ok"].as_u64().unwrap(), 200 - resets);
}

#[test]
fn limit_data_every_cut_response_is_an_error_herd_counts_as_the_proxy_does() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    // One whole response, then the connection is cut inside the second.
    let one = get(nginx.addr, "/").len();
    let bytes = format!("bytes={}", one + one / 2);
    let r = run_through_toxic(&proxy, "200", &["-t", "limit_data", "-a", &bytes]);
    let cuts = proxy.metric("herd_proxy_limit_closes_total{proxy=\"web\"}");
    assert!(cuts > 0);
    assert_eq!(
        r["errors"]["eof"].as_u64().unwrap_or(0),
        cuts,
        "{}",
        r["errors"]
    );
    assert_eq!(
        r["totals"]["errors"].as_u64().unwrap(),
        cuts,
        "{}",
        r["totals"]
    );
    assert_eq!(r["totals"]["ok"].as_u64().unwrap(), 200 - cuts);
}

#[test]
fn curl_through_the_proxy_gets_nginxs_answer() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "10",
            &format!("http://{}/", proxy.listen),
        ])
        .output()
        .expect("run curl");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello from nginx\n");
    let received = proxy.metric("toxiproxy_proxy_received_bytes_total{direction=\"downstream\"");
    let sent = proxy.metric("toxiproxy_proxy_sent_bytes_total{direction=\"downstream\"");
    assert!(received > 17 && received == sent, "{received} {sent}");
}

#[test]
fn an_http_toxic_answers_503_to_a_share_of_one_path_and_herd_counts_each() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let attrs = [
        "-a",
        "status=503",
        "-a",
        "rate=0.3",
        "-a",
        "path=/*",
        "-a",
        "method=GET",
    ];
    let mut toxic = vec!["-t", "http"];
    toxic.extend_from_slice(&attrs);
    let r = run_through_toxic(&proxy, "300", &toxic);
    let hits = proxy.metric("herd_proxy_http_faults_total{proxy=\"web\"}");
    assert!((40..=140).contains(&hits), "about 30% of 300: {hits}");
    assert_eq!(
        r["status"]["503"].as_u64().unwrap_or(0),
        hits,
        "{}",
        r["status"]
    );
    assert_eq!(
        r["status"]["200"].as_u64().unwrap_or(0),
        300 - hits,
        "{}",
        r["status"]
    );
}

#[test]
fn an_http_toxic_truncating_bodies_is_an_eof_error_for_each_response_it_hit() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let r = run_through_toxic(
        &proxy,
        "100",
        &["-t", "http", "-a", "truncate=5", "-a", "rate=0.5"],
    );
    let hits = proxy.metric("herd_proxy_http_faults_total{proxy=\"web\"}");
    assert!(hits > 0);
    assert_eq!(
        r["errors"]["eof"].as_u64().unwrap_or(0),
        hits,
        "{}",
        r["errors"]
    );
    assert_eq!(r["totals"]["ok"].as_u64().unwrap(), 100 - hits);
}

#[test]
fn a_toxiproxy_populate_file_starts_each_proxy_as_toxiproxy_would() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("fault-proxy");
    let (web, off, api) = (free_port(), free_port(), free_port());
    let config = dir.path("toxiproxy.json");
    std::fs::write(
        &config,
        format!(
            r#"[
  {{"name": "web", "listen": "127.0.0.1:{web}", "upstream": "{up}"}},
  {{"name": "off", "listen": "127.0.0.1:{off}", "upstream": "{up}", "enabled": false}}
]"#,
            up = nginx.addr
        ),
    )
    .unwrap();
    let api: SocketAddr = format!("127.0.0.1:{api}").parse().unwrap();
    let child = herd()
        .args([
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--api",
            &api.to_string(),
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let web: SocketAddr = format!("127.0.0.1:{web}").parse().unwrap();
    wait_listening(api, "herd proxy's API");
    let proxy = HerdProxy {
        child,
        api,
        listen: web,
    };
    let list = stdout(&proxy.cli(&["list"]));
    let line = |name: &str| {
        list.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("web").contains("enabled"), "{list}");
    assert!(line("off").contains("disabled"), "{list}");
    assert!(get(web, "/").ends_with("hello from nginx\n"));
    assert!(
        TcpStream::connect(format!("127.0.0.1:{off}")).is_err(),
        "a disabled proxy listens on nothing"
    );
}

/// toxiproxy's CLI drives the rest of the API as it would toxiproxy's: a proxy created,
/// inspected, disabled and enabled, an upstream toxic with a toxicity and its update, toxics
/// of every type, the metrics of what is in force, and the proxy deleted.
#[test]
fn toxiproxy_cli_creates_inspects_toggles_updates_and_deletes_as_on_toxiproxy() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    proxy.cli(&[
        "create",
        "--listen",
        &listen.to_string(),
        "--upstream",
        &nginx.addr.to_string(),
        "api",
    ]);
    wait_listening(listen, "the proxy the CLI created");
    assert!(get(listen, "/").ends_with("hello from nginx\n"));

    proxy.cli(&["toggle", "api"]);
    assert_eq!(proxy.api_get("/proxies/api")["enabled"], false);
    assert!(
        TcpStream::connect(listen).is_err(),
        "a disabled proxy listens no more"
    );
    proxy.cli(&["toggle", "api"]);
    wait_listening(listen, "the proxy enabled again");

    proxy.cli(&[
        "toxic",
        "add",
        "-t",
        "latency",
        "-n",
        "slow",
        "-a",
        "latency=30",
        "-a",
        "jitter=5",
        "--upstream",
        "--tox",
        "0.5",
        "api",
    ]);
    proxy.cli(&[
        "toxic",
        "update",
        "-n",
        "slow",
        "-a",
        "latency=40",
        "--tox",
        "0.25",
        "api",
    ]);
    for (t, a) in [
        ("bandwidth", "rate=1000"),
        ("slow_close", "delay=10"),
        ("timeout", "timeout=0"),
        ("reset_peer", "timeout=0"),
        ("slicer", "average_size=64"),
        ("limit_data", "bytes=100000"),
        ("packet_loss", "loss_rate=0"),
    ] {
        proxy.cli(&["toxic", "add", "-t", t, "-a", a, "--tox", "0", "api"]);
    }
    let shown = stdout(&proxy.cli(&["inspect", "api"]));
    assert!(
        shown.contains("slow") && shown.contains("packet_loss"),
        "{shown}"
    );
    let slow = proxy.api_get("/proxies/api/toxics/slow");
    assert_eq!(slow["stream"], "upstream", "{slow}");
    assert_eq!(slow["toxicity"], 0.25, "{slow}");
    assert_eq!(
        slow["attributes"],
        serde_json::json!({"latency": 40, "jitter": 5})
    );
    assert_eq!(
        proxy
            .api_get("/proxies/api/toxics")
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(
        proxy.metric(
            "herd_proxy_toxic{proxy=\"api\",toxic=\"slow\",type=\"latency\",stream=\"upstream\"}"
        ),
        1
    );
    // Toxics at toxicity 0 act on no connection (the latency at most slows it): the answer
    // comes whole, and the bytes each way are counted under the proxy's labels.
    let answer = get(listen, "/");
    assert!(answer.ends_with("hello from nginx\n"), "{answer}");
    let up = format!(
        "toxiproxy_proxy_received_bytes_total{{direction=\"upstream\",listener=\"{listen}\",proxy=\"api\""
    );
    assert!(proxy.metric(&up) > 0);

    proxy.cli(&["delete", "api"]);
    assert!(
        TcpStream::connect(listen).is_err(),
        "a deleted proxy listens no more"
    );
    let list = stdout(&proxy.cli(&["list"]));
    assert!(list.contains("web") && !list.contains("api"), "{list}");
}

/// One API call with a body, its status line's code (toxiproxy's API is plain HTTP/1.1).
fn api_call(api: SocketAddr, method: &str, path: &str, body: &str) -> u16 {
    let mut s = TcpStream::connect(api).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// toxiproxy#412, #558: its API hung while the proxy was busy. herd's answers every call
/// promptly (toxics added and removed, proxies listed) while 200 connections carry a run
/// through the proxy.
#[test]
fn the_api_answers_promptly_while_the_proxy_carries_a_heavy_run() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let child = Herd::new(&[
        "run",
        "-c",
        "200",
        "-d",
        "4s",
        "-t",
        "1",
        &format!("http://{}/", proxy.listen),
    ])
    .spawn();
    let started = std::time::Instant::now();
    while proxy.metric("herd_proxy_connections_open{proxy=\"web\"}") < 200 {
        assert!(
            started.elapsed().as_secs() < 10,
            "the run never opened its connections"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut slowest = std::time::Duration::ZERO;
    for i in 0..20 {
        let t = std::time::Instant::now();
        let body = format!(r#"{{"name":"t{i}","type":"latency","attributes":{{"latency":1}}}}"#);
        assert_eq!(
            api_call(proxy.api, "POST", "/proxies/web/toxics", &body),
            200
        );
        assert_eq!(api_call(proxy.api, "GET", "/proxies", ""), 200);
        assert_eq!(
            api_call(
                proxy.api,
                "DELETE",
                &format!("/proxies/web/toxics/t{i}"),
                ""
            ),
            204
        );
        slowest = slowest.max(t.elapsed());
    }
    assert!(
        slowest < std::time::Duration::from_secs(1),
        "three API calls took {slowest:?} under load"
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `herd proxy` listens for its API where toxiproxy's does unless told, and its help names
/// every toxic, herd's own too.
#[test]
fn herd_proxy_help_names_toxiproxys_api_address_and_every_toxic() {
    let out = run_herd(&["proxy", "--help"]);
    let text = stdout(&out);
    assert!(text.contains("[default: 127.0.0.1:8474]"), "{text}");
    for toxic in [
        "latency",
        "bandwidth",
        "slow_close",
        "timeout",
        "reset_peer",
        "slicer",
        "limit_data",
        "packet_loss",
        "http (",
        "http2 (",
    ] {
        assert!(text.contains(toxic), "{toxic}: {text}");
    }
}
