//! `herd model --har`: a session recorded in headless Chromium (Debian's, driven over the
//! DevTools protocol by puppeteer-core, written as HAR by chrome-har as browser tools do) on a
//! small site with sessions (`har/site.py`: a login form with a CSRF token, an orders API, order
//! pages by id) becomes a workload that `herd validate` accepts and that runs against the same
//! site, each virtual user with its own token and order ids. `scripts/check` installs Node,
//! Chromium and the recorder's packages (`har/recorder`).

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PASSWORD: &str = "s3cret";

fn here(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/har")
        .join(name)
}

/// The site, on a free loopback port it reports once listening.
struct Site {
    child: Child,
    base: String,
}

impl Site {
    fn start() -> Site {
        let mut child = Command::new("python3")
            .arg(here("site.py"))
            .arg(PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the test site");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let port = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the site reports its port");
        Site {
            child,
            base: format!("http://127.0.0.1:{}", port.trim()),
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Logs in, opens the account page (whose script asks the API for the orders) and follows the
/// link to the order, in headless Chromium; returns the HAR it wrote.
fn record(site: &Site, dir: &TempDir) -> PathBuf {
    let recorder = here("recorder");
    assert!(
        recorder.join("node_modules/puppeteer-core").is_dir(),
        "the HAR recorder's packages are not installed: run `scripts/check` (it installs them) or `npm ci --prefix {}`",
        recorder.display()
    );
    let har = dir.path("session.har");
    let mut child = Command::new("node")
        .arg(recorder.join("record.mjs"))
        .arg(crate::quiet::browser::chromium())
        .arg(&site.base)
        .arg(&har)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs the HAR recorder");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the HAR recorder did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "recorder: {}", stderr(&out));
    har
}

fn model(har: &Path, yaml: &Path, more: &[&str]) -> String {
    let mut args = vec![
        "model",
        "--har",
        har.to_str().unwrap(),
        "-o",
        yaml.to_str().unwrap(),
    ];
    args.extend(more);
    let out = run_herd(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

/// The recorded pauses add up to one pass through the session; the run lasts that and more,
/// so each user finishes an iteration however slowly the browser went.
fn session_ms(yaml: &str) -> u64 {
    yaml.lines()
        .filter_map(|l| l.trim().strip_prefix("- think: "))
        .map(|t| t.split("ms").next().unwrap().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn a_recorded_session_becomes_a_workload_that_runs_against_the_site() {
    let _turn = one_at_a_time();
    let site = Site::start();
    let dir = TempDir::new("har");
    let har = record(&site, &dir);
    let yaml_path = dir.path("session.yaml");
    model(&har, &yaml_path, &[]);
    let seconds = session_ms(&std::fs::read_to_string(&yaml_path).unwrap()) / 1000 + 3;
    let duration = format!("{seconds}s");
    let said = model(&har, &yaml_path, &["--users", "2", "--duration", &duration]);
    assert!(said.contains("-e HAR_PASSWORD=..."), "{said}");
    let yaml = std::fs::read_to_string(&yaml_path).unwrap();

    // the password stays out; the token and the id come from each user's own responses
    assert!(!yaml.contains(PASSWORD), "{yaml}");
    assert!(
        yaml.contains("'password': '{{env.HAR_PASSWORD}}'"),
        "{yaml}"
    );
    assert!(yaml.contains("'csrf': '{{csrf}}'"), "{yaml}");
    assert!(yaml.contains("- get: '/orders/{{order_id}}'"), "{yaml}");
    assert!(yaml.contains("follow_redirects: true"), "{yaml}");
    assert!(
        yaml.contains("static files"),
        "the stylesheet is left out: {yaml}"
    );
    assert!(yaml.contains(&format!("target: {}", site.base)), "{yaml}");

    let file = yaml_path.to_str().unwrap();
    refused(&["validate", file], "HAR_PASSWORD is not set");
    let ok = run_herd(&["validate", "-e", "HAR_PASSWORD=s3cret", file]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));

    let r = Herd::new(&["run", "-e", "HAR_PASSWORD=s3cret", file])
        .json(&dir.path("run.json"))
        .run();
    r.code(0);
    let r = r.json();
    for c in r["checks"].as_array().unwrap() {
        assert_eq!(c["fails"], 0, "{c}");
    }
    for name in [
        "GET /login: extract csrf",
        "POST /login: status 200",
        "GET /api/orders: extract order_id",
        "GET /orders/{{order_id}}: status 200",
    ] {
        assert!(
            check(&r, name)["passes"].as_u64().unwrap() >= 1,
            "{name}: {}",
            r["checks"]
        );
    }

    // The site refuses a token it did not give this session: the recorded one fails the login.
    let recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
    let token = recorded["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["request"]["postData"]["params"].as_array())
        .flatten()
        .find(|p| p["name"] == "csrf")
        .and_then(|p| p["value"].as_str())
        .expect("the login form's token in the HAR")
        .to_owned();
    let stale = dir.path("stale.yaml");
    std::fs::write(&stale, yaml.replace("'{{csrf}}'", &format!("'{token}'"))).unwrap();
    let r = Herd::new(&["run", "-e", "HAR_PASSWORD=s3cret", stale.to_str().unwrap()])
        .json(&dir.path("stale.json"))
        .run();
    let r = r.json();
    let login = check(&r, "POST /login: status 200");
    assert_eq!(login["passes"], 0, "{login}");
    assert!(login["fails"].as_u64().unwrap() >= 1, "{login}");
}

#[test]
fn a_damaged_har_file_is_refused_with_where_and_why() {
    let dir = TempDir::new("har-bad");
    let out = dir.path("w.yaml");
    let out = out.to_str().unwrap();
    let bad = dir.path("bad.har");
    std::fs::write(&bad, "{\"log\": {\"entries\": [{\"request\": 1}]}}").unwrap();
    let bad = bad.to_str().unwrap();
    refused(
        &["model", "--har", bad, "-o", out],
        "bad.har: not a HAR file: log.entries[0]",
    );
    refused(
        &["model", "--har", "/nonexistent.har", "-o", out],
        "cannot read /nonexistent.har",
    );
    refused(
        &["model", "--har", bad, "--scale", "2x", "-o", out],
        "'--har <FILE.har>' cannot be used with '--scale <FACTOR>'",
    );
    refused(
        &["model", "access.log", "--users", "3", "-o", out],
        "--users is for --har",
    );
    assert!(!Path::new(out).exists(), "nothing written");
}
