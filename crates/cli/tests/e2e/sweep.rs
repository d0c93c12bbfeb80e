//! `herd sweep` against the mock server: autobench's columns, a step per level, two targets
//! side by side, the closed-model series, and the early stop past saturation.

use crate::common::*;
use herd_mock::{Config, Route, Server};
use std::sync::Mutex;

/// Steps measure timing: tests in this file run one at a time so they do not load each other.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn mock(routes: &[&str]) -> Server {
    Server::start(Config {
        routes: routes.iter().map(|r| Route::parse(r).unwrap()).collect(),
        ..Config::default()
    })
    .unwrap()
}

const AUTOBENCH: [&str; 10] = [
    "dem_req_rate",
    "req_rate",
    "con_rate",
    "min_rep_rate",
    "avg_rep_rate",
    "max_rep_rate",
    "stddev_rep_rate",
    "resp_time",
    "net_io",
    "errors",
];
const HERDS: [&str; 7] = [
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "p99.9_ms",
    "ok",
    "failed",
    "generator",
];

#[test]
fn a_three_step_sweep_writes_autobenchs_columns_and_a_row_per_rate() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep");
    let (tsv, csv, json) = (dir.path("s.tsv"), dir.path("s.csv"), dir.path("s.json"));
    let out = run_herd(&[
        "sweep",
        &format!("http://{}/", server.local_addr()),
        "--rates",
        "50:150:50",
        "--step-duration",
        "1s",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "--tsv",
        tsv.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    let want: Vec<&str> = AUTOBENCH.iter().chain(HERDS.iter()).copied().collect();
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), want);
    assert_eq!(lines.len(), 4, "{tsv}");
    for (line, rate) in lines[1..].iter().zip(["50", "100", "150"]) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), want.len(), "{line}");
        assert_eq!(cells[0], rate);
        let sent: f64 = cells[1].parse().unwrap();
        let asked: f64 = rate.parse().unwrap();
        assert!((sent - asked).abs() <= asked * 0.2, "{line}");
        // A healthy server: at most an arrival left unsent as the step ends.
        let errors: f64 = cells[9].parse().unwrap();
        assert!(errors <= 2.0, "{line}");
        assert!(["ok", "generator-limited"].contains(&cells[16]), "{line}");
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().next().unwrap(), want.join(","));
    assert_eq!(csv.lines().count(), 4);
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    assert_eq!(r["kind"], "sweep");
    assert_eq!(r["model"], "open");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2]["level"].as_f64(), Some(150.0));
    assert_eq!(steps[2]["runs"][0]["config"]["rate"].as_f64(), Some(150.0));
    assert!(r["stopped_early"].is_null());
    // The live table: a header, then one line per step.
    let rows = text
        .lines()
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap_or_default();
            first.replace(',', "").parse::<f64>().is_ok()
        })
        .count();
    assert_eq!(rows, 3, "{text}");
    assert!(text.contains("no saturation up to 150"), "{text}");
    // Its report: the same conclusion first, then the curves and a row per step.
    let page = html_report(&json);
    let conclusion = text
        .lines()
        .find(|l| l.contains("no saturation up to 150"))
        .unwrap();
    assert!(page.contains(conclusion), "{conclusion}");
    for id in [
        "chart-sweep-throughput",
        "chart-sweep-latency",
        "chart-sweep-errors",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(!page.contains("no data"));
    let table = page.split("class=\"sweep-steps\"").nth(1).unwrap();
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 4, "a header and 3 steps");
}

#[test]
fn two_targets_are_swept_side_by_side_with_suffixed_columns() {
    let _serial = serial();
    let server = mock(&["/slow latency=2ms", "/*"]);
    let dir = TempDir::new("sweep2");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let out = run_herd(&[
        "sweep",
        "--target",
        &format!("fast=http://{}/", server.local_addr()),
        "--target",
        &format!("slow=http://{}/slow", server.local_addr()),
        "--rates",
        "50,100",
        "--step-duration",
        "1s",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "--tsv",
        tsv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let header: Vec<String> = tsv
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .map(String::from)
        .collect();
    let mut want = vec!["dem_req_rate".to_owned()];
    for t in ["fast", "slow"] {
        want.extend(AUTOBENCH[1..].iter().map(|c| format!("{c}_{t}")));
    }
    for t in ["fast", "slow"] {
        want.extend(HERDS.iter().map(|c| format!("{c}_{t}")));
    }
    assert_eq!(header, want);
    assert_eq!(tsv.lines().count(), 3);
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let runs = s["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        assert!(runs[1]["target"].as_str().unwrap().ends_with("/slow"));
        // The slow route takes 2 ms; the fast one does not.
        assert!(runs[1]["service_time_ms"]["p50"].as_f64().unwrap() >= 2.0);
    }
    assert_eq!(r["targets"][1]["name"], "slow");
    assert_eq!(
        text.lines().filter(|l| l.contains(" slow ")).count(),
        2,
        "{text}"
    );
    let page = html_report(&json);
    for line in ["fast good replies/s", "slow good replies/s", "slow p99"] {
        assert!(page.contains(line), "{line}");
    }
}

#[test]
fn one_named_target_gets_autobenchs_host_suffixed_columns() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-named");
    let (tsv, png) = (dir.path("s.tsv"), dir.path("s.png"));
    let out = run_herd(&[
        "sweep",
        "--target",
        &format!("testhost=http://{}/", server.local_addr()),
        "--rates",
        "20",
        "--step-duration",
        "500ms",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "-q",
        "--tsv",
        tsv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&tsv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split('\t').collect();
    // Seed 001's autobench file for one host, column for column.
    let seed = std::fs::read_to_string(format!(
        "{}/../result/tests/fixtures/autobench_seed001.tsv",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let autobench: Vec<&str> = seed.lines().next().unwrap().split('\t').collect();
    assert_eq!(header[..autobench.len()], autobench[..]);
    let herds: Vec<String> = HERDS.iter().map(|c| format!("{c}_testhost")).collect();
    assert_eq!(header[autobench.len()..], herds[..]);
    // Read back: `herd plot` names the line after the suffix.
    let plot = run_herd(&["plot", tsv.to_str().unwrap(), "-o", png.to_str().unwrap()]);
    assert_eq!(plot.status.code(), Some(0), "{}", stderr(&plot));
    let table = herd_result::sweep::read_table(&text, "s.tsv", "s").unwrap();
    assert_eq!(table.targets, vec!["testhost"]);
    assert_eq!(table.steps.len(), 1);
}

#[test]
fn a_closed_series_runs_one_step_per_connection_count() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-closed");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let out = run_herd(&[
        "sweep",
        &format!("http://{}/", server.local_addr()),
        "--connections",
        "1,5,10",
        "--step-duration",
        "500ms",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "--tsv",
        tsv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    assert!(tsv.starts_with("users\treq_rate\t"), "{tsv}");
    let levels: Vec<&str> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(levels, ["1", "5", "10"]);
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    assert_eq!(r["model"], "closed");
    let conns: Vec<u64> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["runs"][0]["config"]["connections"].as_u64().unwrap())
        .collect();
    assert_eq!(conns, [1, 5, 10]);
    let page = html_report(&json);
    assert!(page.contains("Throughput against concurrent users"));
    assert!(page.contains("<th>users</th>"));
}

#[test]
fn a_sweep_stops_once_errors_pass_the_limit_two_steps_in_a_row() {
    let _serial = serial();
    let server = mock(&["/* fault=reset"]);
    let dir = TempDir::new("sweep-stop");
    let json = dir.path("s.json");
    let out = run_herd(&[
        "sweep",
        &format!("http://{}/", server.local_addr()),
        "--rates",
        "20:100:20",
        "--step-duration",
        "500ms",
        "--cooldown",
        "0s",
        // the stop rule in the grammar of thresholds and --slo
        "--stop",
        "errors <= 5%",
        "-t",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    let steps = r["steps"].as_array().unwrap();
    // Every step is past the limit (every request is reset); a step where herd itself was the
    // bottleneck does not count, so the sweep stops right after the second one that does.
    let counted: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s["runs"][0]["generator"]["verdict"] == "ok")
        .map(|(i, _)| i)
        .collect();
    for s in steps {
        assert_eq!(s["runs"][0]["totals"]["ok"].as_u64(), Some(0));
    }
    if counted.len() >= 2 {
        assert_eq!(steps.len(), counted[1] + 1, "{text}");
        assert!(r["stopped_early"]
            .as_str()
            .unwrap()
            .contains("broke the stop rule"));
        assert!(
            text.contains("stopped early: every target broke the stop rule"),
            "{text}"
        );
    } else {
        assert_eq!(steps.len(), 5, "{text}");
    }
    // The conclusion says what the table shows: nothing answered, from the first level. (It
    // once said "no saturation up to 40 req/s" above "stopped early: past saturation".)
    assert!(text.contains("saturated from the first level"), "{text}");
    assert!(
        text.contains("errors from ") && text.contains("(100%, up to 100%)"),
        "{text}"
    );
    assert!(!text.contains("no saturation"), "{text}");
    assert_eq!(r["config"]["stop"]["max_error_percent"].as_f64(), Some(5.0));
}

#[test]
fn sweep_refuses_bad_input_before_sending() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sweep", "http://127.0.0.1:1/", "--rates", "600:20:20"],
            "goes down",
        ),
        (&["sweep", "http://127.0.0.1:1/"], "--rates"),
        (&["sweep", "--rates", "10"], "give a URL"),
        (
            &["sweep", "http://127.0.0.1:1/", "--rates", "10", "-H", "bad"],
            "Name: value",
        ),
        (
            &[
                "sweep",
                "http://127.0.0.1:1/",
                "--rates",
                "10",
                "--stop",
                "p99 < 100",
            ],
            "column 7: in `p99 < 100`: `100` is not a duration (a bare number has no unit)",
        ),
        (
            &[
                "sweep",
                "http://127.0.0.1:1/",
                "--rates",
                "10",
                "--stop",
                "rps > 5",
            ],
            "`rps > 5` is not an upper limit",
        ),
    ];
    for (args, want) in cases {
        let out = run_herd(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A workload of two requests per iteration, against `addr`.
fn two_step_workload(dir: &TempDir, addr: std::net::SocketAddr) -> String {
    let path = dir.path("shop.yaml");
    std::fs::write(
        &path,
        format!(
            "target: http://{addr}\n\
             load: {{ model: closed, users: 50, duration: 1h }}\n\
             scenarios:\n  \
               - name: browse\n    \
                 steps:\n      \
                   - get: /index\n        name: index\n      \
                   - get: /items/1\n        name: item page\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

fn steps(r: &serde_json::Value) -> &Vec<serde_json::Value> {
    r["steps"].as_array().unwrap()
}

#[test]
fn a_workload_file_is_swept_at_iterations_per_second_with_its_names_per_step() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-workload");
    let file = two_step_workload(&dir, server.local_addr());
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let out = run_herd(&[
        "sweep",
        &file,
        "--rates",
        "20:40:20",
        "--step-duration",
        "1s",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "-q",
        "--tsv",
        tsv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    // The file's closed load for an hour is replaced by each step's rate for a second.
    assert!(text.contains("iter/s asked"), "{text}");
    assert!(
        text.contains("shop.yaml: no saturation up to 40 iterations/s asked"),
        "{text}"
    );
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    let want: Vec<&str> = AUTOBENCH.iter().chain(HERDS.iter()).copied().collect();
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), want);
    assert_eq!(lines.len(), 3, "{tsv}");
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    assert_eq!(r["model"], "open");
    assert_eq!(r["targets"][0]["name"], "shop.yaml");
    for (step, (line, rate)) in steps(&r).iter().zip(lines[1..].iter().zip([20.0, 40.0])) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells[0], format!("{rate}"));
        let run = &step["runs"][0];
        assert_eq!(run["config"]["model"], "open");
        assert_eq!(run["config"]["rate"].as_f64(), Some(rate));
        assert_eq!(run["config"]["duration_s"].as_f64(), Some(1.0));
        assert_eq!(run["workload"].as_str(), Some(file.as_str()));
        // Each step counts its own iterations, and each iteration sends both requests.
        let names: Vec<&str> = run["by_name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["index", "item page"]);
        let iterations = run["by_scenario"][0]["iterations"].as_u64().unwrap();
        let expected = rate as u64;
        assert!(
            iterations.abs_diff(expected) <= expected / 10 + 1,
            "{iterations} iterations at {rate}/s for 1s"
        );
        for n in run["by_name"].as_array().unwrap() {
            let ok = n["totals"]["ok"].as_u64().unwrap();
            assert!(
                ok.abs_diff(iterations) <= 2,
                "{}: {ok} ok, {iterations} iterations",
                n["name"]
            );
        }
        // Requests per second, shown beside, are two per iteration.
        let req_rate: f64 = cells[1].parse().unwrap();
        assert!(
            (req_rate - 2.0 * rate).abs() <= 0.2 * rate,
            "{req_rate} req/s at {rate} iterations/s"
        );
    }
    let page = html_report(&json);
    assert!(page.contains("iterations/s asked"));
}

#[test]
fn a_workload_file_is_swept_with_users_and_refused_when_broken() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-workload-closed");
    let file = two_step_workload(&dir, server.local_addr());
    let json = dir.path("s.json");
    let out = run_herd(&[
        "sweep",
        &file,
        "--connections",
        "1,2",
        "--step-duration",
        "500ms",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    assert_eq!(r["model"], "closed");
    for (step, users) in steps(&r).iter().zip([1, 2]) {
        let run = &step["runs"][0];
        assert_eq!(run["config"]["model"], "closed");
        assert_eq!(run["config"]["connections"].as_u64(), Some(users));
        assert_eq!(run["by_name"].as_array().unwrap().len(), 2);
        assert!(run["by_name"][1]["totals"]["ok"].as_u64().unwrap() > 0);
    }

    // A file that does not compile: `herd validate`'s diagnostics, nothing sent, exit 2.
    let bad = dir.path("bad.yaml");
    std::fs::write(
        &bad,
        format!(
            "target: http://{}\nload: {{ model: closed, users: 1, duration: 1s }}\n\
             scenarios:\n  - name: x\n    steps:\n      - gett: /a\n",
            server.local_addr()
        ),
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let validate = run_herd(&["validate", bad]);
    assert_eq!(validate.status.code(), Some(2));
    let out = run_herd(&["sweep", bad, "--rates", "10"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), stderr(&validate));
    assert!(
        stderr(&out).contains(&format!("{bad}:6:9: unknown key `gett`")),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    // Request flags belong in the file.
    let out = run_herd(&["sweep", &file, "--rates", "10", "-H", "A: b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be combined with a workload file"));
}

/// Spawns herd with `args`, reads its stdout until a line satisfies `ready`, and returns the
/// child and every line read so far. A reader thread does the reading so the wait is bounded.
fn spawn_until(
    args: &[&str],
    ready: impl Fn(&str) -> bool,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    Vec<String>,
) {
    use std::io::BufRead;
    let mut child = herd()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|e| {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no ready line within 60 s ({e}): {seen:?}")
            });
        seen.push(line);
        if ready(seen.last().unwrap()) {
            return (child, rx, seen);
        }
    }
}

#[test]
fn ctrl_c_in_the_cooldown_between_steps_is_an_interrupt() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-sigint");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let url = format!("http://{}/", server.local_addr());
    let (child, rest, _) = spawn_until(
        &[
            "sweep",
            &url,
            "--rates",
            "50,100,150",
            "--step-duration",
            "500ms",
            "--cooldown",
            "10m",
            "-t",
            "1",
            "-q",
            "--tsv",
            tsv.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        // The first step's line: the table's first numeric row.
        |l| l.trim_start().starts_with("50 "),
    );
    // herd now sits in the ten-minute cooldown.
    kill(child.id(), SIGINT);
    let out = child.wait_with_output().unwrap();
    let text: Vec<String> = rest.try_iter().collect();
    assert_eq!(out.status.code(), Some(130), "{text:?}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("sweep.schema.json", &r);
    assert_eq!(r["interrupted"], true);
    assert_eq!(
        r["steps"].as_array().unwrap().len(),
        1,
        "the step done is kept"
    );
    assert_eq!(std::fs::read_to_string(&tsv).unwrap().lines().count(), 2);
    assert!(text.iter().any(|l| l.contains("interrupted")), "{text:?}");
}

#[test]
fn a_mistyped_output_directory_is_refused_before_the_first_request() {
    let _serial = serial();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-outputs");
    let url = format!("http://{}/", server.local_addr());
    for (flag, file) in [
        ("--tsv", "no-such-dir/s.tsv"),
        ("--csv", "no-such-dir/s.csv"),
        ("--json", "no-such-dir/s.json"),
    ] {
        let path = dir.path(file);
        let out = run_herd(&[
            "sweep",
            &url,
            "--rates",
            "50",
            "--step-duration",
            "10m",
            flag,
            path.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(
            err.contains(path.to_str().unwrap()) && err.contains("mkdir -p"),
            "{flag}: {err}"
        );
    }
    assert_eq!(server.stats().requests, 0, "nothing was sent");
}

extern "C" {
    fn listen(fd: i32, backlog: i32) -> i32;
}

/// A server with a listen queue of one that accepts a connection every 50 ms: a burst of
/// connections overflows its queue, and their SYNs are answered only when the client's kernel
/// sends them again, a second later. Stops when `stop` is set and a connection wakes it.
fn slow_acceptor(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, Write};
    use std::os::fd::AsRawFd;
    use std::sync::atomic::Ordering;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: listen(2) again on our own listening socket only shrinks its queue.
    assert_eq!(unsafe { listen(l.as_raw_fd(), 1) }, 0);
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        for c in l.incoming() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(c) = c else { continue };
            std::thread::spawn(move || {
                let mut r = std::io::BufReader::new(c.try_clone().unwrap());
                let mut w = c;
                let mut line = String::new();
                loop {
                    line.clear();
                    match r.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => {
                            if w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                                .is_err()
                            {
                                return;
                            }
                        }
                        Ok(_) => {}
                    }
                }
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    (addr, h)
}

#[test]
fn a_full_listen_queue_is_named_from_the_step_that_overflowed_it() {
    let _serial = serial();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (addr, acceptor) = slow_acceptor(std::sync::Arc::clone(&stop));
    let dir = TempDir::new("sweep-backlog");
    let json = dir.path("s.json");
    let out = run_herd(&[
        "sweep",
        &format!("http://{addr}/"),
        "--connections",
        "1,60",
        "--step-duration",
        "2s",
        "--cooldown",
        "0s",
        "--timeout",
        "5s",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(addr);
    acceptor.join().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.contains(
            "connects cluster at the SYN retransmission times (1 s) from 60 users: the server's \
             listen queue overflowed (its backlog, not its speed)"
        ),
        "{text}"
    );
}
