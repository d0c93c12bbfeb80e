//! A real Prometheus (Debian's) scrapes `herd run --metrics-listen` during a run; the run's
//! request rate and final counts are then read through Prometheus's own query API.

use crate::common::{
    free_port, get, mock, name_ok, one_at_a_time, shop_workload, wait_listening, Herd, TempDir,
};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's Prometheus on a free loopback port, its data in `dir`; stopped on drop.
pub struct Prometheus {
    child: Child,
    pub addr: SocketAddr,
}

impl Prometheus {
    /// Scrapes `scrape` (if any) every second; receives remote writes at /api/v1/write.
    pub fn start(dir: &TempDir, scrape: Option<SocketAddr>) -> Prometheus {
        let bin = "/usr/bin/prometheus";
        assert!(
            std::path::Path::new(bin).exists(),
            "prometheus is not installed: run `scripts/check` (it installs it) or \
             `apt-get install -y prometheus`"
        );
        let jobs = match scrape {
            Some(a) => format!(
                "scrape_configs:\n  - job_name: herd\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['{a}']\n"
            ),
            None => String::new(),
        };
        let config = dir.path("prometheus.yml");
        std::fs::write(&config, format!("global:\n  scrape_interval: 1s\n{jobs}")).unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--web.enable-remote-write-receiver")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(addr, "prometheus");
        let p = Prometheus { child, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !get(addr, "/-/ready").starts_with("HTTP/1.1 200") {
            assert!(Instant::now() < deadline, "prometheus did not become ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        if scrape.is_some() {
            // Its scrape loop starts a while after it is ready: wait for its first try (the
            // target is down until herd listens), or the run would go by unscraped.
            while !get(addr, "/api/v1/targets").contains("\"lastError\":\"Get") {
                assert!(
                    Instant::now() < deadline,
                    "prometheus never tried to scrape"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        p
    }

    /// An instant query's first value, if the query returns one.
    pub fn value(&self, query: &str) -> Option<f64> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let resp = get(self.addr, &format!("/api/v1/query?query={encoded}"));
        let body = resp.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {resp}"));
        let value = v["data"]["result"][0]["value"][1].as_str();
        if value.is_none() {
            eprintln!("prometheus: {query}: {body}");
        }
        value.and_then(|s| s.parse().ok())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_real_prometheus_scrapes_the_run_and_finds_its_request_rate() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("prometheus-scrape");
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let prometheus = Prometheus::start(&dir, Some(metrics));
    let url = format!("http://{}/", server.local_addr());
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", &url, "-d", "5s", "-c", "2", "-t", "1"])
        .args(&["--metrics-listen", &metrics.to_string()])
        .json(&json)
        .run();
    assert!(
        ran.stderr()
            .contains(&format!("metrics at http://{metrics}/metrics")),
        "{}",
        ran.stderr()
    );
    let result = ran.json();
    let ok = result["totals"]["ok"].as_u64().unwrap();
    assert!(ok > 0);
    // herd stayed up for the last scrape: Prometheus holds the final count, not one from a
    // second before the end.
    let last = prometheus
        .value("max_over_time(herd_requests_total{outcome=\"ok\"}[5m])")
        .expect("prometheus has herd's series");
    assert_eq!(last as u64, ok);
    let rate = prometheus
        .value("max_over_time(rate(herd_requests_total{outcome=\"ok\"}[3s])[5m:1s])")
        .expect("a request rate");
    let throughput = result["throughput_rps"].as_f64().unwrap();
    assert!(
        rate > throughput * 0.3 && rate < throughput * 3.0,
        "Prometheus's rate {rate} against herd's {throughput}"
    );
    let p99 = prometheus
        .value("histogram_quantile(0.99, max_over_time(herd_request_duration_seconds_bucket[5m]))")
        .expect("a latency histogram");
    assert!(p99 > 0.0 && p99 <= 10.0, "p99 {p99} s");
}

#[test]
fn a_real_prometheus_receives_the_runs_remote_writes() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("prometheus-remote-write");
    let prometheus = Prometheus::start(&dir, None);
    let url = format!("http://{}/", server.local_addr());
    let write = format!("http://{}/api/v1/write", prometheus.addr);
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", &url, "-d", "6s", "-c", "2", "-t", "1", "-q"])
        .args(&["--prometheus-remote-write", &write])
        .json(&json)
        .run();
    ran.code(0);
    let result = ran.json();
    let ok = result["totals"]["ok"].as_u64().unwrap();
    // The push at the end carries the final count.
    let last = prometheus
        .value("max_over_time(herd_requests_total{job=\"herd\",outcome=\"ok\"}[5m])")
        .expect("prometheus received herd's series");
    assert_eq!(last as u64, ok);
    // The run's request rate, from the pushed series alone.
    let rate = prometheus
        .value(
            "max_over_time(herd_requests_total{outcome=\"ok\"}[5m]) / ignoring(outcome) \
             max_over_time(herd_measured_seconds[5m])",
        )
        .expect("a request rate from the pushes");
    let seconds = result["timeline"].as_array().unwrap().len() as f64;
    assert!((rate - ok as f64 / seconds).abs() < 1e-6, "{rate}");
    let finished = prometheus
        .value("max_over_time(herd_run_finished[5m])")
        .expect("the finished flag");
    assert_eq!(finished, 1.0);
}

/// A workload's series per request name, scenario and check reach Prometheus with the run's
/// own final counts.
#[test]
fn a_real_prometheus_receives_series_per_request_name_scenario_and_check() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("prometheus-named");
    let prometheus = Prometheus::start(&dir, None);
    let file = shop_workload(
        &dir,
        server.local_addr(),
        "model: open, rate: 40, max_connections: 4, duration: 3s",
    );
    let write = format!("http://{}/api/v1/write", prometheus.addr);
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .args(&["--prometheus-remote-write", &write])
        .json(&json)
        .run();
    ran.code(0);
    let result = ran.json();
    let home = name_ok(&result, "home");
    assert!(home > 0);
    let last = |q: &str| {
        prometheus
            .value(&format!("max_over_time({q}[5m])"))
            .unwrap_or_else(|| panic!("prometheus has {q}"))
    };
    assert_eq!(
        last("herd_name_requests_total{name=\"home\",outcome=\"ok\"}") as u64,
        home
    );
    assert_eq!(
        last("herd_checks_total{check=\"home: status 200\",result=\"pass\"}") as u64,
        home
    );
    let iterations = result["by_scenario"][0]["iterations"].as_u64().unwrap();
    assert_eq!(
        last("herd_scenario_iterations_total{scenario=\"browse\"}") as u64,
        iterations
    );
    let scheduled = result["totals"]["scheduled"].as_u64().unwrap();
    assert_eq!(last("herd_scheduled_total") as u64, scheduled);
    let p99 = prometheus
        .value(
            "histogram_quantile(0.99, max_over_time(herd_name_request_duration_seconds_bucket{name=\"item\"}[5m]))",
        )
        .expect("a latency histogram per name");
    assert!(p99 > 0.0 && p99 <= 10.0, "p99 {p99} s");
}
