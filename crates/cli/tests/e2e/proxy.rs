//! `--proxy` through a real forward proxy (Debian's tinyproxy, with a password): http:// in
//! absolute form, https:// through a CONNECT tunnel, credentials from the proxy URL.

use crate::common::*;
use std::process::{Child, Command, Stdio};

/// tinyproxy on a free loopback port, asking for a password; stopped on drop.
struct Tinyproxy {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl Tinyproxy {
    fn start() -> Tinyproxy {
        let dir = TempDir::new("tinyproxy");
        let port = free_port();
        let conf = dir.path("tinyproxy.conf");
        std::fs::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 30\nAllow 127.0.0.1\nMaxClients 64\n\
                 LogFile \"{}\"\nLogLevel Connect\nBasicAuth ann s3cret\n",
                dir.path("proxy.log").display()
            ),
        )
        .unwrap();
        let child = Command::new("tinyproxy")
            .args(["-d", "-c"])
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy is not installed: run `scripts/check` (it installs it)");
        wait_listening(format!("127.0.0.1:{port}").parse().unwrap(), "tinyproxy");
        Tinyproxy { child, port, dir }
    }

    fn url(&self, credentials: &str) -> String {
        format!("http://{credentials}127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path("proxy.log")).unwrap_or_default()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn http_and_https_go_through_a_forward_proxy_with_its_password() {
    let proxy = Tinyproxy::start();
    let nginx = Nginx::start_configured(
        r#"log_format via '$scheme $request_uri via=$http_via';"#,
        "access_log requests.log via;",
        "",
    );
    let dir = TempDir::new("proxied");
    // tinyproxy closes a client's connection after each response without saying so
    // (no `Connection: close`): one request per connection, as it serves them.
    let run = |proxy_url: &str, url: &str, name: &str| {
        Herd::new(&[
            "run",
            "-q",
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            "20",
            "--calls-per-conn",
            "1",
        ])
        .args(&["--proxy", proxy_url, url])
        .json(&dir.path(name))
        .run()
    };
    let r = run(
        &proxy.url("ann:s3cret@"),
        &nginx.url("/page?x=1"),
        "http.json",
    )
    .code(0)
    .json();
    assert_eq!(r["status"]["200"], 20);
    let log = std::fs::read_to_string(nginx.dir.path("requests.log")).unwrap();
    assert_eq!(log.lines().count(), 20);
    assert!(
        log.lines()
            .all(|l| l.starts_with("http /page?x=1 via=1.1 ") && l.contains("tinyproxy/")),
        "{log}"
    );

    // A wrong password: the proxy refuses every request (tinyproxy 1.11 says 401, others 407),
    // and the site sees none of them.
    let r = run(&proxy.url("ann:wrong@"), &nginx.url("/"), "denied.json").json();
    let refused = ["401", "407"].map(|s| r["status"][s].as_u64().unwrap_or(0));
    assert_eq!(refused.iter().sum::<u64>(), 20, "{}", r["status"]);
    let log = std::fs::read_to_string(nginx.dir.path("requests.log")).unwrap();
    assert_eq!(log.lines().count(), 20);

    // Without --calls-per-conn, each request after a connection's first meets tinyproxy's
    // close on the reused connection: a GET goes once more on a new one, counted once.
    let r = Herd::new(&["run", "-q", "-c", "2", "-t", "1", "-n", "20"])
        .args(&["--proxy", &proxy.url("ann:s3cret@"), &nginx.url("/again")])
        .json(&dir.path("reused.json"))
        .run()
        .code(0)
        .json();
    assert_eq!(r["status"]["200"], 20, "{}", r["errors"]);
    assert_eq!(r["totals"]["errors"], 0, "{}", r["errors"]);
    let log = std::fs::read_to_string(nginx.dir.path("requests.log")).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains("/again")).count(), 20);
}

#[test]
fn https_goes_through_a_connect_tunnel_opened_once_per_connection() {
    let proxy = Tinyproxy::start();
    let dir = TempDir::new("tunnel");
    let (cert, key) = (dir.path("cert.pem"), dir.path("key.pem"));
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.key_pair.serialize_pem()).unwrap();
    let nginx = Nginx::start_configured(
        r#"log_format tls '$scheme $ssl_server_name $request_uri';"#,
        &format!(
            "access_log requests.log tls; ssl_certificate {}; ssl_certificate_key {};",
            cert.display(),
            key.display()
        ),
        "ssl",
    );
    let url = format!("https://localhost:{}/secure", nginx.addr.port());
    let r = Herd::new(&["run", "-q", "-c", "2", "-t", "1", "-n", "30", "-k"])
        .args(&["--proxy", &proxy.url("ann:s3cret@"), &url])
        .json(&dir.path("r.json"))
        .run()
        .code(0)
        .json();
    assert_eq!(r["status"]["200"], 30);
    let log = std::fs::read_to_string(nginx.dir.path("requests.log")).unwrap();
    assert!(log.lines().all(|l| l == "https localhost /secure"), "{log}");
    // Two connections, two tunnels: the requests inside cost the proxy nothing more.
    let tunnels = proxy.log().matches("CONNECT localhost:").count();
    assert_eq!(tunnels, 2, "{}", proxy.log());

    let ran = Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "2", "-k"])
        .args(&["--proxy", &proxy.url(""), &url])
        .json(&dir.path("denied.json"))
        .run();
    let r = ran.json();
    let sample = r["error_samples"].to_string();
    assert!(sample.contains("407"), "{sample}");
    assert!(
        sample.contains("the proxy needs credentials")
            && sample.contains("--proxy http://USER:PASSWORD@HOST:PORT"),
        "{sample}"
    );
    // The result records the proxy, never its password.
    let r = read_json(&dir.path("r.json"));
    assert_eq!(
        r["config"]["proxy"],
        format!("http://127.0.0.1:{}", proxy.port)
    );
    let text = std::fs::read_to_string(dir.path("r.json")).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
}

#[test]
fn what_cannot_cross_a_proxy_is_refused_before_anything_is_sent() {
    let proxy = Tinyproxy::start();
    let nginx = Nginx::start("");
    refused(
        &[
            "run",
            "--http3",
            "-k",
            "-n",
            "1",
            "--proxy",
            &proxy.url(""),
            "https://127.0.0.1:9/",
        ],
        "--http3 cannot go through the proxy",
    );
    refused(
        &[
            "run",
            "--http2",
            "-n",
            "1",
            "--proxy",
            &proxy.url(""),
            &nginx.url("/"),
        ],
        "HTTP/2 without TLS (h2c) cannot go through a forward proxy",
    );
    // One connection the proxy saw: the test's own probe that it listens.
    let log = proxy.log();
    assert_eq!(log.matches("Connect (file descriptor").count(), 1, "{log}");
    assert!(!log.contains("Request (file descriptor"), "{log}");
}

#[test]
fn a_proxy_that_is_down_is_blamed_not_the_target() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("proxy-down");
    let down = format!("http://127.0.0.1:{}", free_port());
    let ran = Herd::new(&["run", "-c", "1", "-t", "1", "-n", "3"])
        .args(&["--proxy", &down, &nginx.url("/")])
        .json(&dir.path("r.json"))
        .run();
    ran.code(6);
    let out = ran.stdout();
    assert!(
        out.contains(&format!("NOTHING LISTENS at the proxy {down}")),
        "{out}"
    );
    let r = ran.json();
    let sample = r["error_samples"]["connect_refused"].as_str().unwrap();
    assert!(
        sample.starts_with("connect to the proxy 127.0.0.1:"),
        "{sample}"
    );
}

#[test]
fn a_websocket_goes_through_a_connect_tunnel() {
    let _turn = one_at_a_time();
    let proxy = Tinyproxy::start();
    let echo = crate::ws::Echo::start(0, 0);
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let dir = TempDir::new("ws-tunnel");
    let r = Herd::new(&[
        "run",
        "-q",
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "50",
        "--send",
        "hi {{seq}}",
    ])
    .args(&["--proxy", &proxy.url("ann:s3cret@"), &url])
    .json(&dir.path("r.json"))
    .run()
    .code(0)
    .json();
    assert_eq!(crate::ws::all_answered(&r), 50);
    assert_eq!(echo.count(), 50);
    let tunnels = proxy.log().matches("CONNECT 127.0.0.1:").count();
    assert_eq!(tunnels, 2, "{}", proxy.log());
}
