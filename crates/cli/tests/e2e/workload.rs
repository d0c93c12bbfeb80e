//! Workload files end to end: the issue's example against a small shop on a real nginx (login
//! with a form, a JSON token and a session cookie, item pages that link to each other, a cart
//! that needs both), bad files refused before anything is sent, siege URL files.

use crate::common::*;
use serde_json::Value;

/// A shop: `/cart` answers 200 only to a request with the token from `/login` *and* its cookie.
const SHOP: &str = r#"
    location = /index { default_type text/html; return 200 '<html><a href="/items/1">item</a></html>'; }
    location = /login {
        default_type application/json;
        add_header Set-Cookie "sid=s42; Path=/";
        return 200 '{"token":"abc123"}';
    }
    location ~ ^/items/(\d+)$ { default_type text/html; return 200 '<html><a href="/items/1$1">related</a></html>'; }
    location = /plain { default_type text/html; return 200 '<html>no links here</html>'; }
    location = /cart {
        default_type text/html;
        if ($http_authorization != "Bearer abc123") { return 401 "no token\n"; }
        if ($cookie_sid != "s42") { return 403 "no session\n"; }
        return 200 "<html>your cart is empty</html>";
    }
    location = /old { return 302 /index; }
"#;

/// The issue's example, with seconds instead of minutes.
fn shop_yaml(target: &str, extra_defaults: &str) -> String {
    format!(
        r#"
target: {target}
defaults: {{ headers: {{ Accept: text/html }}, timeout: 5s{extra_defaults} }}
load:
  model: closed
  stages:
    - {{ duration: 1s, target: 4 }}
    - {{ duration: 2s, target: 4 }}
    - {{ duration: 500ms, target: 0 }}
  warmup: 500ms
data:
  users: {{ csv: users.csv, pick: per-user }}
  item:  {{ zipf: {{ n: 10000, s: 1.1 }} }}
scenarios:
  - name: browse
    weight: 60
    steps:
      - get: /index
      - think: {{ uniform: [10ms, 30ms] }}
      - get: /items/{{{{item}}}}
        name: item page
  - name: buy
    weight: 40
    steps:
      - post: /login
        name: login
        form: {{ user: "{{{{users.user}}}}", password: "{{{{users.password}}}}" }}
        extract: {{ token: {{ json: "$.token" }} }}
        check: {{ status: 200 }}
      - get: /items/{{{{item}}}}
        extract: {{ next: {{ regex: 'href="(/items/\d+)"' }} }}
      - get: "{{{{next}}}}"
      - get: /cart
        name: cart
        headers: {{ Authorization: "Bearer {{{{token}}}}" }}
        check: {{ status: 200, body_contains: "cart" }}
thresholds:
  - "p95 < 300ms"
  - "errors < 1%"
  - "cart: p99 < 500ms"
"#
    )
}

fn write_shop(dir: &TempDir, yaml: &str) -> String {
    std::fs::write(
        dir.path("users.csv"),
        "user,password\nalice,a1\nbob,b2\ncarol,c3\n",
    )
    .unwrap();
    let file = dir.path("shop.yaml");
    std::fs::write(&file, yaml).unwrap();
    file.display().to_string()
}

fn run_json(file: &str, dir: &TempDir) -> (std::process::Output, Value) {
    let json = dir.path("result.json");
    let out = run_herd(&[
        "run",
        file,
        "-q",
        "-t",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        json.exists(),
        "no JSON written: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    (out, read_json(&json))
}

fn by_name<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["by_name"]
        .as_array()
        .expect("by_name")
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no by_name entry {name}: {}", r["by_name"]))
}

#[test]
fn the_issue_example_runs_against_a_shop_with_sessions() {
    let nginx = Nginx::start(SHOP);
    let dir = TempDir::new("shop");
    let file = write_shop(&dir, &shop_yaml(&nginx.url(""), ""));
    let (out, r) = run_json(&file, &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_matches_schema("result.schema.json", &r);
    // sessions work: the cart needs the token from the login's JSON and its cookie
    let cart = check(&r, "cart: status 200");
    assert!(cart["passes"].as_u64().unwrap() > 0, "{cart}");
    assert_eq!(cart["fails"], 0, "{cart}");
    assert_eq!(check(&r, "cart: body contains \"cart\"")["fails"], 0);
    assert_eq!(check(&r, "login: extract token")["fails"], 0);
    assert_eq!(check(&r, "GET /items/{{item}}: extract next")["fails"], 0);
    assert_eq!(check(&r, "GET {{next}}: sent")["fails"], 0);
    // stats per name, in the top level's shape
    for name in [
        "GET /index",
        "item page",
        "login",
        "GET /items/{{item}}",
        "GET {{next}}",
        "cart",
    ] {
        let n = by_name(&r, name);
        assert!(
            n["totals"]["completed"].as_u64().unwrap() > 0,
            "{name}: {n}"
        );
        assert_eq!(n["totals"]["ok"], n["totals"]["completed"], "{name}: {n}");
        assert!(n["latency_ms"]["p95"].as_f64().unwrap() > 0.0);
        assert!(n["response_bytes"]["max"].as_u64().unwrap() > 0);
    }
    let sum: u64 = r["by_name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["totals"]["completed"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, r["totals"]["completed"].as_u64().unwrap());
    // scenarios and thresholds
    let scenarios = r["by_scenario"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    assert!(scenarios
        .iter()
        .all(|s| s["iterations"].as_u64().unwrap() > 0));
    let thresholds = r["thresholds"].as_array().unwrap();
    assert_eq!(thresholds.len(), 3);
    assert!(
        thresholds.iter().all(|t| t["pass"] == true),
        "{thresholds:?}"
    );
    assert_eq!(r["workload"], file.as_str());
    // the text summary has the per-name table
    let text = stdout(&out);
    for want in [
        "name",
        "weight",
        "item page",
        "scenario   buy",
        "check ok   cart: status 200",
        "threshold ok   p95 < 300ms",
    ] {
        assert!(text.contains(want), "summary lacks {want:?}:\n{text}");
    }
}

#[test]
fn without_cookies_the_cart_check_fails_and_the_thresholds_exit_3() {
    let nginx = Nginx::start(SHOP);
    let dir = TempDir::new("shop-nocookie");
    let file = write_shop(&dir, &shop_yaml(&nginx.url(""), ", cookies: false"));
    let (out, r) = run_json(&file, &dir);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let cart = check(&r, "cart: status 200");
    assert_eq!(cart["passes"], 0, "{cart}");
    assert!(cart["fails"].as_u64().unwrap() > 0);
    assert!(cart["sample"].as_str().unwrap().contains("403"), "{cart}");
    assert_eq!(
        by_name(&r, "cart")["status"]["403"],
        by_name(&r, "cart")["totals"]["completed"]
    );
    let errors = r["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["expression"] == "errors < 1%")
        .unwrap();
    assert_eq!(errors["pass"], false, "{errors}");
    assert!(stdout(&out).contains("threshold FAIL errors < 1%"));
}

#[test]
fn a_failed_extraction_fails_its_request_and_later_steps_are_reported_not_sent() {
    let nginx = Nginx::start(SHOP);
    let dir = TempDir::new("unset");
    let yaml = format!(
        r#"
target: {}
load: {{ model: closed, users: 2, iterations: 10 }}
scenarios:
  - name: lost
    steps:
      - get: /plain
        extract: {{ next: {{ regex: 'href="(/items/\d+)"' }} }}
      - get: "{{{{next}}}}"
      - get: /old
        follow_redirects: true
        check: {{ status: 200 }}
"#,
        nginx.url("")
    );
    let file = dir.path("lost.yaml");
    std::fs::write(&file, yaml).unwrap();
    let (out, r) = run_json(file.to_str().unwrap(), &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(r["warmup"]["requests"], 0, "no warm-up asked, none counted");
    let plain = by_name(&r, "GET /plain");
    assert_eq!(plain["totals"]["completed"], 10);
    assert_eq!(
        plain["totals"]["failed"], 10,
        "no link found: the request failed"
    );
    let never = by_name(&r, "GET {{next}}");
    assert_eq!(
        never["totals"]["completed"], 0,
        "never sent with a literal {{{{next}}}}"
    );
    assert_eq!(never["totals"]["errors"], 0);
    let sent = check(&r, "GET {{next}}: sent");
    assert_eq!(
        (sent["passes"].as_u64(), sent["fails"].as_u64()),
        (Some(0), Some(10))
    );
    assert!(
        sent["sample"]
            .as_str()
            .unwrap()
            .contains("{{next}} is unset"),
        "{sent}"
    );
    // redirects followed when asked: the 302 and the page it points to, the check on the page
    let old = by_name(&r, "GET /old");
    assert_eq!(old["status"]["302"], 10, "{old}");
    assert_eq!(old["status"]["200"], 10, "{old}");
    assert_eq!(check(&r, "GET /old: status 200")["fails"], 0);
}

#[test]
fn broken_files_are_refused_with_every_problem_and_nothing_is_sent() {
    let dir = TempDir::new("bad");
    std::fs::write(dir.path("users.csv"), "user,password\nalice,a1\n").unwrap();
    let bad = r#"target: http://127.0.0.1:9
load: { model: closed, users: 10, duration: 10 parsecs }
data:
  users: { csv: users.csv }
  more: { csv: missing.csv }
scenarios:
  - name: browse
    weight: 0
    stpes:
      - get: /
  - name: buy
    steps:
      - get: /u/{{usr.name}}
      - get: /p/{{users.pasword}}
thresholds: ["p95 < 3 parsecs"]
"#;
    let file = dir.path("bad.yaml");
    std::fs::write(&file, bad).unwrap();
    let f = file.display().to_string();
    for cmd in ["validate", "run"] {
        let out = run_herd(&[cmd, &f]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = stderr(&out);
        let missing = dir.path("missing.csv").display().to_string();
        for want in [
            format!("{f}:2:45: duration: `10 parsecs` is not a duration"),
            format!("{f}:5:16: cannot read the CSV file {missing}"),
            format!("{f}:8:13: a weight of 0 would never run this scenario"),
            format!("{f}:9:5: unknown key `stpes` in a scenario (did you mean `steps`?)"),
            format!("{f}:13:17: `{{{{usr.name}}}}` names no data source or extracted variable (did you mean `users`?"),
            format!("{f}:14:17: `{{{{users.pasword}}}}`: the CSV file of `users` has no column `pasword` (did you mean `password`?)"),
            format!("{f}:15:14: threshold column 7: in `p95 < 3 parsecs`: `3 parsecs` is not a duration"),
        ] {
            assert!(err.contains(&want), "{cmd}: missing {want:?} in:\n{err}");
        }
        assert!(stdout(&out).is_empty(), "nothing ran");
    }
}

/// `herd run FILE.yaml` could not aim at another host and refused `-d`, `-c`, `--rate` beside
/// the file: the command line wins over the file's `load:` and `target:` (k6's order,
/// Artillery's `--target`), and the summary says so.
#[test]
fn load_flags_and_target_beside_a_file_win_over_it_and_are_said() {
    let server = mock(&["/*"]);
    let dir = TempDir::new("overrides");
    let file = dir.path("long.yaml");
    std::fs::write(
        &file,
        "target: http://127.0.0.1:9\nload: { model: closed, users: 50, duration: 10m }\n\
         scenarios: [{ name: home, steps: [{ get: /home }] }]\n",
    )
    .unwrap();
    let url = format!("http://{}", server.local_addr());
    let ran = Herd::new(&[
        "run",
        file.to_str().unwrap(),
        "--target",
        &url,
        "-n",
        "20",
        "-c",
        "2",
        "-t",
        "1",
    ])
    .json(&dir.path("r.json"))
    .run();
    ran.measured();
    let out = ran.stdout();
    for said in [
        format!("target {url}/ from the command line; the file says http://127.0.0.1:9"),
        "20 iterations from the command line; the file says 10m".to_owned(),
        "2 users from the command line; the file says 50 users".to_owned(),
    ] {
        assert!(out.contains(&said), "{said:?} in:\n{out}");
    }
    let r = ran.json();
    assert_eq!(r["totals"]["completed"], 20, "{}", r["totals"]);
    assert_eq!(r["config"]["connections"], 2, "{}", r["config"]);
    assert_eq!(server.shutdown().requests, 20);
    // --target aims a file: beside a URL it is refused, saying how to write it.
    refused(&["run", "--target", &url, &url], "--target");
}

/// `scenarios: []` passed validate and then panicked in run ("cannot sample empty range").
#[test]
fn an_empty_scenarios_list_is_refused_at_its_line() {
    let dir = TempDir::new("noscenarios");
    let file = dir.path("empty.yaml");
    std::fs::write(
        &file,
        "target: http://127.0.0.1:9\nload: { users: 1, duration: 1s }\nscenarios: []\n",
    )
    .unwrap();
    let f = file.display().to_string();
    for cmd in ["validate", "run"] {
        let out = run_herd(&[cmd, &f]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains(&format!("{f}:3:12: `scenarios` is empty")),
            "{cmd}: {err}"
        );
        assert!(!err.contains("panicked"), "{cmd}: {err}");
    }
}

#[test]
fn the_example_in_the_repository_validates() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/shop.yaml");
    let out = run_herd(&["validate", example]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("2 scenarios, 6 request names"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn siege_url_files_walk_their_urls() {
    let nginx = Nginx::start(SHOP);
    let dir = TempDir::new("urls");
    let urls = format!(
        "# siege format\n{}\n{} POST user=alice&password=a1\n\n{}/items/7\n",
        nginx.url("/index"),
        nginx.url("/login"),
        nginx.addr
    );
    let file = dir.path("urls.txt");
    std::fs::write(&file, urls).unwrap();
    let json = dir.path("r.json");
    let r = Herd::new(&["run", "-n", "30", "-c", "3", "-t", "1", "-q"])
        .file("-f", &file)
        .json(&json)
        .run()
        .code(0)
        .json();
    assert_eq!(r["totals"]["completed"], 30);
    assert_eq!(r["totals"]["ok"], 30);
    for name in [
        format!("GET {}", nginx.url("/index")),
        format!("POST {}", nginx.url("/login")),
    ] {
        assert_eq!(by_name(&r, &name)["totals"]["completed"], 10, "{name}");
    }
    // a bad line is reported with its place
    std::fs::write(
        &file,
        format!("{}\n{} FETCH x\n", nginx.url("/"), nginx.url("/")),
    )
    .unwrap();
    let out = run_herd(&["run", "-f", file.to_str().unwrap(), "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(":2:") && stderr(&out).contains("`FETCH` is not a method"),
        "{}",
        stderr(&out)
    );
}
