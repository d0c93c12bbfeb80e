//! `herd run -f urls.txt` with `-m`, `-H` and `--body`: the flags apply to every line that does
//! not say otherwise (they were silently dropped: `-m HEAD` sent GET).

use crate::common::*;
use serde_json::Value;

/// `/need-team` answers 200 only to a request carrying the header the command line gave.
const SITE: &str = r#"
    location = /a { return 200 "a\n"; }
    location = /need-team {
        if ($http_x_team != "perf") { return 403 "no team\n"; }
        return 200 "team\n";
    }
"#;

fn names(r: &Value) -> Vec<String> {
    r["by_name"]
        .as_array()
        .expect("by_name")
        .iter()
        .map(|n| n["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn url_file_lines_take_the_method_headers_and_body_of_the_command_line() {
    let nginx = Nginx::start(SITE);
    let dir = TempDir::new("url-flags");
    let file = dir.path("urls.txt");
    let json = dir.path("r.json");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{} POST x=1\n",
            nginx.url("/a"),
            nginx.url("/need-team"),
            nginx.url("/a")
        ),
    )
    .unwrap();
    let r = Herd::new(&["run", "-n", "6", "-c", "1", "-t", "1", "-q"])
        .file("-f", &file)
        .args(&["-m", "HEAD", "-H", "X-Team: perf"])
        .json(&json)
        .run()
        .code(0)
        .json();
    let got = names(&r);
    for want in [
        format!("HEAD {}", nginx.url("/a")),
        format!("HEAD {}", nginx.url("/need-team")),
        format!("POST {}", nginx.url("/a")),
    ] {
        assert!(got.contains(&want), "{want} not in {got:?}");
    }
    assert_eq!(r["totals"]["completed"], 6);
    assert_eq!(
        r["totals"]["ok"], 6,
        "-H reached every request: {}",
        r["status"]
    );

    // --body goes to lines without data of their own, as POST by default
    let r = Herd::new(&["run", "-n", "3", "-c", "1", "-t", "1", "-q"])
        .file("-f", &file)
        .args(&["--body", "k=v"])
        .json(&json)
        .run()
        .code(0)
        .json();
    let got = names(&r);
    assert!(
        got.contains(&format!("POST {}", nginx.url("/need-team"))),
        "{got:?}"
    );

    // a bad flag is refused as for one URL
    let ran = Herd::new(&["run", "-H", "nocolon", "-n", "1"])
        .file("-f", &file)
        .run();
    let err = ran.code(2).stderr();
    assert!(err.contains("is not `Name: value`"), "{err}");
}
