//! `herd capacity` against servers whose true limit is known: a token bucket that admits
//! exactly N requests per second, and a server that serves at most K connections at once.

use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How the test server decides whether to answer 200 or 503.
enum Admit {
    /// A token bucket: `rate` tokens per second, at most `burst` saved up.
    PerSecond { rate: f64, burst: f64 },
    /// At most this many connections are served; requests on the others get 503. Each answer
    /// takes a millisecond, like a real server's work: an instant server would make herd's own
    /// CPU the limit, which herd rightly reports instead of a number.
    Connections(u64),
}

/// The probes measure timing: tests in this file run one at a time so they do not load each
/// other's generator (the 50-million-request test keeps a core busy).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// A tiny HTTP/1.1 server, a thread per connection, stopped on drop.
struct AdmissionServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl AdmissionServer {
    fn start(admit: Admit) -> AdmissionServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let burst = match admit {
            Admit::PerSecond { burst, .. } => burst,
            Admit::Connections(_) => 0.0,
        };
        let bucket = Arc::new(Mutex::new(Bucket {
            tokens: burst,
            last: Instant::now(),
        }));
        let admit = Arc::new(admit);
        let open = Arc::new(AtomicU64::new(0));
        let stop2 = Arc::clone(&stop);
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (admit, bucket, open) =
                    (Arc::clone(&admit), Arc::clone(&bucket), Arc::clone(&open));
                let n = open.fetch_add(1, Ordering::SeqCst) + 1;
                std::thread::spawn(move || {
                    serve(stream, &admit, &bucket, n);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        AdmissionServer {
            addr,
            stop,
            accept: Some(accept),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for AdmissionServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// Answers GET requests on one connection until the client closes it. `nth` is how many
/// connections were open when this one arrived.
fn serve(stream: TcpStream, admit: &Admit, bucket: &Mutex<Bucket>, nth: u64) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let mut line = String::new();
    loop {
        // A request head: lines up to the empty one (herd's GETs carry no body).
        let mut got_any = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                if got_any {
                    break;
                }
                continue;
            }
            got_any = true;
        }
        let ok = match *admit {
            Admit::PerSecond { rate, burst } => {
                let mut b = bucket.lock().unwrap();
                let now = Instant::now();
                b.tokens = (b.tokens + now.duration_since(b.last).as_secs_f64() * rate).min(burst);
                b.last = now;
                if b.tokens >= 1.0 {
                    b.tokens -= 1.0;
                    true
                } else {
                    false
                }
            }
            Admit::Connections(k) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
                nth <= k
            }
        };
        let response: &[u8] = if ok {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        } else {
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"
        };
        if out.write_all(response).is_err() {
            return;
        }
    }
}

#[test]
fn capacity_lands_within_ten_percent_of_a_server_that_admits_400_per_second() {
    let _serial = serial();
    let server = AdmissionServer::start(Admit::PerSecond {
        rate: 400.0,
        burst: 10.0,
    });
    let dir = TempDir::new("capacity");
    let json = dir.path("capacity.json");
    let out = run_herd(&[
        "capacity",
        &server.url(),
        "--slo",
        "errors<1%",
        "--start",
        "100",
        "--probe-duration",
        "1s",
        "--cooldown",
        "0s",
        "--max-probes",
        "16",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert_eq!(r["kind"], "capacity");
    let cap = r["capacity_rps"].as_f64().expect("a number");
    assert!(
        (360.0..=440.0).contains(&cap),
        "capacity {cap} req/s is not within 10% of 400:\n{text}"
    );
    assert!(r["capacity_users"].is_null());
    assert_eq!(r["slo"]["text"], "errors<1%");
    let probes = r["probes"].as_array().unwrap();
    assert!(probes.len() <= 16);
    let last = probes.last().unwrap();
    assert_eq!(last["purpose"], "confirm");
    assert_eq!(last["level"].as_f64(), Some(cap));
    assert!(last["result"]["totals"]["scheduled"].as_u64().unwrap() > 0);
    // The sentence names the answer and what happens beyond it.
    let sentence = r["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("sustains") && sentence.contains("errors < 1%"),
        "{sentence}"
    );
    assert!(
        sentence.contains("beyond ~") && sentence.contains("errors rise"),
        "{sentence}"
    );
    assert!(text.contains(sentence), "{text}");
    // One table line per probe.
    let lines = text
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(lines, probes.len(), "{text}");
    // Its report leads with the same sentence and lists every probe.
    let page = html_report(&json);
    assert!(page.contains(&sentence.replace('<', "&lt;")), "{sentence}");
    assert!(page.contains(&format!(
        ">CAPACITY: {} req/s<",
        herd_result::format::rate(cap)
    )));
    let table = page.split("class=\"capacity-probes\"").nth(1).unwrap();
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 1 + probes.len());
}

#[test]
fn capacity_in_users_finds_a_server_that_serves_eight_connections() {
    let _serial = serial();
    let server = AdmissionServer::start(Admit::Connections(8));
    let dir = TempDir::new("capacity-users");
    let json = dir.path("c.json");
    let out = run_herd(&[
        "capacity",
        &server.url(),
        "--users",
        "--slo",
        "errors<1%",
        "--probe-duration",
        "500ms",
        "--cooldown",
        "300ms",
        "--max-probes",
        "16",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert_eq!(r["capacity_users"].as_u64(), Some(8), "{text}");
    assert!(r["capacity_rps"].is_null());
    assert!(text.contains("sustains 8 concurrent users"), "{text}");
    assert!(html_report(&json).contains(">CAPACITY: 8 users<"));
}

#[test]
fn capacity_says_it_cannot_decide_when_herd_is_the_bottleneck() {
    let _serial = serial();
    // Fifty million requests per second from one thread: herd cannot even hand out arrivals
    // that fast, so whatever it measured is herd, and no number may be printed.
    let server = herd_mock::Server::start(herd_mock::Config::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-limited");
    let json = dir.path("c.json");
    let out = run_herd(&[
        "capacity",
        &url,
        "--slo",
        "errors<1%",
        "--start",
        "50000000",
        "--max",
        "50000000",
        "--probe-duration",
        "100ms",
        "--cooldown",
        "0s",
        "--max-connections",
        "20",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(4), "{text}\n{}", stderr(&out));
    assert!(text.contains("cannot decide the capacity"), "{text}");
    assert!(text.contains("herd itself was the bottleneck"), "{text}");
    assert!(!text.contains("sustains"), "{text}");
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert!(r["capacity_rps"].is_null());
    assert_eq!(r["undecided"]["reason"], "generator-limited");
    assert_eq!(
        r["probes"].as_array().unwrap().len(),
        3,
        "probed twice more, then gave up"
    );
    let page = html_report(&json);
    assert!(page.contains(">NO ANSWER: HERD WAS THE BOTTLENECK<"));
    assert!(page.contains("3 probes limited by herd, run again"));
    server.shutdown();
}

#[test]
fn capacity_refuses_bad_input_before_sending() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["capacity", "http://127.0.0.1:1/", "--slo", "p98<1ms"],
            "`p98<1ms`",
        ),
        (
            &[
                "capacity",
                "http://127.0.0.1:1/",
                "--slo",
                "p99<100, errors<5",
            ],
            "column 5: in `p99<100`: `100` is not a duration (a bare number has no unit)",
        ),
        (
            &[
                "capacity",
                "http://127.0.0.1:1/",
                "--slo",
                "errors<1%",
                "--start",
                "10",
                "--max",
                "5",
            ],
            "--start",
        ),
        (&["capacity", "ftp://x/", "--slo", "errors<1%"], "scheme"),
    ];
    for (args, want) in cases {
        let out = run_herd(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn capacity_of_a_workload_file_is_in_iterations_per_second() {
    let _serial = serial();
    // 800 requests per second admitted; every iteration sends two, so 400 iterations per second.
    // A burst of 50 ms: an iteration sends its two requests back to back, and probes now last
    // long enough for the 1,000 requests "errors < 1%" needs, so a busy machine's scheduling
    // hiccups (tens of ms) would otherwise read as the server's 503s.
    let server = AdmissionServer::start(Admit::PerSecond {
        rate: 800.0,
        burst: 40.0,
    });
    let dir = TempDir::new("capacity-workload");
    let file = dir.path("two.yaml");
    std::fs::write(
        &file,
        format!(
            "target: http://{}\n\
             load: {{ model: closed, users: 1, duration: 1s }}\n\
             scenarios:\n  - name: two\n    steps:\n      \
             - get: /first\n        name: first\n      - get: /second\n        name: second\n",
            server.addr
        ),
    )
    .unwrap();
    let json = dir.path("capacity.json");
    let out = run_herd(&[
        "capacity",
        file.to_str().unwrap(),
        "--slo",
        "errors<1%",
        "--start",
        "100",
        "--probe-duration",
        "1s",
        "--cooldown",
        "0s",
        "--max-probes",
        "16",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    let cap = r["capacity_rps"].as_f64().expect("a number");
    assert!(
        (360.0..=440.0).contains(&cap),
        "capacity {cap} iterations/s is not within 10% of 400:\n{text}"
    );
    let sentence = r["sentence"].as_str().unwrap();
    assert!(
        sentence.contains(&format!(
            "sustains {} iterations/s",
            herd_result::format::rate(cap)
        )),
        "{sentence}"
    );
    assert!(text.contains(sentence), "{text}");
    assert!(text.contains("iter/s"), "{text}");
    // Every probe is a full workload run: both names, and two requests per iteration.
    let last = &r["probes"].as_array().unwrap().last().unwrap()["result"];
    assert_eq!(last["by_name"].as_array().unwrap().len(), 2);
    assert_eq!(last["by_name"][1]["name"], "second");
    let iterations = last["by_scenario"][0]["iterations"].as_u64().unwrap();
    let sent = last["totals"]["sent"].as_u64().unwrap();
    assert!(
        sent.abs_diff(2 * iterations) <= 4,
        "{sent} requests, {iterations} iterations"
    );
    let page = html_report(&json);
    assert!(page.contains(&format!(
        ">CAPACITY: {} iterations/s<",
        herd_result::format::rate(cap)
    )));

    // A broken file: validate's diagnostics and exit 2, nothing probed.
    std::fs::write(&file, "target: http://127.0.0.1:1\nload: [\n").unwrap();
    let out = run_herd(&["capacity", file.to_str().unwrap(), "--slo", "errors<1%"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:", file.display())), "{err}");
    assert_eq!(
        err,
        stderr(&run_herd(&["validate", file.to_str().unwrap()]))
    );
}

#[test]
fn ctrl_c_in_the_cooldown_between_probes_is_an_interrupt() {
    let _serial = serial();
    let server = herd_mock::Server::start(herd_mock::Config::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-sigint");
    let json = dir.path("c.json");
    let mut child = herd()
        .args(["capacity", &url, "--slo", "errors<5%", "--start", "500"])
        .args([
            "--probe-duration",
            "500ms",
            "--cooldown",
            "10m",
            "-t",
            "1",
            "-q",
        ])
        .arg("--json")
        .arg(&json)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Read until the first probe's line: herd then sits in the ten-minute cooldown.
    let mut seen = Vec::new();
    while !seen.last().is_some_and(|l: &String| l.contains("ramp")) {
        match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(l) => seen.push(l),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no probe line within 60 s ({e}): {seen:?}");
            }
        }
    }
    kill(child.id(), SIGINT);
    let out = child.wait_with_output().unwrap();
    let rest: Vec<String> = rx.try_iter().collect();
    assert_eq!(out.status.code(), Some(130), "{rest:?}\n{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert_eq!(r["interrupted"], true);
    assert_eq!(
        r["probes"].as_array().unwrap().len(),
        1,
        "the probe done is kept"
    );
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    server.shutdown();
}

#[test]
fn capacity_refuses_a_mistyped_output_directory_before_the_first_request() {
    let _serial = serial();
    let server = herd_mock::Server::start(herd_mock::Config::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-outputs");
    let json = dir.path("no-such-dir/c.json");
    let out = run_herd(&[
        "capacity",
        &url,
        "--slo",
        "errors<1%",
        "--probe-duration",
        "10m",
        "--json",
        json.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(json.to_str().unwrap()) && err.contains("mkdir -p"),
        "{err}"
    );
    assert_eq!(server.stats().requests, 0, "nothing was sent");
    server.shutdown();
}

#[test]
fn an_slo_no_rate_meets_is_its_own_outcome_not_noise() {
    let _serial = serial();
    // p99 < 1 us: no response on earth is that fast, at any rate.
    let server = herd_mock::Server::start(herd_mock::Config::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-unmet");
    let json = dir.path("c.json");
    let out = run_herd(&[
        "capacity",
        &url,
        "--slo",
        "p99<1us",
        "--start",
        "2",
        "--probe-duration",
        "1s",
        "--cooldown",
        "0s",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(8), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("does not meet the SLO (p99 < 1.00 us) at any rate tried (lowest probe 1.00 req/s: p99 "),
        "{text}"
    );
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert_eq!(r["outcome"], "unmet");
    assert!(r["undecided"].is_null());
    // Every verdict rests on at least ten responses past the limit.
    for p in r["probes"].as_array().unwrap() {
        let n = p["result"]["latency_ms"]["count"].as_u64().unwrap();
        if p["too_few"].is_null() {
            assert!(n >= 10, "a probe judged on {n} responses: {text}");
        }
    }
    server.shutdown();
}
