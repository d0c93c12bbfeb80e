//! One reader, one message: `herd report`, `herd compare` and `herd plot` read result files
//! through the same reader, so a damaged or foreign file gets the same words from each (the
//! binary is spawned, as a user meets it).

use crate::common::*;
use herd_result::HERD_VERSION;
use std::path::Path;

/// The one line each command prints for `file`, after checking it exits 2 with nothing else.
fn messages(dir: &TempDir, file: &Path) -> [String; 3] {
    let file = file.to_str().unwrap();
    let png = dir.path("out.png");
    let outs = [
        run_herd(&["report", file]),
        run_herd(&["compare", &fixture("run-open.json"), file]),
        run_herd(&["plot", file, "-o", png.to_str().unwrap()]),
    ];
    outs.map(|o| {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(!png.exists(), "nothing is drawn");
        stderr(&o).trim_end().to_owned()
    })
}

#[test]
fn every_command_says_the_same_about_a_bad_result_file() {
    let dir = TempDir::new("reading");
    let good = std::fs::read_to_string(fixture("run-open.json")).unwrap();
    let mut damaged: serde_json::Value = serde_json::from_str(&good).unwrap();
    damaged["histograms"]["service_time"] = "SGVsbG8gd29ybGQ=".into();
    let mut not_base64 = damaged.clone();
    not_base64["histograms"]["service_time"] = "this is not base64!".into();
    let cut = &good[..good.len() / 2];
    let cases: [(&str, String, String); 7] = [
        (
            "cut.json",
            cut.to_owned(),
            format!(
                "is cut short: its JSON ends at line {}",
                cut.lines().count()
            ),
        ),
        (
            "notes.json",
            "p99 was fine\n".to_owned(),
            "is not JSON: ".to_owned(),
        ),
        (
            "k6.json",
            r#"{"metrics": {"http_reqs": {"count": 10}}}"#.to_owned(),
            "is not a herd result: it has no `herd_version` key".to_owned(),
        ),
        (
            "banana.json",
            format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "banana"}}"#),
            "is a herd `banana` result, a kind this herd".to_owned(),
        ),
        (
            "future.json",
            r#"{"herd_version": "9.0.0", "kind": "run"}"#.to_owned(),
            "was written by herd 9.0.0, which this herd".to_owned(),
        ),
        (
            "damaged.json",
            damaged.to_string(),
            "`histograms.service_time` is not a valid histogram (not an HdrHistogram".to_owned(),
        ),
        (
            "garbled.json",
            not_base64.to_string(),
            "`histograms.service_time` is not a valid histogram (not base64".to_owned(),
        ),
    ];
    for (name, text, want) in cases {
        let path = dir.path(name);
        std::fs::write(&path, text).unwrap();
        let [report, compare, plot] = messages(&dir, &path);
        assert!(
            report.starts_with(&format!("herd: {}", path.display())) && report.contains(&want),
            "{name}: {report}"
        );
        assert_eq!(report.lines().count(), 1, "{name}: {report}");
        assert_eq!(compare, report, "{name}: compare");
        assert_eq!(plot, report, "{name}: plot");
    }
}

#[test]
fn compare_names_a_sweep_given_in_place_of_a_run() {
    let out = run_herd(&[
        "compare",
        &fixture("run-open.json"),
        &fixture("sweep-open.json"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("sweep-open.json is a herd `sweep` result; expected a `run` result"),
        "{err}"
    );
}

#[test]
fn compare_help_lists_compares_own_exit_codes() {
    let out = run_herd(&["compare", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    let codes = help.split("Exit codes:").nth(1).expect("an exit code list");
    let listed: Vec<&str> = codes
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(listed, ["0", "2", "3"], "{codes}");
    assert!(codes.contains("regressed"), "{codes}");
    assert!(
        !codes.contains("bottleneck") && !codes.contains("Ctrl-C"),
        "{codes}"
    );
}

#[test]
fn plot_refuses_negative_rates_and_errors_past_100_percent() {
    let dir = TempDir::new("plot-check");
    let png = dir.path("out.png");
    let header = "dem_req_rate\treq_rate\tcon_rate\tmin_rep_rate\tavg_rep_rate\tmax_rep_rate\tstddev_rep_rate\tresp_time\tnet_io\terrors";
    for (row, want) in [
        (
            "200\t-199\t20\t182\t199\t200\t2\t90\t243\t0",
            "s.tsv, line 3: `req_rate` is -199: a measurement cannot be negative",
        ),
        (
            "200\t199\t20\t182\t199\t200\t2\t90\t243\t500",
            "s.tsv, line 3: `errors` is 500: a share of requests cannot pass 100%",
        ),
    ] {
        let tsv = dir.path("s.tsv");
        let text = format!("{header}\n100\t99\t10\t90\t99\t100\t1\t90\t120\t0\n{row}\n");
        std::fs::write(&tsv, text).unwrap();
        let out = run_herd(&["plot", tsv.to_str().unwrap(), "-o", png.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
        assert!(!png.exists());
    }
}

#[test]
fn plot_refuses_a_sweep_json_with_a_value_no_run_measured() {
    let dir = TempDir::new("plot-json-check");
    let png = dir.path("out.png");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("sweep-open.json")).unwrap())
            .unwrap();
    doc["steps"][1]["runs"][0]["latency_ms"]["p99"] = (-4.0).into();
    let path = dir.path("sweep.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = run_herd(&["plot", path.to_str().unwrap(), "-o", png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let level = doc["steps"][1]["level"].as_f64().unwrap();
    let target = doc["targets"][0]["name"].as_str().unwrap();
    let want = format!(
        "sweep.json: the step at {level}, target `{target}`: `p99_ms` is -4: a measurement cannot be negative"
    );
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    assert!(!png.exists());
}

#[test]
fn docs_and_help_give_the_exit_codes_herd_uses() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let doc = |name: &str| std::fs::read_to_string(format!("{root}{name}")).unwrap();
    // A late --start-at exits 7 (shard/start.rs proves it), in the help and in run.md.
    let help = stdout(&run_herd(&["run", "--help"]))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("fail (exit 7,"), "{help}");
    assert!(!help.contains("exit 6, the merge"), "{help}");
    let run = doc("docs/run.md");
    assert!(run.contains("`7` `--start-at`"), "run.md's exit codes");
    assert!(!run.contains("`6` `--start-at`"), "run.md's exit codes");
    assert!(!run.contains(").;"), "a stray ').;' in run.md");
    // No level meets the SLO: 8 (capacity/ends.rs proves it).
    assert!(!doc("docs/capacity.md").contains("6 no level tried meets the SLO"));
    // The split of the load is tested (shard/split.rs); the note must not say otherwise.
    assert!(!doc("docs/distributed.md").contains("the split of the load (waiting for the engine)"));
}
