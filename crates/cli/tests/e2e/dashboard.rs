//! The live dashboard (`--dashboard`) in a real browser (Debian's headless Chromium) during a
//! run: the page shows the run's numbers while it runs, follows it over Server-Sent Events and
//! says it finished; `--dashboard-control` stops the run as Ctrl-C does; a control beyond
//! loopback needs the token herd printed; `--record` then `herd report` gives the same page.

use crate::common::{mock, one_at_a_time, stderr, stdout, Herd, TempDir};
use crate::quiet::browser::{browse_url, console};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// Starts `herd` (with `--dashboard`) and returns it with the address it printed.
pub(crate) fn start(h: Herd) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = h.spawn();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.strip_prefix("herd: dashboard at ") {
                let _ = tx.send(url.to_owned());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("herd printed no dashboard address");
        });
    (child, url, reader)
}

/// The dashboard's port on loopback, from the address herd printed.
pub(crate) fn loopback(url: &str) -> SocketAddr {
    let port = url.rsplit(':').next().unwrap();
    let port: u16 = port.split('/').next().unwrap().parse().unwrap();
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// One request to the dashboard: its status line, headers and body.
pub(crate) fn ask(addr: SocketAddr, method: &str, target: &str, headers: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {target} HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Waits, bounded, until `done` holds.
pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Chromium that opens the dashboard at `url` and follows its events until the stream closes
/// (its virtual time waits for that), returned once the dashboard counts it as watching; joined,
/// it gives the page as it ended.
pub(crate) fn follow(dir: &TempDir, url: &str) -> std::thread::JoinHandle<Output> {
    let watcher = {
        let (dir, url) = (dir.path("watcher"), url.to_owned());
        std::thread::spawn(move || {
            let d = TempDir(dir);
            std::fs::create_dir_all(&d.0).unwrap();
            browse_url(&d, &url, &["--virtual-time-budget=3000", "--dump-dom"])
        })
    };
    let addr = loopback(url);
    wait_for("Chromium following the events", || {
        ask(addr, "GET", "/", "").contains("X-Herd-Watching: 1")
    });
    watcher
}

pub(crate) fn finish(
    mut child: Child,
    reader: std::thread::JoinHandle<String>,
) -> (i32, String, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("herd did not end within 30 s of the stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    (status.code().unwrap_or(-1), out, reader.join().unwrap())
}

#[test]
fn the_dashboard_follows_the_run_in_chromium_and_its_button_stops_it_as_ctrl_c() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("dashboard");
    let (json, rec) = (dir.path("r.json"), dir.path("rec.ndjson"));
    let target = format!("http://{}/", server.local_addr());
    // A long run the test stops itself: nothing depends on how fast Chromium starts.
    let h = Herd::new(&[
        "run", &target, "-d", "60s", "--rate", "50", "-c", "2", "-t", "1",
    ])
    .args(&["--dashboard=127.0.0.1:0", "--dashboard-control"])
    .file("--record", &rec)
    .json(&json);
    let (child, url, reader) = start(h);
    assert!(
        url.starts_with("http://127.0.0.1:") && !url.contains("token"),
        "{url}"
    );
    let addr = loopback(&url);
    let seconds = || {
        std::fs::read_to_string(&rec)
            .map(|t| t.matches("\"event\":\"second\"").count())
            .unwrap_or(0)
    };
    wait_for("a second closed", || seconds() >= 1);

    // While it runs: the page as served shows the run's numbers.
    let out = browse_url(&dir, &url, &["--dump-dom"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(dom.contains("data-state=\"running\""), "{dom}");
    assert!(dom.contains("id=\"chart-throughput\""), "{dom}");
    assert!(dom.contains("target rate (the plan)"), "{dom}");
    assert!(dom.contains("<button id=\"stop\""), "{dom}");

    // The first browser's event stream is counted until a write to it fails.
    wait_for("the first browser gone", || {
        ask(addr, "GET", "/", "").contains("X-Herd-Watching: 0")
    });

    // A browser that stays: it follows the events until the end (Chromium's virtual time
    // waits for the stream to close), while the test stops the run as the page's button does.
    let watcher = follow(&dir, &url);
    let before = seconds();
    wait_for("a live update", || seconds() >= before + 2);
    let refused = ask(addr, "POST", "/stop", "");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let stop = ask(addr, "POST", "/stop", "X-Herd-Control: stop\r\n");
    assert!(stop.starts_with("HTTP/1.1 202"), "{stop}");

    let out = watcher.join().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(dom.contains("data-state=\"finished\""), "{dom}");
    assert!(dom.contains("data-ended=\"true\""), "{dom}");
    assert!(dom.contains("Finished: the run was stopped"), "{dom}");
    let updates: u32 = dom
        .split("data-updates=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the page counted its updates");
    assert!(
        updates >= 3,
        "{updates} updates: the page did not follow the run"
    );
    assert!(
        dom.contains("id=\"report-link\" download=\"herd-report.html\" href=\"blob:"),
        "{dom}"
    );

    // As Ctrl-C: exit 130, the summary printed, the JSON whole and marked interrupted.
    let (code, summary, said) = finish(child, reader);
    assert_eq!(code, 130, "{summary}\n{said}");
    assert!(summary.contains("INTERRUPTED"), "{summary}");
    let result = crate::common::read_json(&json);
    assert_eq!(result["interrupted"], true);
    let ended = result["totals"]["completed"].as_u64().unwrap()
        + result["totals"]["errors"].as_u64().unwrap();
    assert!(ended > 0);
    assert!(
        dom.contains(&format!("data-requests=\"{ended}\"")),
        "{ended}: {dom}"
    );

    // The recording makes the same page afterwards, finished, with the same numbers.
    let page = dir.path("page.html");
    let out = crate::common::run_herd(&[
        "report",
        rec.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-state=\"finished\""), "{html}");
    assert!(
        html.contains(&format!("data-requests=\"{ended}\"")),
        "{html}"
    );
    assert!(html.contains("id=\"chart-throughput\"") && !html.contains("EventSource"));
    let text = crate::common::run_herd(&["report", rec.to_str().unwrap()]);
    assert!(stdout(&text).contains("INTERRUPTED"), "{}", stdout(&text));
}

#[test]
fn a_control_beyond_loopback_needs_the_printed_token() {
    let server = mock(&[]);
    let target = format!("http://{}/", server.local_addr());
    let h = Herd::new(&[
        "run", &target, "-d", "60s", "--rate", "20", "-c", "1", "-t", "1", "-q",
    ])
    .args(&["--dashboard=0.0.0.0:0", "--dashboard-control"]);
    let (child, url, reader) = start(h);
    let token = url
        .split("?token=")
        .nth(1)
        .expect("a token in the address")
        .to_owned();
    assert_eq!(token.len(), 32, "{url}");
    let addr = loopback(url.split('?').next().unwrap());
    let from_page = "X-Herd-Control: stop\r\n";
    for (target, headers) in [
        ("/stop", from_page),
        ("/stop?token=0123", from_page),
        (&format!("/stop?token={token}") as &str, ""),
    ] {
        let r = ask(addr, "POST", target, headers);
        assert!(r.starts_with("HTTP/1.1 403"), "{target} {headers:?}: {r}");
    }
    // The page still serves, and the run goes on.
    assert!(ask(addr, "GET", "/", "").contains("data-state="));
    let r = ask(addr, "POST", &format!("/stop?token={token}"), from_page);
    assert!(r.starts_with("HTTP/1.1 202"), "{r}");
    let (code, summary, said) = finish(child, reader);
    assert_eq!(code, 130, "{summary}\n{said}");
}

#[test]
fn a_dashboard_port_taken_stops_the_run_before_anything_is_sent() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = format!("--dashboard={}", taken.local_addr().unwrap());
    let out = crate::common::refused(
        &["run", "http://127.0.0.1:9/", "-d", "1s", &at],
        "cannot listen there",
    );
    assert!(
        stderr(&out).contains("nothing was sent"),
        "{}",
        stderr(&out)
    );
    crate::common::refused(
        &[
            "run",
            "http://127.0.0.1:9/",
            "-d",
            "1s",
            "--dashboard-control",
        ],
        "--dashboard",
    );
}
