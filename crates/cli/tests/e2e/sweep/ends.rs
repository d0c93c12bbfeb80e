//! How a sweep ends or refuses to begin: the stop rule past saturation, Ctrl-C between steps,
//! bad input and mistyped output paths before the first request, and a full listen queue named
//! from the step that overflowed it.

use super::levels::steps;
use crate::common::*;

#[test]
fn a_sweep_stops_once_errors_pass_the_limit_two_steps_in_a_row() {
    let _turn = one_at_a_time();
    // Every answer an error status: answered (so not exit 6), but not ok.
    let server = mock(&["/* status=503"]);
    let dir = TempDir::new("sweep-stop");
    let json = dir.path("s.json");
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["sweep", &url, "--rates", "20:100:20"])
        .steps("500ms")
        // the stop rule in the grammar of thresholds and --slo
        .args(&["--stop", "errors <= 5%"])
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    let r = ran.json_of("sweep.schema.json");
    let steps = r["steps"].as_array().unwrap();
    // Every step is past the limit (every answer is a 503); a step where herd itself was the
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
    // As `herd run` warns of a run whose every answer was an error status.
    assert!(
        text.contains(&format!(
            "WARNING: {url}: every response was an error status (503 x "
        )),
        "{text}"
    );
}

#[test]
fn a_sweep_where_nothing_listens_says_so_and_exits_6() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let ran = Herd::new(&["sweep", &url, "--rates", "10,20,30"])
        .steps("300ms")
        .run();
    let text = ran.code(6).stdout();
    assert!(
        text.contains(&format!(
            "NOTHING LISTENS: every connection to {url} was refused"
        )),
        "{text}"
    );
    assert!(!text.contains("saturated"), "{text}");
}

#[test]
fn sweep_refuses_bad_input_before_sending() {
    let url = "http://127.0.0.1:1/";
    let cases: &[(&[&str], &str)] = &[
        (&["sweep", url, "--rates", "600:20:20"], "goes down"),
        (&["sweep", url], "--rates"),
        (&["sweep", "--rates", "10"], "give a URL"),
        (&["sweep", url, "--rates", "10", "-H", "bad"], "Name: value"),
        (
            &["sweep", url, "--rates", "10", "--stop", "p99 < 100"],
            "column 7: in `p99 < 100`: `100` is not a duration (a bare number has no unit)",
        ),
        (
            &["sweep", url, "--rates", "10", "--stop", "rps > 5"],
            "`rps > 5` is not an upper limit",
        ),
    ];
    for (args, want) in cases {
        refused(args, want);
    }
}

#[test]
fn ctrl_c_in_the_cooldown_between_steps_is_an_interrupt() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-sigint");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let url = format!("http://{}/", server.local_addr());
    let (child, rest, _) = Herd::new(&["sweep", &url, "--rates", "50,100,150"])
        .args(&[
            "--step-duration",
            "500ms",
            "--cooldown",
            "10m",
            "-t",
            "1",
            "-q",
        ])
        .file("--tsv", &tsv)
        .json(&json)
        // The first step's line: the table's first numeric row.
        .spawn_until(|l| l.trim_start().starts_with("50 "));
    // herd now sits in the ten-minute cooldown.
    let r = interrupt_series(child, rest, &json, "sweep.schema.json");
    assert_eq!(
        r["steps"].as_array().unwrap().len(),
        1,
        "the step done is kept"
    );
    assert_eq!(std::fs::read_to_string(&tsv).unwrap().lines().count(), 2);
}

#[test]
fn a_mistyped_output_directory_is_refused_before_the_first_request() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-outputs");
    let url = format!("http://{}/", server.local_addr());
    for (flag, file) in [
        ("--tsv", "no-such-dir/s.tsv"),
        ("--csv", "no-such-dir/s.csv"),
        ("--json", "no-such-dir/s.json"),
    ] {
        let path = dir.path(file);
        Herd::new(&["sweep", &url, "--rates", "50", "--step-duration", "10m"])
            .file(flag, &path)
            .run()
            .refused_path(&path);
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
    let _turn = one_at_a_time();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (addr, acceptor) = slow_acceptor(std::sync::Arc::clone(&stop));
    let dir = TempDir::new("sweep-backlog");
    let json = dir.path("s.json");
    let url = format!("http://{addr}/");
    let ran = Herd::new(&["sweep", &url, "--connections", "1,60"])
        .steps("2s")
        .args(&["--timeout", "5s", "-q"])
        .json(&json)
        .run();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(addr);
    acceptor.join().unwrap();
    let text = ran.code(0).stdout();
    assert!(
        text.contains(
            "connects cluster at the SYN retransmission times (1 s) from 60 users: the server's \
             listen queue overflowed (its backlog, not its speed)"
        ),
        "{text}"
    );
}

#[test]
fn a_sweep_past_a_server_that_holds_its_connections_blames_the_server_and_stops() {
    let _turn = one_at_a_time();
    // Four connections of 5 ms each carry at most 800 req/s: past that, arrivals wait for
    // connections the server holds. That is the server's saturation, not herd's.
    let server = mock(&["/* latency=fixed:5ms"]);
    let dir = TempDir::new("sweep-held");
    let json = dir.path("s.json");
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["sweep", &url, "--rates", "400:2000:400"])
        .args(&["--max-connections", "4", "--calls-per-conn", "1"])
        .steps("500ms")
        .json(&json)
        .run();
    let text = ran.stdout();
    let r = ran.json_of("sweep.schema.json");
    let mut lagged = false;
    for s in steps(&r) {
        let g = &s["runs"][0]["generator"];
        let reasons = g["reasons"].to_string();
        assert!(!reasons.contains("never sent"), "{reasons}");
        lagged |= g["verdict"] == "generator-limited";
        if s["runs"][0]["totals"]["dropped"].as_u64().unwrap() > 0 && g["verdict"] == "ok" {
            assert!(
                g["warnings"]
                    .to_string()
                    .contains("the server's saturation"),
                "{g}"
            );
        }
    }
    assert!(!text.contains("raise -c"), "{text}");
    // Held arrivals count against the stop rule: the sweep stops past saturation (unless a
    // loaded machine made herd itself late at some steps, which then rightly do not count).
    if !lagged {
        assert!(r["stopped_early"].is_string(), "{text}");
        assert!(steps(&r).len() < 5, "{text}");
    }
}
