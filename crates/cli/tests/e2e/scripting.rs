//! `herd run -s script.lua`: wrk's own example scripts (Debian's wrk package ships them) run
//! unchanged against a real nginx and do what they do under wrk; a script's errors name its
//! file and line.

use crate::common::*;
use std::path::PathBuf;

/// wrk's example scripts, as Debian installs them.
fn wrk_script(name: &str) -> String {
    let p = PathBuf::from("/usr/share/doc/wrk/examples/scripts").join(format!("{name}.lua"));
    assert!(
        p.exists(),
        "{} is missing: run `scripts/check` (it installs Debian's wrk, which ships wrk's example \
         scripts)",
        p.display()
    );
    p.display().to_string()
}

/// nginx logging what each request carried: method, URI, body length and the headers the
/// scripts set; `/authenticate` hands out a token as auth.lua expects.
fn logging_nginx() -> Nginx {
    Nginx::start_configured(
        r#"log_format scripts '$request_method $request_uri len=$content_length type=$content_type counter=$http_x_counter token=$http_x_token';"#,
        r#"access_log requests.log scripts;
        location = /authenticate { add_header X-Token secret-42; return 200 "ok\n"; }"#,
        "",
    )
}

fn logged(nginx: &Nginx) -> Vec<String> {
    std::fs::read_to_string(nginx.dir.path("requests.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn run_script(nginx: &Nginx, name: &str, load: &[&str]) -> (String, serde_json::Value) {
    let dir = TempDir::new(&format!("lua-{name}"));
    let script = wrk_script(name);
    let ran = Herd::new(&["run", "-q", "-s", &script])
        .args(load)
        .args(&[&nginx.url("/")])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(0).json();
    (ran.stdout(), r)
}

#[test]
fn wrk_setup_and_done_see_every_thread_and_its_counts() {
    let nginx = logging_nginx();
    let (out, r) = run_script(&nginx, "setup", &["-c", "4", "-t", "2", "-n", "400"]);
    assert!(out.contains("thread 1 created"), "{out}");
    assert!(out.contains("thread 2 created"), "{out}");
    // done() reads each thread's globals back: the responses add up to what herd counted.
    let mut responses = 0;
    for line in out.lines().filter(|l| l.contains(" made ")) {
        let n: Vec<u64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        responses += n[2];
    }
    assert_eq!(responses, 400, "{out}");
    assert_eq!(r["totals"]["completed"], 400);
    assert_eq!(logged(&nginx).len(), 400);
    assert_eq!(r["script"]["file"], wrk_script("setup"));
}

#[test]
fn wrk_report_prints_latency_percentiles_as_csv() {
    let nginx = logging_nginx();
    let (out, r) = run_script(&nginx, "report", &["-c", "2", "-t", "1", "-n", "300"]);
    let csv: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("-----"))
        .collect();
    assert_eq!(csv.len(), 5, "{out}");
    let p99: u64 = csv[3].strip_prefix("99%,").expect("99%,N").parse().unwrap();
    // wrk's unit is the microsecond: the same p99 herd reports in milliseconds.
    let herd_p99 = r["latency_ms"]["p99"].as_f64().unwrap() * 1000.0;
    assert!(
        (p99 as f64 - herd_p99).abs() <= herd_p99 * 0.02 + 2.0,
        "{p99} us vs {herd_p99} us"
    );
}

#[test]
fn wrk_post_counter_and_auth_send_what_the_scripts_build() {
    let nginx = logging_nginx();
    run_script(&nginx, "post", &["-c", "1", "-t", "1", "-n", "5"]);
    let log = logged(&nginx);
    assert_eq!(log.len(), 5);
    assert!(
        log.iter()
            .all(|l| l == "POST / len=16 type=application/x-www-form-urlencoded counter=- token=-"),
        "{log:?}"
    );

    let nginx = logging_nginx();
    run_script(&nginx, "counter", &["-c", "1", "-t", "1", "-n", "5"]);
    // wrk calls request() once per thread to check it before the run: the first sent is /1.
    let uris: Vec<String> = logged(&nginx)
        .iter()
        .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(uris, ["GET /1", "GET /2", "GET /3", "GET /4", "GET /5"]);
    assert!(logged(&nginx)[0].contains("counter=1"));

    let nginx = logging_nginx();
    run_script(&nginx, "auth", &["-c", "1", "-t", "1", "-n", "4"]);
    let log = logged(&nginx);
    assert!(log[0].starts_with("GET /authenticate "), "{log:?}");
    assert!(
        log[1..]
            .iter()
            .all(|l| l.starts_with("GET /resource ") && l.ends_with("token=secret-42")),
        "{log:?}"
    );
}

#[test]
fn wrk_pipeline_sends_its_three_requests_each_time() {
    let nginx = logging_nginx();
    let (_, r) = run_script(&nginx, "pipeline", &["-c", "1", "-t", "1", "-n", "10"]);
    let uris: Vec<String> = logged(&nginx)
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(uris.len(), 30, "{uris:?}");
    assert_eq!(&uris[..3], ["/?foo", "/?bar", "/?baz"]);
    for uri in ["/?foo", "/?bar", "/?baz"] {
        assert_eq!(uris.iter().filter(|u| *u == uri).count(), 10, "{uris:?}");
    }
    // Every response counted, and the three went on the one connection as a pipeline (the
    // engine's window of 3), as under wrk.
    assert_eq!(r["totals"]["completed"], 30);
    assert_eq!(r["totals"]["ok"], 30);
    assert_eq!(r["config"]["pipeline"], 3);
    assert_eq!(r["generator"]["connections_opened"], 1);
}

#[test]
fn wrk_stop_ends_the_thread_after_100_responses() {
    let nginx = logging_nginx();
    // Without stop() this would run for a minute.
    let (out, r) = run_script(&nginx, "stop", &["-c", "1", "-t", "1", "-d", "60s"]);
    assert_eq!(r["totals"]["completed"], 100);
    assert_eq!(logged(&nginx).len(), 100);
    // The result said 60.00 s and 1.7 req/s, with 59 empty seconds that never happened.
    let took = r["duration_s"].as_f64().unwrap();
    assert!(
        took < 10.0,
        "the run took {took} s of a planned 60 s:\n{out}"
    );
    let rps = r["throughput_rps"].as_f64().unwrap();
    assert!(
        (rps - 100.0 / took).abs() < 1e-6 * rps,
        "{rps} req/s in {took} s"
    );
    assert!(
        r["timeline"].as_array().unwrap().len() <= took.ceil() as usize,
        "{}",
        r["timeline"]
    );
    assert!(!out.contains("60.00 s") && !out.contains("1m"), "{out}");
}

#[test]
fn wrk_addr_and_delay_pick_an_address_and_pause() {
    let nginx = logging_nginx();
    let (out, _) = run_script(&nginx, "addr", &["-c", "2", "-t", "2", "-n", "20"]);
    let want = format!("thread addr: {}", nginx.addr);
    assert_eq!(out.matches(&want).count(), 2, "{out}");

    let (_, r) = run_script(&nginx, "delay", &["-c", "2", "-t", "1", "-n", "20"]);
    assert_eq!(r["totals"]["completed"], 20);
    // Ten requests per user, each after 10 to 50 ms.
    assert!(
        r["duration_s"].as_f64().unwrap() >= 0.1,
        "{}",
        r["duration_s"]
    );
}

#[test]
fn script_arguments_after_the_dashes_reach_init() {
    let nginx = logging_nginx();
    let dir = TempDir::new("lua-args");
    let script = dir.path("args.lua");
    std::fs::write(
        &script,
        "function init(args) wrk.path = '/' .. args[1] .. '/' .. args[2] .. '?' .. args[0] end\n",
    )
    .unwrap();
    Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "3"])
        .file("-s", &script)
        .args(&[&nginx.url("/"), "--", "alpha", "beta"])
        .run()
        .code(0);
    let want = format!("GET /alpha/beta?{} ", nginx.url("/"));
    let log = logged(&nginx);
    assert!(
        log.len() == 3 && log.iter().all(|l| l.starts_with(&want)),
        "{log:?}"
    );
}

#[test]
fn a_lua_error_in_init_stops_before_any_load_naming_file_and_line() {
    let nginx = logging_nginx();
    let dir = TempDir::new("lua-init-error");
    let script = dir.path("broken.lua");
    std::fs::write(
        &script,
        "-- a comment\nfunction init(args)\n  error('no token')\nend\n",
    )
    .unwrap();
    let ran = Herd::new(&["run", "-c", "1", "-t", "1", "-n", "3"])
        .file("-s", &script)
        .args(&[&nginx.url("/")])
        .run();
    ran.code(2);
    let err = ran.stderr();
    assert!(
        err.contains("broken.lua:3:") && err.contains("no token"),
        "{err}"
    );
    assert!(logged(&nginx).is_empty(), "nothing may be sent");

    std::fs::write(&script, "function request(\n").unwrap();
    let ran = Herd::new(&["run", "-n", "3"])
        .file("-s", &script)
        .args(&[&nginx.url("/")])
        .run();
    ran.code(2);
    assert!(ran.stderr().contains("broken.lua:"), "{}", ran.stderr());
}

/// A `response()` that raised counted `errors lua 5` beside `totals.errors: 0`: its
/// responses are errors in every total, and the server still answered them (exit 0).
#[test]
fn a_lua_error_during_the_run_is_counted_as_an_error_class() {
    let nginx = logging_nginx();
    let dir = TempDir::new("lua-run-error");
    let script = dir.path("fails.lua");
    std::fs::write(
        &script,
        "function response(status)\n  error('bad ' .. status)\nend\n",
    )
    .unwrap();
    let r = Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "5"])
        .file("-s", &script)
        .args(&[&nginx.url("/")])
        .json(&dir.path("r.json"))
        .run()
        .code(0)
        .json();
    assert_eq!(r["errors"]["lua"], 5);
    assert_eq!(r["totals"]["errors"], 5, "{}", r["totals"]);
    assert_eq!(r["totals"]["sent"], 5, "{}", r["totals"]);
    assert!(
        r["warnings"].as_array().is_none_or(|w| w.is_empty()),
        "{}",
        r["warnings"]
    );
    let sample = r["error_samples"]["lua"].as_str().unwrap();
    assert!(
        sample.contains("fails.lua:2:") && sample.contains("bad 200"),
        "{sample}"
    );
}
