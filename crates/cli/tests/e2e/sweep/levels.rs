//! What a step's level is: connections for the closed model, and for a workload file iterations
//! per second or users, each step counting its own iterations under the file's request names.

use super::columns::{AUTOBENCH, HERDS};
use crate::common::*;

#[test]
fn a_closed_series_runs_one_step_per_connection_count() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-closed");
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["sweep", &url, "--connections", "1,5,10"])
        .steps("500ms")
        .file("--tsv", &tsv)
        .json(&json)
        .run();
    ran.code(0);
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    assert!(tsv.starts_with("users\treq_rate\t"), "{tsv}");
    let levels: Vec<&str> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(levels, ["1", "5", "10"]);
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["model"], "closed");
    let conns: Vec<u64> = steps(&r)
        .iter()
        .map(|s| s["runs"][0]["config"]["connections"].as_u64().unwrap())
        .collect();
    assert_eq!(conns, [1, 5, 10]);
    let page = html_report(&json);
    assert!(page.contains("Throughput against concurrent users"));
    assert!(page.contains("<th>users</th>"));
}

/// A workload of two requests per iteration, against `addr`, asking for a closed load of its own
/// that each step replaces.
fn two_step_workload(dir: &TempDir, addr: std::net::SocketAddr) -> String {
    let file = shop_workload(dir, addr, "model: closed, users: 50, duration: 1h");
    file.to_str().unwrap().to_owned()
}

pub(super) fn steps(r: &serde_json::Value) -> &Vec<serde_json::Value> {
    r["steps"].as_array().unwrap()
}

#[test]
fn a_workload_file_is_swept_at_iterations_per_second_with_its_names_per_step() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-workload");
    let file = two_step_workload(&dir, server.local_addr());
    let (tsv, json) = (dir.path("s.tsv"), dir.path("s.json"));
    let ran = Herd::new(&["sweep", &file, "--rates", "20:40:20"])
        .steps("1s")
        .args(&["-q"])
        .file("--tsv", &tsv)
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    // The file's closed load for an hour is replaced by each step's rate for a second.
    assert!(text.contains("iter/s asked"), "{text}");
    assert!(
        text.contains("shop.yaml: no saturation up to 40 iterations/s asked"),
        "{text}"
    );
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    let want: Vec<&str> = AUTOBENCH.iter().chain(HERDS.iter()).copied().collect();
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), want);
    assert_eq!(lines.len(), 3, "{tsv}");
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["model"], "open");
    assert_eq!(r["targets"][0]["name"], "shop.yaml");
    for (step, (line, rate)) in steps(&r).iter().zip(lines[1..].iter().zip([20.0, 40.0])) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells[0], format!("{rate}"));
        let run = &step["runs"][0];
        assert_eq!(run["config"]["model"], "open");
        assert_eq!(run["config"]["rate"].as_f64(), Some(rate));
        assert_eq!(run["config"]["duration_s"].as_f64(), Some(1.0));
        assert_eq!(run["workload"].as_str(), Some(file.as_str()));
        // Each step counts its own iterations, and each iteration sends both requests.
        let names: Vec<&str> = run["by_name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["home", "item"]);
        let iterations = run["by_scenario"][0]["iterations"].as_u64().unwrap();
        let expected = rate as u64;
        assert!(
            iterations.abs_diff(expected) <= expected / 10 + 1,
            "{iterations} iterations at {rate}/s for 1s"
        );
        for n in run["by_name"].as_array().unwrap() {
            let ok = n["totals"]["ok"].as_u64().unwrap();
            assert!(
                ok.abs_diff(iterations) <= 2,
                "{}: {ok} ok, {iterations} iterations",
                n["name"]
            );
        }
        // Requests per second, shown beside, are two per iteration.
        let req_rate: f64 = cells[1].parse().unwrap();
        assert!(
            (req_rate - 2.0 * rate).abs() <= 0.2 * rate,
            "{req_rate} req/s at {rate} iterations/s"
        );
    }
    let page = html_report(&json);
    assert!(page.contains("iterations/s asked"));
}

#[test]
fn a_workload_file_is_swept_with_users_and_refused_when_broken() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-workload-closed");
    let file = two_step_workload(&dir, server.local_addr());
    let json = dir.path("s.json");
    let ran = Herd::new(&["sweep", &file, "--connections", "1,2"])
        .steps("500ms")
        .args(&["-q"])
        .json(&json)
        .run();
    let r = ran.code(0).json_of("sweep.schema.json");
    assert_eq!(r["model"], "closed");
    for (step, users) in steps(&r).iter().zip([1, 2]) {
        let run = &step["runs"][0];
        assert_eq!(run["config"]["model"], "closed");
        assert_eq!(run["config"]["connections"].as_u64(), Some(users));
        assert_eq!(run["by_name"].as_array().unwrap().len(), 2);
        assert!(run["by_name"][1]["totals"]["ok"].as_u64().unwrap() > 0);
    }

    // A file that does not compile: `herd validate`'s diagnostics, nothing sent, exit 2.
    let bad = dir.path("bad.yaml");
    std::fs::write(
        &bad,
        format!(
            "target: http://{}\nload: {{ model: closed, users: 1, duration: 1s }}\n\
             scenarios:\n  - name: x\n    steps:\n      - gett: /a\n",
            server.local_addr()
        ),
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let validate = Herd::new(&["validate", bad]).run();
    validate.code(2);
    let out = Herd::new(&["sweep", bad, "--rates", "10"]).run();
    out.code(2);
    assert_eq!(out.stderr(), validate.stderr());
    assert!(
        out.stderr()
            .contains(&format!("{bad}:6:9: unknown key `gett`")),
        "{}",
        out.stderr()
    );
    assert!(out.stdout().is_empty(), "{}", out.stdout());
    // Request flags belong in the file.
    let out = Herd::new(&["sweep", &file, "--rates", "10", "-H", "A: b"]).run();
    out.code(2);
    assert!(out
        .stderr()
        .contains("cannot be combined with a workload file"));
}

#[test]
fn an_http2_sweep_steps_through_connections_of_streams() {
    let _turn = one_at_a_time();
    let nginx = Nginx::start_with("", "http2");
    let dir = TempDir::new("sweep-h2");
    let json = dir.path("s.json");
    let ran = Herd::new(&[
        "sweep",
        "--http2",
        "--streams",
        "4",
        "--connections",
        "1,2",
        &nginx.url("/"),
    ])
    .steps("500ms")
    .json(&json)
    .run();
    let text = ran.code(0).stdout();
    assert!(
        text.contains("conns x4"),
        "a level is connections of 4 streams, not users:\n{text}"
    );
    assert!(
        text.contains(" x 4 streams"),
        "the conclusion counts connections x streams too:\n{text}"
    );
    let r = ran.json_of("sweep.schema.json");
    for (step, conns) in steps(&r).iter().zip([1, 2]) {
        let run = &step["runs"][0];
        assert_eq!(run["config"]["connections"], conns, "{}", run["config"]);
        assert_eq!(run["config"]["streams"], 4);
        assert_eq!(run["generator"]["protocols"][0]["protocol"], "h2c");
        assert_eq!(run["totals"]["errors"], 0, "{}", run["errors"]);
        assert!(run["totals"]["ok"].as_u64().unwrap() > 0);
    }
    assert_eq!(steps(&r).len(), 2);
}

#[test]
fn an_open_sweep_spaces_each_steps_arrivals_as_asked_and_a_closed_one_refuses_it() {
    let _turn = one_at_a_time();
    let server = mock(&["/*"]);
    let dir = TempDir::new("sweep-poisson");
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["sweep", &url, "--rates", "200,400"])
        .args(&["--arrivals", "poisson", "--seed", "7", "--no-stop"])
        .steps("1s")
        .json(&dir.path("s.json"))
        .run();
    ran.code(0);
    let r = ran.json_of("sweep.schema.json");
    for (step, rate) in steps(&r).iter().zip([200u64, 400]) {
        let run = &step["runs"][0];
        assert_eq!(
            run["config"]["arrivals"],
            serde_json::json!({"process": "poisson", "seed": 7}),
            "{}",
            run["config"]
        );
        // A Poisson count over one second: the even plan's exactly `rate`, this one not
        // (within 5 standard deviations of it).
        let n = run["totals"]["scheduled"].as_u64().unwrap();
        let sd = (rate as f64).sqrt();
        assert!(
            n != rate && (n as f64 - rate as f64).abs() < 5.0 * sd,
            "{n} of {rate}"
        );
    }
    refused(
        &[
            "sweep",
            &url,
            "--connections",
            "1,2",
            "--arrivals",
            "poisson",
        ],
        "--arrivals spaces the open model's arrivals: sweep with --rates",
    );
}
