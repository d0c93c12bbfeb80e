//! A WebSocket's sockets apart from their messages, against Python's websockets: ping -> pong
//! round trips timed from each ping's intended instant (a server stall shows in them), the
//! server's closes by code and name and its refused Upgrades by status, each held against the
//! server's own count, in the summary, the JSON and its seconds, the CSV and /metrics.

use super::{run_ws, Echo};
use crate::common::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The column `name` of every row of the CSV `table`, as numbers (empty cells as 0).
pub(super) fn column(table: &str, name: &str) -> Vec<f64> {
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|c| *c == name).unwrap();
    lines
        .map(|l| l.split(',').nth(i).unwrap().parse().unwrap_or(0.0))
        .collect()
}

#[test]
fn pings_are_timed_from_their_intended_instant_and_a_server_stall_shows_in_them() {
    let _turn = one_at_a_time();
    // The whole server blocks for 1 s when its 40th message arrives (about a second in).
    let echo = Echo::start(40, 1000);
    let dir = TempDir::new("ws-ping");
    let csv = dir.path("r.csv");
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let (r, out) = run_ws(
        &url,
        &[
            "-c",
            "4",
            "--message-rate",
            "10",
            "-d",
            "4s",
            "--match",
            "id",
            "--ping-interval",
            "100ms",
            "--csv",
            csv.to_str().unwrap(),
        ],
        &dir,
    );
    let ws = &r["websocket"];
    let ping = &ws["ping_rtt_ms"];
    let pongs = ping["count"].as_u64().unwrap();
    // Four sockets, a ping each 100 ms for 4 s: the last ones may be out as the run ends.
    assert!((4 * 30..=4 * 40).contains(&pongs), "{ws}");
    // The pings due while the server stood still waited the rest of the stall: from their
    // intended instant, the longest ~1 s; most pings were answered at once.
    assert!(ping["max"].as_f64().unwrap() >= 900.0, "{ping}");
    assert!(ping["p50"].as_f64().unwrap() < 100.0, "{ping}");
    assert!(out.contains("  ping rtt   p50 "), "{out}");
    assert!(
        out.contains("pongs, from each ping's intended time)"),
        "{out}"
    );
    // Each second's pongs add up to the run's, in the JSON and in the CSV.
    let seconds: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ws"]["pongs"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(seconds, pongs);
    let table = std::fs::read_to_string(&csv).unwrap();
    let rows: f64 = column(&table, "pongs").iter().sum();
    assert_eq!(rows as u64, pongs, "{table}");
    assert!(
        column(&table, "ping_p99_ms").iter().any(|p| *p >= 500.0),
        "the stalled second's pings: {table}"
    );
    // Nothing closed or refused: no such lines.
    assert!(ws["closes"].as_array().unwrap().is_empty(), "{ws}");
    assert!(!out.contains("ws closes"), "{out}");
}

/// The last page of `/metrics` at `addr`, once the run it serves has ended.
pub(super) fn final_metrics(addr: SocketAddr) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
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

#[test]
fn the_servers_closes_are_counted_by_code_and_its_refusals_by_status() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-closes");
    let base = format!("ws://127.0.0.1:{}", echo.port);

    // Each socket is closed with 1001 when its fourth message comes: 40 messages in twos,
    // ten sockets closed, each on a message that waited for its reply.
    let json = dir.path("going.json");
    let csv = dir.path("going.csv");
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let child = Herd::new(&["run", &format!("{base}/close/1001"), "--send", "hi"])
        .args(&["-c", "2", "-n", "40", "-t", "1", "-q"])
        .args(&["--metrics-listen", &metrics.to_string()])
        .file("--csv", &csv)
        .json(&json)
        .spawn();
    let page = final_metrics(metrics);
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    assert_eq!(echo.read("/closes"), 10);
    assert_eq!(
        r["websocket"]["closes"],
        serde_json::json!([{"code": 1001, "name": "going_away", "count": 10}]),
        "{}",
        r["websocket"]
    );
    assert_eq!(r["errors"]["ws_closed"], 10, "{}", r["errors"]);
    assert_eq!(r["totals"]["ok"], 30, "{}", r["totals"]);
    let closed_in_seconds: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ws"]["closes"]["1001"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(closed_in_seconds, 10);
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(table.contains(",1001:"), "{table}");
    let line = page
        .lines()
        .find(|l| l.starts_with("herd_ws_closes_total{") && l.contains("code=\"1001\""))
        .unwrap_or_else(|| panic!("no closes on /metrics:\n{page}"));
    assert!(
        line.contains("name=\"going_away\"") && line.ends_with(" 10"),
        "{line}"
    );

    // Dropped without a close frame: 1006, abnormal_closure.
    let (r, out) = run_ws(&format!("{base}/abort"), &["-c", "2", "-n", "40"], &dir);
    assert_eq!(echo.read("/closes"), 20);
    assert_eq!(
        r["websocket"]["closes"],
        serde_json::json!([{"code": 1006, "name": "abnormal_closure", "count": 10}]),
        "{}",
        r["websocket"]
    );
    assert_eq!(r["totals"]["errors"], 10, "{}", r["errors"]);
    assert!(
        out.contains("1006 abnormal_closure 10   (closed by the server, by code)"),
        "{out}"
    );

    // Each socket's Upgrade refused: counted once a socket, by its status.
    let ran = Herd::new(&["run", &format!("{base}/forbidden"), "--send", "hi"])
        .args(&["-c", "2", "-n", "6", "-t", "1"])
        .json(&dir.path("refused.json"))
        .run();
    let (r, out) = (ran.json(), ran.stdout());
    assert_eq!(echo.read("/refused"), 6);
    assert_eq!(r["status"]["403"], 6, "{}", r["status"]);
    assert_eq!(
        r["websocket"]["handshakes_failed"]["403"], 6,
        "{}",
        r["websocket"]
    );
    assert!(
        out.contains("403 6   (Upgrades refused, by status)"),
        "{out}"
    );
}

#[test]
fn two_shards_sockets_merge_into_the_sum_of_their_pongs_and_closes() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-shards");
    let url = format!("ws://127.0.0.1:{}/close/1001", echo.port);
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let json = dir.path(&format!("shard-{i}.json"));
            let child = Herd::new(&["run", &url, "--send", "hi", "-t", "1", "-q"])
                .args(&["-c", "4", "--message-rate", "5", "-d", "2s"])
                .args(&["--ping-interval", "100ms"])
                .args(&["--shard", &format!("{i}/2"), "--start-at", "+2s"])
                .file("--json", &json)
                .spawn();
            (child, json)
        })
        .collect();
    let mut parts = Vec::new();
    for (child, json) in shards {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        parts.push(json);
    }
    let total = dir.path("total.json");
    let o = run_herd(&[
        "merge",
        parts[0].to_str().unwrap(),
        parts[1].to_str().unwrap(),
        "-o",
        total.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&total);
    assert_matches_schema("result.schema.json", &r);
    let of = |r: &serde_json::Value| {
        let w = &r["websocket"];
        (
            w["ping_rtt_ms"]["count"].as_u64().unwrap(),
            w["closes"][0]["count"].as_u64().unwrap(),
        )
    };
    let (a, b) = (of(&read_json(&parts[0])), of(&read_json(&parts[1])));
    let (pongs, closes) = of(&r);
    assert!(a.0 > 0 && b.0 > 0, "{a:?} {b:?}");
    assert_eq!((pongs, closes), (a.0 + b.0, a.1 + b.1));
    // Every close the server made was counted by one shard or the other.
    assert_eq!(closes, echo.read("/closes"));
    assert_eq!(r["websocket"]["closes"][0]["name"], "going_away");
    let seconds: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["ws"]["pongs"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(seconds, pongs);
    // The shards' send backlogs add up second by second; the run's is read from the sum.
    let most = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["ws"]["backlog_messages"].as_u64())
        .max();
    assert!(most.is_some(), "{}", r["timeline"]);
    assert_eq!(
        r["websocket"]["backlog"]["max_messages"].as_u64(),
        most,
        "{}",
        r["websocket"]
    );
}
