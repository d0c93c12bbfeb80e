//! The streams' figures second by second, in every output fed from the one stream of seconds:
//! the JSON's timeline (and the lines written as the run goes), CSV, the HdrHistogram log's
//! tagged histograms (read by Python's hdrh), /metrics; and the open model's bar: past what the
//! connections carry, the time to first token from the intended send grows second by second,
//! from the actual send it does not.

use super::within;
use crate::common::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The whole seconds of `r`'s timeline in which streams ended: (t, streams).
fn stream_seconds(r: &serde_json::Value) -> Vec<(u64, serde_json::Value)> {
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["partial"] != true && e["streams"].is_object())
        .map(|e| (e["t"].as_u64().unwrap(), e["streams"].clone()))
        .collect()
}

/// The metrics page once the run has finished (herd waits for this last scrape).
fn last_scrape(addr: SocketAddr) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(
            Instant::now() < deadline,
            "the run never finished on /metrics"
        );
        if std::net::TcpStream::connect(addr).is_ok() {
            let page = get(addr, "/metrics");
            if page
                .lines()
                .any(|l| l.starts_with("herd_run_finished{") && l.ends_with(" 1"))
            {
                return page;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The value of the series line starting with `series` (labels and all).
fn value_of(page: &str, series: &str) -> f64 {
    let line = page
        .lines()
        .find(|l| l.starts_with(series))
        .unwrap_or_else(|| panic!("no {series} in:\n{page}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[test]
fn every_per_second_output_carries_ttft_and_itl() {
    let _turn = one_at_a_time();
    let s = mock(&["/v1/chat/completions sse=llm ttft=200ms itl=20ms tokens=5"]);
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let dir = TempDir::new("sse-seconds");
    let (json, csv, hlog) = (dir.path("r.json"), dir.path("r.csv"), dir.path("r.hlog"));
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let child = Herd::new(&[
        "run", &url, "--sse", "llm", "-c", "4", "-d", "3s", "-t", "1",
    ])
    .args(&["-q", "--metrics-listen", &metrics.to_string()])
    .file("--json", &json)
    .file("--csv", &csv)
    .file("--hlog", &hlog)
    .spawn();
    let page = last_scrape(metrics);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let streams = r["streams"]["streams"].as_u64().unwrap();

    // The timeline: each whole second's streams at 200 ms and 20 ms, and every stream in one.
    let seconds = stream_seconds(&r);
    assert!(seconds.len() >= 2, "{seconds:?}");
    for (t, st) in &seconds {
        for (key, want) in [
            ("ttft_p50_ms", 200.0),
            ("ttft_sent_p50_ms", 200.0),
            ("itl_p50_ms", 20.0),
        ] {
            let got = st[key].as_f64().unwrap();
            assert!(within(got, want, 0.05), "t = {t}: {key} {got}: {st}");
        }
        assert!(st["ttft_histogram"].is_string(), "t = {t}: {st}");
    }
    let in_seconds: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["streams"]["streams"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(in_seconds, streams);

    // CSV: the same seconds' figures in their columns.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for row in rows {
        let cells: Vec<&str> = row.split(',').collect();
        let t: u64 = cells[0].parse().unwrap();
        if let Some((_, st)) = seconds.iter().find(|(s, _)| *s == t) {
            let ttft: f64 = cells[col("ttft_p50_ms")].parse().unwrap();
            let itl: f64 = cells[col("itl_p99_ms")].parse().unwrap();
            assert_eq!(ttft, st["ttft_p50_ms"].as_f64().unwrap(), "{row}");
            assert_eq!(itl, st["itl_p99_ms"].as_f64().unwrap(), "{row}");
        }
    }

    // The HdrHistogram log: a tagged histogram per second, read by HdrHistogram's own Python
    // package; the time to first token's values add up to the streams, at 200 ms.
    let read = python(
        "import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
r = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**6, 2))
total = HdrHistogram(1, 3600 * 10**6, 2)
untagged = 0
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    if h.get_tag() == 'ttft':
        total.add(h)
    elif h.get_tag() is None:
        untagged += h.get_total_count()
print(total.get_total_count(), total.get_value_at_percentile(50), untagged)",
        &[&hlog],
    );
    let got: Vec<u64> = read
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(got[0], streams, "{read}");
    assert!(within(got[1] as f64, 200_000.0, 0.05), "{read}");
    assert_eq!(got[2], r["totals"]["completed"].as_u64().unwrap(), "{read}");

    // /metrics: the histograms count every stream and every gap.
    let ttft_count = value_of(&page, "herd_stream_ttft_seconds_count{");
    assert_eq!(ttft_count as u64, streams);
    let gaps = value_of(&page, "herd_stream_itl_seconds_count{");
    assert_eq!(
        gaps as u64,
        r["streams"]["itl_ms"]["count"].as_u64().unwrap()
    );
    // Every first token came at ~200 ms: none in the buckets below, all in those above.
    for line in page
        .lines()
        .filter(|l| l.starts_with("herd_stream_ttft_seconds_bucket{"))
    {
        let le = line
            .split("le=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let n: f64 = line.rsplit_once(' ').unwrap().1.parse().unwrap();
        match le.parse::<f64>() {
            Ok(b) if b < 0.19 => assert_eq!(n, 0.0, "{line}"),
            _ if le == "+Inf" || le.parse::<f64>().unwrap() > 0.21 => {
                assert_eq!(n as u64, streams, "{line}")
            }
            _ => {}
        }
    }
}

#[test]
fn open_model_past_what_the_streams_allow_grows_ttft_from_the_intended_time_not_from_the_send() {
    let _turn = one_at_a_time();
    // Each stream takes 200 ms + 4 x 20 ms; two connections carry at most ~7 a second, and
    // the schedule asks 20: arrivals wait for a connection, which is the user's wait too.
    let s = mock(&["/v1/chat/completions sse=llm ttft=200ms itl=20ms tokens=5"]);
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let dir = TempDir::new("sse-open");
    let json = dir.path("r.json");
    let r = Herd::new(&[
        "run", &url, "--sse", "llm", "--rate", "20", "-c", "2", "-d", "4s", "-t", "1",
    ])
    .json(&json)
    .run()
    .json();
    let st = &r["streams"];
    let intended = st["ttft_ms"]["p90"].as_f64().unwrap();
    let sent = st["ttft_sent_ms"]["p90"].as_f64().unwrap();
    assert!(within(sent, 200.0, 0.05), "from the send: {sent} ms ({st})");
    assert!(
        intended > 2.0 * sent,
        "from the intended time {intended} ms should grow past {sent} ms"
    );
    // Second by second: the wait from the intended send grows as the queue does (about half a
    // second more each second: 20 asked, 7 carried), the server's own time stays 200 ms.
    let seconds = stream_seconds(&r);
    assert!(seconds.len() >= 3, "{seconds:?}");
    for (t, s) in &seconds {
        let sent = s["ttft_sent_p50_ms"].as_f64().unwrap();
        assert!(
            within(sent, 200.0, 0.05),
            "t = {t}: from the send {sent} ms"
        );
    }
    let waits: Vec<f64> = seconds
        .iter()
        .map(|(_, s)| s["ttft_p50_ms"].as_f64().unwrap())
        .collect();
    for pair in waits.windows(2) {
        assert!(pair[1] > pair[0] + 250.0, "not growing: {waits:?}");
    }
}
