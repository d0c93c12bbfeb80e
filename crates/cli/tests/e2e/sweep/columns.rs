//! The sweep's tables: autobench's columns and herd's beside them, a row per step, two targets
//! side by side, one named target's suffixed columns, read back by `herd plot` and `herd report`.

use crate::common::*;

pub const AUTOBENCH: [&str; 10] = [
    "dem_req_rate",
    "req_rate",
    "con_rate",
    "min_rep_rate",
    "avg_rep_rate",
    "max_rep_rate",
    "stddev_rep_rate",
    "resp_time",
    "net_io",
    "errors",
];
pub const HERDS: [&str; 7] = [
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "p99.9_ms",
    "ok",
    "failed",
    "generator",
];

#[test]
fn a_three_step_sweep_writes_autobenchs_columns_and_a_row_per_rate() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep");
    let (tsv, csv, json) = (dir.path("s.tsv"), dir.path("s.csv"), dir.path("s.json"));
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["sweep", &url, "--rates", "50:150:50"])
        .steps("1s")
        .file("--tsv", &tsv)
        .file("--csv", &csv)
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    let want: Vec<&str> = AUTOBENCH.iter().chain(HERDS.iter()).copied().collect();
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), want);
    assert_eq!(lines.len(), 4, "{tsv}");
    for (line, rate) in lines[1..].iter().zip(["50", "100", "150"]) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), want.len(), "{line}");
        assert_eq!(cells[0], rate);
        let sent: f64 = cells[1].parse().unwrap();
        let asked: f64 = rate.parse().unwrap();
        assert!((sent - asked).abs() <= asked * 0.2, "{line}");
        // A healthy server: at most an arrival left unsent as the step ends.
        let errors: f64 = cells[9].parse().unwrap();
        assert!(errors <= 2.0, "{line}");
        assert!(["ok", "generator-limited"].contains(&cells[16]), "{line}");
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().next().unwrap(), want.join(","));
    assert_eq!(csv.lines().count(), 4);
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["kind"], "sweep");
    assert_eq!(r["model"], "open");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2]["level"].as_f64(), Some(150.0));
    assert_eq!(steps[2]["runs"][0]["config"]["rate"].as_f64(), Some(150.0));
    assert!(r["stopped_early"].is_null());
    // The live table: a header, then one line per step.
    let rows = text
        .lines()
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap_or_default();
            first.replace(',', "").parse::<f64>().is_ok()
        })
        .count();
    assert_eq!(rows, 3, "{text}");
    assert!(text.contains("no saturation up to 150"), "{text}");
    // Its report: the same conclusion first, then the curves and a row per step.
    let page = html_report(&json);
    let conclusion = text
        .lines()
        .find(|l| l.contains("no saturation up to 150"))
        .unwrap();
    assert!(page.contains(conclusion), "{conclusion}");
    for id in [
        "chart-sweep-throughput",
        "chart-sweep-latency",
        "chart-sweep-errors",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(!page.contains("no data"));
    let table = page.split("class=\"sweep-steps\"").nth(1).unwrap();
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 4, "a header and 3 steps");
}

#[test]
fn two_targets_are_swept_side_by_side_with_suffixed_columns() {
    let _turn = one_at_a_time();
    let server = mock(&["/slow latency=2ms", "/*"]);
    let dir = TempDir::new("sweep2");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let fast = format!("fast=http://{}/", server.local_addr());
    let slow = format!("slow=http://{}/slow", server.local_addr());
    let ran = Herd::new(&["sweep", "--target", &fast, "--target", &slow])
        .args(&["--rates", "50,100"])
        .steps("1s")
        .file("--tsv", &tsv)
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let header: Vec<String> = tsv
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .map(String::from)
        .collect();
    let mut want = vec!["dem_req_rate".to_owned()];
    for t in ["fast", "slow"] {
        want.extend(AUTOBENCH[1..].iter().map(|c| format!("{c}_{t}")));
    }
    for t in ["fast", "slow"] {
        want.extend(HERDS.iter().map(|c| format!("{c}_{t}")));
    }
    assert_eq!(header, want);
    assert_eq!(tsv.lines().count(), 3);
    let r = ran.json_of("sweep.schema.json");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let runs = s["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        assert!(runs[1]["target"].as_str().unwrap().ends_with("/slow"));
        // The slow route takes 2 ms; the fast one does not.
        assert!(runs[1]["service_time_ms"]["p50"].as_f64().unwrap() >= 2.0);
    }
    assert_eq!(r["targets"][1]["name"], "slow");
    assert_eq!(
        text.lines().filter(|l| l.contains(" slow ")).count(),
        2,
        "{text}"
    );
    let page = html_report(&json);
    for line in ["fast good replies/s", "slow good replies/s", "slow p99"] {
        assert!(page.contains(line), "{line}");
    }
}

#[test]
fn one_named_target_gets_autobenchs_host_suffixed_columns() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-named");
    let (tsv, png) = (dir.path("s.tsv"), dir.path("s.png"));
    let target = format!("testhost=http://{}/", server.local_addr());
    Herd::new(&["sweep", "--target", &target, "--rates", "20"])
        .steps("500ms")
        .args(&["-q"])
        .file("--tsv", &tsv)
        .run()
        .code(0);
    let text = std::fs::read_to_string(&tsv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split('\t').collect();
    // Seed 001's autobench file for one host, column for column.
    let seed = std::fs::read_to_string(fixture("autobench_seed001.tsv")).unwrap();
    let autobench: Vec<&str> = seed.lines().next().unwrap().split('\t').collect();
    assert_eq!(header[..autobench.len()], autobench[..]);
    let herds: Vec<String> = HERDS.iter().map(|c| format!("{c}_testhost")).collect();
    assert_eq!(header[autobench.len()..], herds[..]);
    // Read back: `herd plot` names the line after the suffix.
    Herd::new(&["plot", tsv.to_str().unwrap()])
        .file("-o", &png)
        .run()
        .code(0);
    let table = herd_result::sweep::read_table(&text, "s.tsv", "s").unwrap();
    assert_eq!(table.targets, vec!["testhost"]);
    assert_eq!(table.steps.len(), 1);
}
