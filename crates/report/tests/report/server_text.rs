//! The watched server in the summary printed after a run.

use crate::fixture::watched;
use herd_report::render_text;

#[test]
fn the_summary_shows_cpu_memory_growth_and_series() {
    let mut text = String::new();
    render_text(&watched(), &mut text).unwrap();
    println!("{text}");
    for want in [
        "server     nginx (pids 100, 101), 3 samples",
        // (40 + 80 + 60) / 3; RSS from the start reading to the last sample
        "cpu mean 60.0%  peak 80.0%   rss 8.39 MB -> 33.6 MB (+25.2 MB)   threads 2   fds 12 -> 20 (peak 70)",
        "context switches 1,000/s voluntary, 20.0/s involuntary",
        "at 3.00 s: pid 101 exited",
        "prometheus http://127.0.0.1:9100/metrics  4 scrapes, 1 failed (first at 2.00 s: cannot connect",
        "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}  rate/s  min 0.250  mean 0.500  max 0.750",
        "node_memory_MemAvailable_bytes               value   min 20.0G  mean 20.5G  max 21.0G",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}
