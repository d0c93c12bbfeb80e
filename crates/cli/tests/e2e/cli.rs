//! The command line as a new user meets it: bad input, limits, Ctrl-C, TLS, the demo.

use crate::common::*;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

#[test]
fn bad_input_is_refused_with_a_clear_message_and_exit_2_before_sending() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "127.0.0.1:8080/"], "http://"),
        (&["run", "ftp://127.0.0.1/"], "scheme"),
        (
            &["run", "http://127.0.0.1:1/a b"],
            "has a space: percent-encode it",
        ),
        (
            &["run", "-d", "10 parsecs", "http://127.0.0.1:1/"],
            "not a duration",
        ),
        (
            &["run", "-H", "NoColonHere", "http://127.0.0.1:1/"],
            "Name: value",
        ),
        (
            &["run", "-H", "Host:", "http://127.0.0.1:1/"],
            "Host header cannot be removed",
        ),
        (&["run", "-c", "0", "http://127.0.0.1:1/"], "at least 1"),
        (&["run", "--rate", "0", "http://127.0.0.1:1/"], "rate"),
        (
            &[
                "run",
                "--body-file",
                "/nonexistent/body.json",
                "http://127.0.0.1:1/",
            ],
            "/nonexistent/body.json",
        ),
        (
            &["run", "http://no-such-host.invalid/"],
            "no-such-host.invalid",
        ),
    ];
    for (args, want) in cases {
        let out = refused(args, want);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(stdout(&out).is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let out = run_herd(&[
        "run",
        "-c",
        "0",
        "-H",
        "bad",
        "--calls-per-conn",
        "0",
        "http://127.0.0.1:1/",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("connections")
            && err.contains("Name: value")
            && err.contains("calls per connection"),
        "{err}"
    );
}

#[test]
fn too_few_file_descriptors_stops_before_sending_and_names_the_fix() {
    let s = mock(&[]);
    let mut cmd = herd();
    cmd.args([
        "run",
        "-c",
        "5000",
        "-n",
        "10",
        &format!("http://{}/", s.local_addr()),
    ]);
    // SAFETY: setrlimit is async-signal-safe; it runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            let rl = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("5064") && err.contains("256") && err.contains("ulimit -n"),
        "{err}"
    );
    assert_eq!(s.stats().requests, 0, "nothing was sent");
}

#[test]
fn ctrl_c_prints_the_summary_writes_the_json_and_exits_130() {
    let s = mock(&[]);
    let dir = TempDir::new("sigint");
    let json = dir.path("r.json");
    let child = herd()
        .args(["run", "-c", "4", "-d", "60s", "-t", "1", "--json"])
        .arg(&json)
        .arg(format!("http://{}/", s.local_addr()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until load is flowing, so the signal handler is surely installed.
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.stats().requests < 100 {
        assert!(Instant::now() < deadline, "herd sent nothing within 20 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    kill(child.id(), SIGINT);
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true);
    assert!(r["totals"]["ok"].as_u64().unwrap() >= 100);
    let text = stdout(&out);
    assert!(
        text.contains("p99") && text.to_lowercase().contains("interrupted"),
        "{text}"
    );
}

#[test]
fn https_verifies_certificates_and_insecure_skips_the_check() {
    let dir = TempDir::new("tls");
    let (cert, key) = (dir.path("cert.pem"), dir.path("key.pem"));
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.key_pair.serialize_pem()).unwrap();
    let nginx = Nginx::start_with(
        &format!(
            "ssl_certificate {}; ssl_certificate_key {};",
            cert.display(),
            key.display()
        ),
        "ssl",
    );
    let url = format!("https://{}/", nginx.addr);
    let json = dir.path("r.json");
    let out = run_herd(&[
        "run",
        "-c",
        "1",
        "-n",
        "5",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    // Every handshake failed: nothing answered (exit 6).
    assert_eq!(out.status.code(), Some(6));
    let r = read_json(&json);
    assert_eq!(
        r["errors"]["tls"], 5,
        "a self-signed certificate is refused: {}",
        r["errors"]
    );
    let out = run_herd(&[
        "run",
        "-c",
        "2",
        "-n",
        "50",
        "--insecure",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let r = read_json(&json);
    assert_eq!(r["totals"]["ok"], 50, "{}", r["errors"]);
}

#[test]
fn demo_runs_the_mock_server_and_prints_a_summary() {
    let started = Instant::now();
    let out = run_herd(&["demo", "-d", "2s"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("p99") && text.contains("throughput"),
        "{text}"
    );
    // What the server counted is what herd counted, both written with separators (4,000).
    let err = stderr(&out);
    let served = err
        .split("the mock server answered ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(served.contains(','), "{err}");
    assert!(
        text.contains(&format!("{served} completed")),
        "server {served}: {text}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// `herd demo` takes `herd run`'s load flags with its own defaults: 200 connections at most,
/// a 5 s deadline, one thread; given, they apply.
#[test]
fn demo_takes_runs_load_flags_with_its_own_defaults() {
    let dir = TempDir::new("demo-load");
    let json = dir.path("demo.json");
    let json_arg = json.to_str().unwrap();
    let out = run_herd(&[
        "demo", "-d", "1s", "--rate", "100", "-q", "--json", json_arg,
    ]);
    // 0, or 4 when a loaded machine starved the generator: the flags are what is asked here.
    assert!(matches!(out.status.code(), Some(0 | 4)), "{}", stderr(&out));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &r["config"];
    assert_eq!(
        (c["connections"].as_u64(), c["threads"].as_u64()),
        (Some(200), Some(1)),
        "{c}"
    );
    assert_eq!(
        (c["rate"].as_f64(), c["timeout_s"].as_f64()),
        (Some(100.0), Some(5.0)),
        "{c}"
    );
    let out = run_herd(&[
        "demo",
        "-d",
        "1s",
        "--rate",
        "100",
        "-c",
        "7",
        "-t",
        "2",
        "--timeout",
        "2s",
        "-q",
        "--json",
        json_arg,
    ]);
    assert!(matches!(out.status.code(), Some(0 | 4)), "{}", stderr(&out));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &r["config"];
    assert_eq!(
        (c["connections"].as_u64(), c["threads"].as_u64()),
        (Some(7), Some(2)),
        "{c}"
    );
    assert_eq!(c["timeout_s"].as_f64(), Some(2.0), "{c}");
}

#[test]
fn serve_answers_on_the_address_it_prints() {
    let port = free_port();
    let mut child = herd()
        .args([
            "serve",
            "--listen",
            // A port alone means loopback, as `nc -l` and `python -m http.server` users expect.
            &format!(":{port}"),
            "-t",
            "1",
            "--route",
            "/hi size=5",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    wait_listening(addr, "herd serve");
    let resp = get(addr, "/hi");
    kill(child.id(), SIGINT);
    let status = child.wait().unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(
        resp.contains("Content-Length: 5") || resp.to_lowercase().contains("content-length: 5"),
        "{resp}"
    );
    assert!(status.success(), "serve exits 0 on Ctrl-C");
}

/// docs/run.md's flag table had five rows twice and none for `--dashboard`,
/// `--dashboard-control`, `--record` or `--watch-parent`: every flag `herd run --help` lists
/// has a row there.
#[test]
fn every_flag_of_run_help_has_a_row_in_docs_run_md() {
    let help = stdout(&run_herd(&["run", "--help"]));
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/run.md")).unwrap();
    let rows: Vec<&str> = docs.lines().filter(|l| l.starts_with("| `-")).collect();
    let mut flags: Vec<String> = help
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix('-')
                .filter(|_| !l.starts_with("--"))
                .map_or(l, |_| l.split_once(", ").map_or(l, |(_, long)| long));
            l.starts_with("--")
                .then(|| l.split([' ', '=', '[']).next().unwrap_or("").to_owned())
        })
        .filter(|f| f != "--help")
        .collect();
    flags.sort();
    flags.dedup();
    assert!(flags.len() > 40, "{flags:?}");
    let missing: Vec<&String> = flags
        .iter()
        .filter(|f| {
            !rows.iter().any(|r| {
                r.match_indices(f.as_str()).any(|(i, _)| {
                    let after = r[i + f.len()..].chars().next().unwrap_or(' ');
                    !(after.is_ascii_alphanumeric() || after == '-')
                })
            })
        })
        .collect();
    assert!(missing.is_empty(), "no row in docs/run.md for {missing:?}");
    let mut seen = std::collections::HashSet::new();
    let twice: Vec<&&str> = rows
        .iter()
        .filter(|r| !seen.insert(r.split(" | ").next()))
        .collect();
    assert!(twice.is_empty(), "rows twice: {twice:?}");
}
