//! `herd run --watch-*` end to end: the server's processes and a real Prometheus exporter watched
//! during a run, kept in the JSON and summarised; bad watch flags refused before any load.

use crate::common::*;
use serde_json::Value;
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `herd serve` as a child process, stopped on drop.
struct HerdServe {
    child: Child,
    addr: SocketAddr,
}

impl HerdServe {
    fn start() -> HerdServe {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = herd()
            .args(["serve", "--listen", &addr.to_string(), "-t", "1"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(addr, "herd serve");
        HerdServe { child, addr }
    }
}

impl Drop for HerdServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's node_exporter with the collectors these tests read; stopped on drop.
struct NodeExporter {
    child: Child,
    url: String,
}

impl NodeExporter {
    fn start() -> NodeExporter {
        let bin = "/usr/bin/prometheus-node-exporter";
        assert!(
            std::path::Path::new(bin).exists(),
            "node_exporter is not installed: run `scripts/check` (it installs it) or \
             `apt-get install -y prometheus-node-exporter`"
        );
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = std::process::Command::new(bin)
            .args([
                &format!("--web.listen-address={addr}"),
                "--collector.disable-defaults",
                "--collector.cpu",
                "--collector.loadavg",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(Instant::now() < deadline, "node_exporter did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        NodeExporter {
            child,
            url: format!("http://{addr}/metrics"),
        }
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn samples(p: &Value) -> &Vec<Value> {
    p["samples"].as_array().expect("samples")
}

#[test]
fn watch_pid_samples_a_herd_serve_process_every_second() {
    let server = HerdServe::start();
    let pid = server.child.id().to_string();
    let dir = TempDir::new("watch-pid");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.addr);
    // A fixed, modest rate: flat out against this fast server, herd's own CPU would be the
    // limit and the run (rightly) judged generator-limited, which is not what this test is about.
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "1000",
        "-c",
        "4",
        "-t",
        "1",
        "-d",
        "3s",
        "--watch-pid",
        &pid,
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    assert!(
        r["totals"]["ok"].as_u64().unwrap() >= 1000,
        "{}",
        r["totals"]
    );
    let p = &r["server"]["processes"][0];
    assert_eq!(p["pid"].to_string(), pid);
    assert!(p.get("name").is_none());
    let s = samples(p);
    // One reading per whole second of the 3 s run (a reading more than half a second late on a
    // busy machine skips a tick), and one when the run ends.
    assert!(s.len() >= 2, "{p}");
    let cpu: f64 = s.iter().map(|x| x["cpu_percent"].as_f64().unwrap()).sum();
    assert!(cpu > 0.0, "herd serve answered thousands of requests: {p}");
    assert!(s.iter().all(|x| x["rss_bytes"].as_u64().unwrap() > 0));
    assert!(s.iter().all(|x| x["fds"].as_u64().unwrap() >= 4), "{p}");
    let ts: Vec<f64> = s.iter().map(|x| x["t"].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");
    assert!(ts[0] > 0.0 && ts[ts.len() - 1] < 6.0, "{ts:?}");
    let text = stdout(&out);
    assert!(text.contains(&format!("server     pid {pid}, ")), "{text}");
    assert!(text.contains("cpu mean") && text.contains("rss "), "{text}");
}

#[test]
fn watch_name_counts_nginx_master_and_worker() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("watch-name");
    let json = dir.path("r.json");
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "1000",
        // Room for a stall of the shared test machine: the test watches nginx, it does not
        // judge the generator.
        "-c",
        "50",
        "-t",
        "1",
        "-d",
        "2s",
        "--watch-name",
        "nginx",
        "--json",
        json.to_str().unwrap(),
        &nginx.url("/"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let p = &r["server"]["processes"][0];
    assert_eq!(p["name"], "nginx");
    // Other nginx processes on this machine may be counted too; ours must be.
    let pids: Vec<i64> = p["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    for ours in nginx.pids() {
        assert!(pids.contains(&(ours as i64)), "{ours} not in {pids:?}");
    }
    let s = samples(p);
    assert!(!s.is_empty(), "{p}");
    assert!(
        s.iter().all(|x| x["processes"].as_u64().unwrap() >= 2),
        "{p}"
    );
    assert!(stdout(&out).contains("server     nginx (pids "));
}

#[test]
fn watch_prometheus_keeps_series_on_the_run_time_axis() {
    let ne = NodeExporter::start();
    let server = HerdServe::start();
    let dir = TempDir::new("watch-prom");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.addr);
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "200",
        "-t",
        "1",
        "-d",
        "3s",
        "--watch-prometheus",
        &ne.url,
        "--watch-metric",
        "process_cpu_seconds_total",
        "--watch-metric",
        "node_load1",
        "--watch-metric",
        "node_cpu_seconds_total{mode=\"idle\"}",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert!(
        matches!(out.status.code(), Some(0) | Some(4)),
        "{}",
        stderr(&out)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let e = &r["server"]["prometheus"][0];
    assert_eq!(e["url"], ne.url.as_str());
    assert_eq!(e["gaps"], Value::Array(vec![]), "{e}");
    let series = e["series"].as_array().unwrap();
    let find = |name: &str| {
        series
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {e}"))
    };
    let cpu = find("process_cpu_seconds_total");
    assert_eq!(
        (&cpu["kind"], &cpu["rate"]),
        (&"counter".into(), &true.into())
    );
    let load = find("node_load1");
    assert_eq!(
        (&load["kind"], &load["rate"]),
        (&"gauge".into(), &false.into())
    );
    // The first scrape at the start, then one per second: counters have one rate fewer.
    let n_load = load["samples"].as_array().unwrap().len();
    assert!(n_load >= 3, "{load}");
    assert_eq!(cpu["samples"].as_array().unwrap().len(), n_load - 1);
    for s in load["samples"].as_array().unwrap() {
        let t = s[0].as_f64().unwrap();
        assert!((-0.5..4.5).contains(&t), "t = {t}");
        assert!(s[1].as_f64().unwrap() >= 0.0);
    }
    let idle = series
        .iter()
        .filter(|s| s["name"] == "node_cpu_seconds_total")
        .count();
    assert_eq!(idle, std::thread::available_parallelism().unwrap().get());
    let text = stdout(&out);
    assert!(text.contains("prometheus http://127.0.0.1:"), "{text}");
    assert!(
        text.contains("node_load1") && text.contains("rate/s"),
        "{text}"
    );
}

#[test]
fn bad_watch_flags_exit_2_before_any_load() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let closed = format!("http://127.0.0.1:{}/metrics", free_port());
    let cases: &[(&[&str], &str)] = &[
        (&["--watch-pid", "4999999"], "no process has pid 4999999"),
        (
            &["--watch-name", "no-such-server-herd"],
            "no process is named \"no-such-server-herd\"",
        ),
        (&["--watch-prometheus", &closed], "cannot connect"),
        (&["--watch-metric", "up"], "add --watch-prometheus"),
        (
            &[
                "--watch-prometheus",
                &closed,
                "--watch-metric",
                "up{a=~\"b\"}",
            ],
            "regular-expression",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec!["run", "-d", "1s"];
        args.extend_from_slice(flags);
        args.push(&url);
        let out = run_herd(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(want), "{flags:?}: {err}");
        assert!(stdout(&out).is_empty(), "{flags:?}");
    }
    assert_eq!(s.stats().requests, 0, "nothing was sent");
}

/// Pids of processes whose `comm` is `name` right now.
fn pids_named(name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

fn as_pids(v: &Value) -> Vec<u32> {
    let mut p: Vec<u32> = v
        .as_array()
        .map(|a| a.iter().map(|x| x.as_u64().unwrap() as u32).collect())
        .unwrap_or_default();
    p.sort_unstable();
    p
}

#[test]
fn watch_name_says_how_many_process_trees_matched_and_watch_parent_narrows_to_one() {
    // Two unrelated "servers" of one name, unique to this test: tree A is a parent with a child
    // (as nginx's master and worker), tree B a lone process.
    let dir = TempDir::new("trees");
    let name = format!("htree{}", std::process::id() % 1_000_000);
    let exe = dir.path(&name);
    std::fs::copy("/bin/sleep", &exe).unwrap();
    let exe = exe.to_str().unwrap().to_owned();
    let mut a = std::process::Command::new("sh")
        .args(["-c", &format!("{exe} 30 & exec {exe} 30")])
        .spawn()
        .unwrap();
    let mut b = std::process::Command::new(&exe).arg("30").spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids_named(&name).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the three processes never started"
        );
        std::thread::yield_now();
    }
    let all = pids_named(&name);
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let run = |extra: &[&str]| {
        let json = dir.path("r.json");
        let mut args = vec![
            "run",
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
            "--watch-name",
            &name,
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = run_herd(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let r = read_json(&json);
        assert_matches_schema("result.schema.json", &r);
        (stdout(&out), r["server"]["processes"][0].clone())
    };

    let (text, p) = run(&[]);
    let (ra, rb) = (a.id(), b.id());
    assert_eq!(as_pids(&p["trees"]), {
        let mut t = vec![ra, rb];
        t.sort_unstable();
        t
    });
    assert!(
        text.contains(&format!("WARNING: {name} matched 2 separate process trees")),
        "{text}"
    );
    assert!(text.contains("--watch-parent PID"), "{text}");

    let parent = ra.to_string();
    let (text, p) = run(&["--watch-parent", &parent]);
    let in_a: Vec<u32> = all.iter().copied().filter(|&p| p != rb).collect();
    assert_eq!(
        as_pids(&p["pids"]),
        in_a,
        "tree A: the parent and its child"
    );
    assert_eq!(as_pids(&p["trees"]), vec![ra]);
    assert_eq!(p["parent"], ra);
    assert!(!text.contains("separate process trees"), "{text}");
    assert!(text.contains(&format!("in the tree of pid {ra}")), "{text}");

    let out = run_herd(&[
        "run",
        "-n",
        "5",
        "--watch-name",
        &name,
        "--watch-parent",
        &std::process::id().to_string(),
        &url,
    ]);
    // The test process is the parent of both trees: everything is in its tree.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A tree without the name is refused before any load.
    let mut other = std::process::Command::new("/bin/sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let out = run_herd(&[
        "run",
        "-n",
        "5",
        "--watch-name",
        &name,
        "--watch-parent",
        &other.id().to_string(),
        &url,
    ]);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("in the tree of pid"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s.stats().requests, 15, "the refused run sent nothing");

    for pid in all {
        kill(pid, libc::SIGKILL);
    }
    let _ = a.wait();
    let _ = b.wait();
}
