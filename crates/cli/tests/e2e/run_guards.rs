//! `herd run` refuses to waste a run: output files are checked before the first request, a run
//! that nothing answered exits non-zero, and a run whose every answer was an error says so loudly.

use crate::common::*;

#[test]
fn a_mistyped_output_directory_stops_every_kind_of_run_before_any_request() {
    let s = mock(&["/*"]);
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("guards");
    let workload = dir.path("w.yaml");
    std::fs::write(
        &workload,
        format!(
            "target: {url}\nload: {{ model: closed, users: 1, requests: 5 }}\n\
             scenarios:\n  - name: s\n    steps:\n      - get: /\n"
        ),
    )
    .unwrap();
    let urls = dir.path("urls.txt");
    std::fs::write(&urls, format!("{url}\n")).unwrap();
    let missing = dir.path("no-such-dir");
    let json = missing.join("r.json");
    let json = json.to_str().unwrap();
    let runs: [Vec<&str>; 3] = [
        vec!["run", "-n", "5", "-c", "1", "--json", json, &url],
        vec!["run", "--json", json, workload.to_str().unwrap()],
        vec![
            "run",
            "-n",
            "5",
            "-c",
            "1",
            "--json",
            json,
            "-f",
            urls.to_str().unwrap(),
        ],
    ];
    for args in runs {
        let out = run_herd(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{} does not exist", missing.display()))
                && err.contains("mkdir -p"),
            "{args:?}: the message names the directory and the fix: {err}"
        );
        assert_eq!(s.stats().connections, 0, "{args:?}: nothing was sent");
    }
    // A file already there is kept as it was when the run cannot start.
    let old = dir.path("old.json");
    std::fs::write(&old, "keep me").unwrap();
    let out = run_herd(&["run", "-c", "0", "--json", old.to_str().unwrap(), &url]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "keep me");
    assert_eq!(s.stats().connections, 0);
}

#[test]
fn a_run_nothing_answered_exits_6() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    let dir = TempDir::new("refused");
    let ran = Herd::new(&["run", "-n", "10", "-c", "2", "-t", "1", &url])
        .json(&dir.path("r.json"))
        .run();
    ran.code(6);
    let text = ran.stdout();
    assert!(
        text.contains("WARNING: nothing answered: all 10 requests failed before a response"),
        "{text}"
    );
    let r = ran.json();
    assert!(r["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("nothing answered"));
}

#[test]
fn a_run_whose_every_response_is_500_warns_loudly() {
    let s = mock(&["/* status=500"]);
    let dir = TempDir::new("all500");
    let json = dir.path("r.json");
    let url = format!("http://{}/", s.local_addr());
    let ran = Herd::new(&["run", "-n", "10", "-c", "2", "-t", "1", &url])
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    assert!(
        text.contains("WARNING: every response was an error status (500 x 10)"),
        "{text}"
    );
    let r = ran.json();
    assert!(r["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("every response was an error status"));
}
