//! Scraping a real node_exporter, started by the test on a free loopback port (Debian's
//! `prometheus-node-exporter`, installed by `scripts/check`).

use herd_monitor::{
    exposition, fetch, prepare, ExporterSampler, HttpUrl, MetricKind, MonitorError, Selector,
    WatchPlan,
};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(5);

/// One node_exporter at a time: each picks a free port by binding and releasing it, and two
/// picking the same one would have one test talk to the other's exporter (and see it killed).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A node_exporter with only the collectors these tests read (the others need systemd, dbus
/// or hardware this sandbox may lack); stopped on drop.
struct NodeExporter {
    child: Child,
    url: String,
    _turn: MutexGuard<'static, ()>,
}

impl NodeExporter {
    fn start() -> NodeExporter {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        // A port taken by someone else between the pick and the exporter's bind makes it exit:
        // pick another.
        for _ in 0..5 {
            if let Some((child, url)) = Self::try_start() {
                return NodeExporter {
                    child,
                    url,
                    _turn: turn,
                };
            }
        }
        panic!("node_exporter would not stay up on a free port (see `try_start`)");
    }

    fn try_start() -> Option<(Child, String)> {
        let bin = [
            "/usr/bin/prometheus-node-exporter",
            "/usr/local/bin/node_exporter",
        ]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect(
            "node_exporter is not installed: run `scripts/check` (it installs it) or \
                 `apt-get install -y prometheus-node-exporter`",
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut child = Command::new(bin)
            .args([
                &format!("--web.listen-address={addr}"),
                "--collector.disable-defaults",
                "--collector.cpu",
                "--collector.loadavg",
                "--collector.meminfo",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn node_exporter");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "node_exporter did not listen on {addr}"
            );
            if child.try_wait().ok().flatten().is_some() {
                return None; // it could not bind
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Something listens there; it must be this exporter answering, not a stranger.
        let url = format!("http://{addr}/metrics");
        let page = fetch(&HttpUrl::parse(&url).unwrap(), TIMEOUT).ok();
        let alive = child.try_wait().ok().flatten().is_none();
        if alive && page.is_some_and(|p| p.contains("node_exporter_build_info")) {
            return Some((child, url));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        self.stop();
    }
}

fn metrics(list: &[&str]) -> Vec<Selector> {
    list.iter().map(|s| Selector::parse(s).unwrap()).collect()
}

#[test]
fn the_whole_node_exporter_page_parses() {
    let ne = NodeExporter::start();
    let page = fetch(&HttpUrl::parse(&ne.url).unwrap(), TIMEOUT).unwrap();
    let expo = exposition::parse(&page).unwrap();
    assert!(expo.samples.len() > 50, "{} samples", expo.samples.len());
    assert_eq!(expo.kinds["node_cpu_seconds_total"], MetricKind::Counter);
    assert_eq!(expo.kinds["node_load1"], MetricKind::Gauge);
    assert_eq!(expo.kinds["go_gc_duration_seconds"], MetricKind::Summary);
    assert!(expo.help["node_load1"].contains("1m load average"));
    let idle = expo
        .samples
        .iter()
        .find(|s| s.name == "node_cpu_seconds_total" && s.labels["mode"] == "idle")
        .expect("an idle CPU series");
    assert!(idle.value > 0.0);
}

#[test]
fn counters_become_rates_and_gauges_stay_values_on_a_real_exporter() {
    let ne = NodeExporter::start();
    let wanted = metrics(&[
        "process_cpu_seconds_total",
        "node_cpu_seconds_total{mode=\"idle\"}",
        "process_resident_memory_bytes",
    ]);
    let mut s = ExporterSampler::new(&ne.url, &wanted, TIMEOUT).unwrap();
    for _ in 0..3 {
        s.scrape();
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(s.gaps().is_empty(), "{:?}", s.gaps());
    assert_eq!(s.scrapes(), 3);
    let series: Vec<_> = s.series().collect();
    let cpu = series
        .iter()
        .find(|x| x.name == "process_cpu_seconds_total")
        .unwrap();
    assert_eq!((cpu.kind, cpu.rate), (MetricKind::Counter, true));
    assert_eq!(cpu.samples.len(), 2, "three scrapes make two rates");
    assert!(cpu.samples.iter().all(|(_, v)| v.is_finite() && *v >= 0.0));
    let idle: Vec<_> = series
        .iter()
        .filter(|x| x.name == "node_cpu_seconds_total")
        .collect();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(idle.len(), cores, "one idle series per CPU");
    assert!(idle.iter().all(|x| x.labels["mode"] == "idle" && x.rate));
    let rss = series
        .iter()
        .find(|x| x.name == "process_resident_memory_bytes")
        .unwrap();
    assert_eq!((rss.kind, rss.rate), (MetricKind::Gauge, false));
    assert_eq!(rss.samples.len(), 3);
    assert!(
        rss.samples.iter().all(|(_, v)| *v > 1e6),
        "{:?}",
        rss.samples
    );
}

#[test]
fn an_exporter_that_dies_mid_watch_leaves_gaps_not_a_stop() {
    let mut ne = NodeExporter::start();
    let plan = WatchPlan {
        exporters: vec![ne.url.clone()],
        metrics: vec!["process_resident_memory_bytes".into()],
        interval: Duration::from_millis(100),
        scrape_timeout: Duration::from_secs(2),
        ..WatchPlan::default()
    };
    let watcher = prepare(&plan).unwrap().start(Instant::now()).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    ne.stop();
    std::thread::sleep(Duration::from_millis(400));
    let seen = watcher.stop();
    let e = &seen.exporters[0];
    assert_eq!(e.url, ne.url);
    assert_eq!(e.metrics, ["process_resident_memory_bytes"]);
    let kept = e.series[0].samples.len() as u64;
    assert!(kept >= 1, "scraped while it ran");
    assert!(!e.gaps.is_empty(), "scrapes after it died are gaps");
    // A scrape in flight when it died may end in a reset; the ones after cannot connect.
    let last = e.gaps.last().unwrap();
    assert!(last.error.contains("cannot connect"), "{:?}", e.gaps);
    assert_eq!(kept + e.gaps.len() as u64, e.scrapes);
}

#[test]
fn the_defaults_keep_what_the_endpoint_has() {
    let ne = NodeExporter::start();
    let s = ExporterSampler::new(&ne.url, &[], TIMEOUT).unwrap();
    let kept: Vec<String> = s.selectors().iter().map(|x| x.to_string()).collect();
    // node_exporter has all five (the process_* ones about itself).
    assert_eq!(kept, herd_monitor::DEFAULT_METRICS);
}

#[test]
fn a_bad_endpoint_or_metric_is_refused_at_the_start() {
    let ne = NodeExporter::start();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        format!("http://127.0.0.1:{port}/metrics")
    };
    let landing = ne.url.replace("/metrics", "/");
    let cases: [(&str, Vec<Selector>, &str); 4] = [
        (&closed, vec![], "cannot connect"),
        (&landing, vec![], "not in the Prometheus text format"),
        (&ne.url, metrics(&["node_lod1"]), "has no series node_lod1"),
        (
            &ne.url,
            metrics(&["node_cpu_seconds_total{mode=\"idel\"}"]),
            "has no series",
        ),
    ];
    for (url, wanted, want) in cases {
        let e = ExporterSampler::new(url, &wanted, TIMEOUT).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(want), "{url}: {text}");
        if let MonitorError::NoMetric { hint, .. } = &e {
            assert!(hint.contains("node_"), "{hint}");
        }
    }
}
