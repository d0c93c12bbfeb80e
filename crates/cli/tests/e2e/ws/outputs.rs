//! A WebSocket run's own figures (ping round trips, the send backlog) in every output fed from
//! the one stream of seconds, each held against the JSON's: the HdrHistogram log's tagged
//! histograms (read by Python's hdrh), /metrics, the CSV, the HTML report and the dashboard's
//! page (`--record`, drawn again by `herd report`); and the send backlog against Python's
//! websockets: it grows while the server reads nothing, it stays 0 while the server keeps up,
//! and the replies held back are still timed from their intended send.

use super::sockets::{column, final_metrics};
use super::{all_answered, Echo, PING};
use crate::common::*;
use crate::outputs::otlp::{int, metric, point, Receiver};
use herd_result::format::{count, duration_ms};
use std::net::SocketAddr;

/// The `ws` figure `key` of every second of `r` that has one.
fn seconds(r: &serde_json::Value, key: &str) -> Vec<(u64, u64)> {
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["t"].as_u64()?, e["ws"][key].as_u64()?)))
        .collect()
}

/// The page `herd report FILE` makes of `file`.
fn page_of(file: &std::path::Path, dir: &TempDir, name: &str) -> String {
    let html = dir.path(name);
    let o = run_herd(&[
        "report",
        file.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read_to_string(&html).unwrap()
}

/// The value of the series line starting with `series` on a metrics page.
fn value_of(page: &str, series: &str) -> f64 {
    let line = page
        .lines()
        .find(|l| l.starts_with(series))
        .unwrap_or_else(|| panic!("no {series} in:\n{page}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[test]
fn every_output_carries_the_pings_and_the_send_backlog_the_json_has() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-outputs");
    let (json, csv, hlog, rec) = (
        dir.path("r.json"),
        dir.path("r.csv"),
        dir.path("r.hlog"),
        dir.path("r.ndjson"),
    );
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let receiver = Receiver::start();
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let child = Herd::new(&["run", &url, "--send", PING, "-t", "1", "-q"])
        .args(&[
            "-c",
            "4",
            "--message-rate",
            "10",
            "-d",
            "3s",
            "--match",
            "id",
        ])
        .args(&["--ping-interval", "100ms"])
        .args(&["--metrics-listen", &metrics.to_string()])
        .args(&["--otlp", &receiver.url()])
        .file("--json", &json)
        .file("--csv", &csv)
        .file("--hlog", &hlog)
        .file("--record", &rec)
        .spawn();
    let page = final_metrics(metrics);
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let sent = all_answered(&r);
    assert_eq!(echo.count(), sent);
    let ws = &r["websocket"];
    let ping = &ws["ping_rtt_ms"];
    let pongs = ping["count"].as_u64().unwrap();
    assert!(pongs >= 4 * 20, "{ws}");

    // A server that keeps up: nothing due waits, every second closes with a backlog of 0.
    assert_eq!(
        ws["backlog"],
        serde_json::json!({"max_messages": 0, "max_bytes": 0, "end_messages": 0, "end_bytes": 0}),
        "{ws}"
    );
    let backlog = seconds(&r, "backlog_messages");
    assert!(backlog.len() >= 3, "{}", r["timeline"]);
    assert!(backlog.iter().all(|(_, n)| *n == 0), "{backlog:?}");

    // The HdrHistogram log: the replies untagged, the pings as `ping_rtt`, every one of each.
    let read = python(
        "import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
r = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**6, 2))
pings = HdrHistogram(1, 3600 * 10**6, 2)
replies = 0
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    if h.get_tag() == 'ping_rtt':
        pings.add(h)
    elif h.get_tag() is None:
        replies += h.get_total_count()
print(pings.get_total_count(), replies, pings.get_max_value())",
        &[&hlog],
    );
    let got: Vec<u64> = read
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(got[0], pongs, "{read}");
    assert_eq!(got[1], r["totals"]["completed"].as_u64().unwrap(), "{read}");
    let max_us = ping["max"].as_f64().unwrap() * 1e3;
    assert!(
        (got[2] as f64 - max_us).abs() <= max_us * 0.01 + 1.0,
        "hlog's max {} us, the JSON's {max_us} us",
        got[2]
    );

    // /metrics: every pong in the histogram, the backlog's gauges at 0.
    assert_eq!(
        value_of(&page, "herd_ws_ping_rtt_seconds_count{") as u64,
        pongs
    );
    assert_eq!(value_of(&page, "herd_ws_backlog_messages{"), 0.0);
    assert_eq!(value_of(&page, "herd_ws_backlog_bytes{"), 0.0);

    // OTLP (the same series remote write sends): the pings' histogram in seconds, the gauges.
    let pushes = receiver.stop();
    let last = pushes.last().expect("an OTLP push");
    let rtt = metric(last, "herd.ws.ping_rtt");
    assert_eq!(rtt["unit"], "s");
    assert_eq!(int(&point(rtt, "histogram", &[])["count"]), pongs);
    let gauge = metric(last, "herd.ws.backlog.messages");
    assert_eq!(
        gauge["gauge"]["data_points"][0]["as_double"], 0.0,
        "{gauge}"
    );

    // The CSV: each second's pongs and backlog, as the JSON's seconds have them.
    let table = std::fs::read_to_string(&csv).unwrap();
    let rows: f64 = column(&table, "pongs").iter().sum();
    assert_eq!(rows as u64, pongs, "{table}");
    let csv_backlog = column(&table, "backlog_messages");
    assert!(csv_backlog.iter().all(|n| *n == 0.0), "{table}");

    // The report's page: the section, its figures as the JSON's, and the charts.
    let report = page_of(&json, &dir, "report.html");
    for said in [
        "WebSocket: pings, closes and the send backlog",
        "ping round trips (from the intended send)",
        "chart-ping",
        "chart-backlog",
    ] {
        assert!(report.contains(said), "no {said:?} on the report page");
    }
    assert!(
        report.contains(&format!("<dt>pongs</dt><dd>{}</dd>", count(pongs))),
        "pongs"
    );
    let p50 = duration_ms(ping["p50"].as_f64().unwrap());
    let p99 = duration_ms(ping["p99"].as_f64().unwrap());
    assert!(
        report.contains(&format!(
            "<td>ping round trips (from the intended send)</td><td>{}</td><td>{p50}</td>",
            count(pongs)
        )),
        "ping p50 {p50}"
    );
    assert!(report.contains(&p99), "ping p99 {p99}");
    assert!(
        report.contains("<dt>send backlog, most</dt><dd>0 messages (0 B)</dd>"),
        "backlog"
    );

    // The dashboard's page, drawn again from its record: the same charts, second by second.
    let board = page_of(&rec, &dir, "board.html");
    for id in ["chart-ping", "chart-backlog"] {
        assert!(board.contains(id), "no {id} on the dashboard's page");
    }
}

#[test]
fn the_send_backlog_grows_while_the_server_reads_nothing_and_replies_keep_their_intended_time() {
    let _turn = one_at_a_time();
    // The whole server blocks for 2 s when its 60th message arrives (1.5 s in): it
    // reads nothing, each socket's message waits for its reply, and the schedule's next
    // messages, 40 a second, wait in herd for a free socket.
    let echo = Echo::start(60, 2000);
    let dir = TempDir::new("ws-backlog");
    let (json, csv) = (dir.path("r.json"), dir.path("r.csv"));
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let ran = Herd::new(&["run", &url, "--send", PING, "-t", "5"])
        .args(&[
            "-c",
            "4",
            "--message-rate",
            "10",
            "-d",
            "5s",
            "--match",
            "id",
        ])
        .file("--csv", &csv)
        .json(&json)
        .run();
    let r = ran.code(0).json();
    assert_matches_schema("result.schema.json", &r);
    // Every message due was sent at last and answered.
    assert_eq!(all_answered(&r), 200);
    assert_eq!(echo.count(), 200);
    let backlog = seconds(&r, "backlog_messages");
    let b = &r["websocket"]["backlog"];
    let max = b["max_messages"].as_u64().unwrap();
    // A second closed inside the stall with dozens of messages due and unsent.
    assert!(max >= 30, "{b}: {backlog:?}");
    assert_eq!(
        max,
        backlog.iter().map(|s| s.1).max().unwrap(),
        "{backlog:?}"
    );
    // Once the server reads again the backlog leaves at once: the run ends with none.
    assert_eq!(b["end_messages"], 0, "{b}");
    assert_eq!(
        backlog.first().unwrap().1,
        0,
        "before the stall: {backlog:?}"
    );
    // The messages held back were timed from their intended send: the stall is in them.
    let lat = &r["latency_ms"];
    assert!(lat["max"].as_f64().unwrap() >= 1500.0, "{lat}");
    assert!(lat["p90"].as_f64().unwrap() >= 500.0, "{lat}");
    // The CSV's seconds and the summary say the same.
    let table = std::fs::read_to_string(&csv).unwrap();
    let rows = column(&table, "backlog_messages");
    assert_eq!(
        rows.iter().fold(0.0, |a: f64, b| a.max(*b)) as u64,
        max,
        "{table}"
    );
    let out = ran.stdout();
    assert!(
        out.contains(&format!("  backlog    max {} messages", count(max))),
        "{out}"
    );
}
