//! A flag is applied or refused, never dropped: each kind of run (URL, URL file, workload file,
//! log replay) has one table of the flags it takes (`herd_run::flags`), read by run, sweep,
//! capacity and replay alike.

use crate::common::*;

/// A workload file whose requests answer after 2 s, with its own 5 s deadline.
fn slow_workload(dir: &TempDir, url: &str) -> String {
    let path = dir.path("slow.yaml");
    std::fs::write(
        &path,
        format!(
            "target: {url}\ndefaults: {{ timeout: 5s }}\n\
             load: {{ model: closed, users: 1, iterations: 2 }}\n\
             scenarios:\n  - name: s\n    steps:\n      - get: /slow\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn timeout_flag_is_applied_to_a_workload_file() {
    let s = mock(&["/slow latency=2s"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-timeout");
    let file = slow_workload(&dir, &url);
    let ran = Herd::new(&["run", "-q", &file, "--timeout", "100ms"])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.json();
    assert_eq!(r["config"]["timeout_s"], 0.1, "{}", ran.stderr());
    assert_eq!(
        r["totals"]["errors"], 2,
        "both requests hit the flag's deadline"
    );
    assert_eq!(r["errors"]["timeout"], 2, "{}", r["errors"]);
}

#[test]
fn timeout_flag_is_applied_to_a_workload_file_in_a_sweep() {
    let s = mock(&["/slow latency=2s"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-sweep-timeout");
    let file = slow_workload(&dir, &url);
    let ran = Herd::new(&["sweep", "-q", &file, "-c", "1", "--timeout", "100ms"])
        .args(&["--num-conns", "2", "--no-stop"])
        .json(&dir.path("s.json"))
        .run();
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["config"]["timeout_s"], 0.1, "{}", ran.stderr());
    let run = &r["steps"][0]["runs"][0];
    assert_eq!(
        run["config"]["timeout_s"], 0.1,
        "the step ran with it: {run}"
    );
    assert_eq!(run["errors"]["timeout"], 2, "{}", run["errors"]);
}

/// The load flags win over a file's `load:` (k6's order); its requests' flags are refused.
#[test]
fn request_flags_a_workload_file_sets_itself_are_refused_before_sending() {
    let s = mock(&["/*"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-refused");
    let file = slow_workload(&dir, &url);
    let out = refused(
        &["run", &file, "-c", "5", "-H", "A: b", "-m", "PUT"],
        "-m/--method, -H/--header cannot be combined with a workload file",
    );
    let err = stderr(&out);
    assert!(err.contains("`defaults:`"), "says where they go: {err}");
    assert!(!err.contains("-c/--connections"), "-c applies: {err}");
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

/// A log replay is a run like the others: it watches the server when asked, and a bad watch
/// flag stops it before the first line is sent.
#[test]
fn a_replay_applies_watch_flags() {
    let s = mock(&["/*"]);
    let dir = TempDir::new("flags-replay");
    let log = dir.path("a.log");
    let line = |p: &str| {
        format!(
            "1.1.1.1 - - [24/Nov/2026:10:00:00 +0000] \"GET {p} HTTP/1.1\" 200 1 \"-\" \"ua\"\n"
        )
    };
    std::fs::write(&log, [line("/a"), line("/b")].concat()).unwrap();
    let (log, target) = (log.to_str().unwrap(), format!("http://{}/", s.local_addr()));
    let me = std::process::id().to_string();
    let ran = Herd::new(&["replay", log, "--target", &target, "-q", "--watch-pid", &me])
        .json(&dir.path("r.json"))
        .run();
    ran.code(0);
    let r = ran.json();
    assert_eq!(r["totals"]["ok"], 2, "{}", ran.stderr());
    assert_eq!(
        r["server"]["processes"][0]["pid"].as_u64(),
        Some(u64::from(std::process::id()))
    );
    refused(
        &["replay", log, "--target", &target, "--watch-pid", "4999999"],
        "no process has pid 4999999",
    );
    assert_eq!(s.stats().requests, 2, "the refused replay sent nothing");
}

/// `-d 2M` was two months and `1w` a week: a TIME takes exactly the units docs/units.md lists.
#[test]
fn durations_outside_the_documented_units_are_refused() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    for d in ["2M", "1w", "2d", "100y"] {
        refused(&["run", "-d", d, &url], "units: us, ms, s, m, h");
    }
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

/// `--body-file /dev/zero` grew without bound: a body is a regular file of at most 64 MiB,
/// refused before anything is sent otherwise.
#[test]
fn body_files_that_are_not_regular_or_too_big_are_refused() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    refused(
        &["run", "-n", "1", "--body-file", "/dev/zero", &url],
        "is not a regular file",
    );
    let dir = TempDir::new("flags-body");
    let big = dir.path("big.bin");
    // Sparse: 65 MiB on paper, nothing on disk.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    for cmd in [
        &["run", "-n", "1"][..],
        &["sweep", "-c", "1", "--num-conns", "1"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--body-file", big.to_str().unwrap(), &url]);
        refused(&args, "at most 67108864 bytes (64 MiB)");
    }
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

/// `--body-file FIFO` blocked in open() forever, deaf to Ctrl-C: a pipe is refused at once,
/// as docs/run.md promises, without waiting for a writer.
#[test]
fn a_fifo_body_file_is_refused_without_waiting_for_a_writer() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("flags-fifo");
    let fifo = dir.path("body.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = Herd::new(&[
        "run",
        "-n",
        "1",
        "--body-file",
        fifo.to_str().unwrap(),
        &url,
    ])
    .spawn();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("herd still waits on the FIFO after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a regular file (a device, pipe or directory)"),
        "{err}"
    );
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

/// The peak resident memory of herd run with `args`, in bytes (its own, not the test's).
// `wait4` reaps the child: `Child::wait` cannot give its resource usage.
#[allow(clippy::zombie_processes)]
fn peak_rss(args: &[&str]) -> u64 {
    let child = herd()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn herd");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}: {status}"
    );
    usage.ru_maxrss as u64 * 1024
}

/// A 10 MB body cost 64 MB at the peak (read, serialized, copied for HTTP/2's parts, copied
/// for the `Connection: close` twin, each turned into an `Arc`): it is held once.
#[test]
fn a_large_body_is_held_once() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("flags-big-body");
    let size: u64 = 48 << 20;
    let (big, small) = (dir.path("big.bin"), dir.path("small.bin"));
    std::fs::File::create(&big).unwrap().set_len(size).unwrap();
    std::fs::write(&small, b"x").unwrap();
    let rss = |body: &std::path::Path| {
        let args = [
            "run",
            "-q",
            "-n",
            "1",
            "-c",
            "1",
            "-t",
            "1",
            "--body-file",
            body.to_str().unwrap(),
            &url,
        ];
        peak_rss(&args)
    };
    let (base, held) = (rss(&small), rss(&big));
    let cost = held.saturating_sub(base) as f64 / size as f64;
    assert!(cost < 1.4, "a {size}-byte body cost {cost:.2} x its size ({held} bytes at the peak, {base} without it)");
    assert_eq!(s.stats().requests, 2, "both bodies were sent");
}

/// `--bind` with an address that is not this machine's ran and failed every request: it is
/// refused before sending.
#[test]
fn bind_to_an_address_that_is_not_local_is_refused() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
    refused(
        &["run", "-n", "1", "--bind", "192.0.2.1", &url],
        "--bind 192.0.2.1: connections cannot be made from it",
    );
    assert_eq!(s.stats().connections, 0, "nothing was sent");
    let ran = Herd::new(&[
        "run",
        "-q",
        "-n",
        "3",
        "-c",
        "1",
        "--bind",
        "127.0.0.2",
        &url,
    ])
    .run();
    ran.code(0);
    assert_eq!(s.stats().requests, 3, "a local address still works");
}

/// `--rate -5` got clap's hint to pass it after `--`, which would make it the URL: a negative
/// value is read as the flag's value and refused for what it is.
#[test]
fn negative_values_are_refused_as_values_not_taken_for_flags() {
    let url = "http://127.0.0.1:9/";
    for (args, want) in [
        (&["run", "--rate", "-5", url][..], "`-5` is not a rate"),
        (&["run", "-c", "-5", url][..], "`-5` is not a count"),
        (&["run", "-d", "-3s", url][..], "`-3s` is not a duration"),
        (
            &["sweep", "--rates", "5", "--timeout", "-1", url][..],
            "`-1` is not a duration",
        ),
        (
            &["replay", "a.log", "--target", url, "--rate", "-5"][..],
            "`-5` is not a rate",
        ),
    ] {
        let out = refused(args, want);
        assert!(
            !stderr(&out).contains("use '--"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// A workload's own numbers are its file's to fix: `users: 0` is told with its line and column,
/// and too many users for the open-file limit are told to lower `users:`, not `-c` (which a
/// workload refuses).
#[test]
fn workload_load_problems_are_told_in_the_files_words() {
    let dir = TempDir::new("flags-users");
    let file = |users: u64| {
        let path = dir.path(&format!("u{users}.yaml"));
        std::fs::write(
            &path,
            format!(
                "target: http://127.0.0.1:9/\nload: {{ model: closed, users: {users}, duration: 1s }}\n\
                 scenarios:\n  - name: s\n    steps:\n      - get: /\n"
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let zero = file(0);
    refused(&["run", &zero], &format!("{zero}:2:"));
    refused(&["run", &zero], "`users` must be at least 1");
    // More users than any open-file limit allows (Linux's nr_open is at most 2^30).
    let many = file(2_000_000_000);
    let out = refused(&["run", &many], "lower `users:`");
    assert!(!stderr(&out).contains("(-c)"), "{}", stderr(&out));
}

/// `--dashboard 127.0.0.1:PORT URL` (a space, not `=`) failed with "unexpected argument URL":
/// an address or a port after it is its value; a word meant as one that is not says how to
/// write it.
#[test]
fn dashboard_takes_its_address_after_a_space() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    let ran = Herd::new(&[
        "run",
        "--dashboard",
        "127.0.0.1:0",
        "-n",
        "3",
        "-c",
        "1",
        "-q",
        &url,
    ])
    .run();
    ran.code(0);
    assert_eq!(s.stats().requests, 3);
    refused(
        &["run", "--dashboard", "localhost:99999", "-n", "3", &url],
        "write --dashboard=HOST:PORT",
    );
}

/// `--metrics-listen` waited 10 s after the summary without a word: it says it waits for a
/// last scrape, and a Ctrl-C ends the wait.
#[test]
fn metrics_listen_says_it_waits_for_a_last_scrape_and_ctrl_c_skips_it() {
    use std::io::{BufRead, BufReader};
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    let mut child = Herd::new(&[
        "run",
        "--metrics-listen",
        "127.0.0.1:0",
        "-n",
        "3",
        "-c",
        "1",
        "-q",
        &url,
    ])
    .spawn();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let waiting = loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("herd says it waits for a last scrape");
        if line.contains("waiting up to 10 s for a last scrape") {
            break line;
        }
    };
    assert!(waiting.contains("Ctrl-C skips it"), "{waiting}");
    let asked = std::time::Instant::now();
    kill(child.id(), SIGINT);
    let status = child.wait().unwrap();
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(5),
        "the wait went on {:?} after Ctrl-C",
        asked.elapsed()
    );
    assert_eq!(status.code(), Some(0));
}
