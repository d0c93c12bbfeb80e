//! Small things a careful reader notices: counts with thousands separators, a check that never
//! ran, a warm-up that was not there, a step with no responses, TLS flags that do nothing on
//! http://, and bytes sent counted as the server read them.

use crate::common::*;

/// `n` as herd writes a count: `1,868`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let chunks: Vec<String> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    chunks.join(",")
}

#[test]
fn nothing_answered_counts_its_requests_with_separators() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    let dir = TempDir::new("nothing-answered");
    let ran = Herd::new(&["run", &url, "-n", "1200", "-c", "4", "-t", "1"])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(6).json();
    let errors = r["totals"]["errors"].as_u64().unwrap();
    assert!(errors >= 1000, "{errors}");
    let want = format!("all {} requests failed before a response", grouped(errors));
    assert!(ran.stdout().contains(&want), "{want}: {}", ran.stdout());
}

#[test]
fn a_check_no_response_reached_says_it_never_ran() {
    let dir = TempDir::new("check-never-ran");
    let addr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let file = shop_workload(&dir, addr, "users: 1, iterations: 3");
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .json(&dir.path("r.json"))
        .run();
    ran.code(6);
    let out = ran.stdout();
    assert!(
        out.contains("check --   home: status 200: never ran"),
        "{out}"
    );
    assert!(!out.contains("0 passed, 0 failed"), "{out}");
}

#[test]
fn a_run_without_warm_up_says_none_in_its_report() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("no-warmup");
    let json = dir.path("r.json");
    Herd::new(&["run", &nginx.url("/"), "-n", "50", "-c", "1", "-t", "1"])
        .json(&json)
        .run()
        .code(0);
    let page = html_report(&json);
    assert!(!page.contains("0 us (0 requests"), "warm-up of 0 us");
    assert!(page.contains("none"), "the warm-up row says none");
}

#[test]
fn a_sweep_step_with_no_response_shows_no_latency() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    let ran = Herd::new(&["sweep", &url, "--rates", "20"])
        .steps("1s")
        .run();
    let out = ran.stdout();
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("20 "))
        .unwrap_or_else(|| panic!("no row for 20 req/s: {out}"));
    assert!(!row.contains(" us "), "{row}");
    assert_eq!(
        row.split_whitespace().filter(|c| *c == "-").count(),
        3,
        "{row}"
    );
}

#[test]
fn tls_flags_on_an_http_url_are_said_to_have_no_effect() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("tls-on-http");
    nginx_tls(&dir, "");
    let cacert = dir.path("cert.pem");
    let ran = Herd::new(&[
        "run",
        &nginx.url("/"),
        "-n",
        "5",
        "-c",
        "1",
        "-t",
        "1",
        "-k",
    ])
    .args(&["--cacert", cacert.to_str().unwrap()])
    .json(&dir.path("r.json"))
    .run();
    let r = ran.code(0).json();
    let said = format!(
        "-k/--insecure, --cacert had no effect: http://{}/ speaks no TLS",
        nginx.addr
    );
    assert!(ran.stdout().contains(&said), "{said}: {}", ran.stdout());
    assert!(
        r["warnings"].to_string().contains("had no effect"),
        "{}",
        r["warnings"]
    );
    // Without them, no such word.
    let quiet = Herd::new(&["run", &nginx.url("/"), "-n", "5", "-c", "1", "-t", "1"]).run();
    assert!(
        !quiet.stdout().contains("had no effect"),
        "{}",
        quiet.stdout()
    );
}

#[test]
fn bytes_sent_with_calls_per_conn_are_the_bytes_nginx_read() {
    // nginx's $request_length is every byte of the request it read: the Connection: close
    // that ends each connection's last call included.
    let nginx = Nginx::start_configured(
        "log_format len '$request_length';",
        "access_log len.log len;",
        "",
    );
    let dir = TempDir::new("bytes-sent");
    let ran = Herd::new(&["run", &nginx.url("/"), "-n", "90", "-c", "2", "-t", "1"])
        .args(&["--calls-per-conn", "3"])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(0).json();
    assert_eq!(r["totals"]["ok"], 90);
    let log = std::fs::read_to_string(nginx.dir.path("len.log")).unwrap();
    let read: u64 = log.lines().map(|l| l.trim().parse::<u64>().unwrap()).sum();
    assert_eq!(log.lines().count(), 90, "{log}");
    assert_eq!(r["totals"]["bytes_sent"].as_u64().unwrap(), read);
}

/// The seconds a chart of the report's run page covers, from its hover data.
fn chart_seconds(page: &str, id: &str) -> Vec<String> {
    let chart = page
        .split(&format!("id=\"{id}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no {id}"));
    let data = chart.split("data-hover=\"").nth(1).unwrap();
    let data = data[..data.find('"').unwrap()].replace("&quot;", "\"");
    let v: serde_json::Value = serde_json::from_str(&data).unwrap();
    let t = v["t"].as_array().unwrap();
    // The seconds where some series has a value.
    (0..t.len())
        .filter(|&k| {
            v["s"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| !s["v"][k].is_null())
        })
        .map(|k| t[k].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_reports_generator_charts_end_at_the_same_second_as_its_throughput() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("generator-end");
    let json = dir.path("r.json");
    Herd::new(&["run", &nginx.url("/"), "-d", "3s", "-c", "2", "-t", "1"])
        .json(&json)
        .run()
        .measured();
    let page = html_report(&json);
    let throughput = chart_seconds(&page, "chart-throughput");
    assert_eq!(throughput.len(), 3, "{throughput:?}");
    for id in ["chart-generator-cpu", "chart-generator-lag"] {
        assert_eq!(chart_seconds(&page, id), throughput, "{id}");
    }
}
