//! What a capacity search shows and writes probe by probe: the dashboard's page and events
//! grow a row per probe as the search goes, and `--requests-log` writes a numbered file per
//! probe with a line for every request that probe counted.

use super::server::{AdmissionServer, Admit};
use crate::common::*;
use crate::dashboard::{finish, loopback, start};
use crate::outputs::requests_log::lines;
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A search in users against a server that serves two connections: 2 users hold, 4 and 3
/// break, 2 is confirmed. Four short probes (two users get the 1,000 requests "errors < 1%"
/// needs within a second: each answer is a millisecond of the server's work).
fn two_connections_search() -> (AdmissionServer, Herd) {
    let server = AdmissionServer::start(Admit::Connections(2));
    let herd = Herd::new(&["capacity", &server.url(), "--users", "--slo", "errors<1%"])
        .args(&["--start", "2", "--max-probes", "8"])
        .probes("1s");
    (server, herd)
}

/// The `view` events of the dashboard's event stream, read to its end (the series' end closes
/// it), each read bounded.
fn views(addr: SocketAddr) -> Vec<String> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    std::io::Write::write_all(
        &mut s,
        b"GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut stream = String::new();
    s.read_to_string(&mut stream)
        .expect("the event stream ends with the search");
    stream
        .split("\n\n")
        .filter_map(|e| e.split_once("event: view\n").map(|(_, data)| data))
        .map(|data| {
            data.lines()
                .map(|l| l.strip_prefix("data: ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// The probes the page's `data-levels` says are done.
fn levels_done(view: &str) -> usize {
    let n = view
        .split("data-levels=\"")
        .nth(1)
        .expect("a series status");
    n[..n.find('"').unwrap()].parse().unwrap()
}

#[test]
fn a_capacity_searchs_dashboard_grows_a_row_per_probe_as_it_goes() {
    let _turn = one_at_a_time();
    let (_server, herd) = two_connections_search();
    let dir = TempDir::new("capacity-dashboard");
    let json = dir.path("c.json");
    let (child, url, reader) = start(herd.args(&["-q", "--dashboard=127.0.0.1:0"]).json(&json));
    let addr = loopback(&url);
    let views = views(addr);
    let (code, table, said) = finish(child, reader);
    assert_eq!(code, 0, "{table}\n{said}");
    let r = read_json(&json);
    assert_matches_schema("capacity.schema.json", &r);
    assert_eq!(r["capacity_users"], 2, "{table}");
    let probes = r["probes"].as_array().unwrap();

    // As it goes: a probe under way shown above the probes judged so far, never fewer.
    let done: Vec<usize> = views.iter().map(|v| levels_done(v)).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    assert!(
        views
            .iter()
            .any(|v| levels_done(v) >= 1 && v.contains("<section id=\"step\"><h2>Now: ")),
        "no view of a probe going on after one was judged: {views:?}"
    );
    // At the end: a row per probe, in the order run, with its purpose and verdict.
    let last = views.last().expect("views");
    assert!(
        last.contains(&format!(
            "data-state=\"finished\" data-levels=\"{}\"",
            probes.len()
        )),
        "{last}"
    );
    let rows: Vec<&str> = last.split("<tr class=\"level\">").skip(1).collect();
    assert_eq!(rows.len(), probes.len(), "{last}");
    for (row, p) in rows.iter().zip(probes) {
        let users = p["level"].as_f64().unwrap();
        let word = if users == 1.0 { "user" } else { "users" };
        let asked = format!(
            "<td>{users} {word} ({})</td>",
            p["purpose"].as_str().unwrap()
        );
        assert!(row.starts_with(&asked), "{asked}: {row}");
        let verdict = if !p["too_few"].is_null() {
            "too few to judge: "
        } else if p["held"] == true {
            "held"
        } else {
            "broke: "
        };
        assert!(row.contains(&format!("<td>{verdict}")), "{verdict}: {row}");
    }
}

#[test]
fn a_capacity_searchs_requests_log_is_a_numbered_file_per_probe_with_every_request() {
    let _turn = one_at_a_time();
    let (_server, herd) = two_connections_search();
    let dir = TempDir::new("capacity-reqlog");
    let (json, log) = (dir.path("c.json"), dir.path("r.csv.gz"));
    let ran = herd
        .args(&["-q"])
        .file("--requests-log", &log)
        .json(&json)
        .run();
    ran.code(0);
    let r = ran.json_of("capacity.schema.json");
    let probes = r["probes"].as_array().unwrap();
    assert!(probes.len() >= 3, "{}", ran.stdout());
    for (i, p) in probes.iter().enumerate() {
        let file = dir.path(&format!("r-{}.csv.gz", i + 1));
        let t = &p["result"]["totals"];
        let counted = t["completed"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
        assert!(counted > 0, "probe {}: {t}", i + 1);
        let logged = &p["result"]["requests_log"];
        assert_eq!(logged["path"], file.to_str().unwrap(), "probe {}", i + 1);
        assert_eq!(logged["lines"], counted, "probe {}", i + 1);
        assert_eq!(logged["lost"], 0, "probe {}", i + 1);
        let got = lines(&file);
        assert_eq!(got.len() as u64, counted, "probe {}: {t}", i + 1);
        // A probe that broke has the server's refusals in its file, one line each.
        let refused = got.iter().filter(|l| l["status"] == "503").count() as u64;
        assert_eq!(
            refused,
            p["result"]["status"]["503"].as_u64().unwrap_or(0),
            "probe {}",
            i + 1
        );
    }
    let next = dir.path(&format!("r-{}.csv.gz", probes.len() + 1));
    assert!(
        !next.exists() && !log.exists(),
        "a file per probe, no other"
    );
}
