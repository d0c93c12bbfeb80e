//! The split itself: four shards on one machine send exactly the single run's schedule, and
//! shards never play the same user (a server that refuses a second concurrent login).

use super::spawn_shard;
use crate::common::*;

/// A shard that ran to its end: exit 0, or 4 when it judged itself the bottleneck (several
/// shards and nginx on two busy cores may be); what these tests count is exact either way.
fn measured(o: &std::process::Output) {
    assert!(
        matches!(o.status.code(), Some(0 | 4)),
        "exit {:?}: {}",
        o.status.code(),
        stderr(o)
    );
}

#[test]
fn four_shards_on_one_machine_send_exactly_the_single_runs_schedule() {
    let nginx = crate::common::Nginx::start("");
    let url = nginx.url("/");
    let dir = TempDir::new("four-shards");
    let load = ["--rate", "2000", "-d", "3s", "-c", "200"];
    let single = dir.path("single.json");
    let o = spawn_shard(&url, &load, None, &single)
        .wait_with_output()
        .unwrap();
    measured(&o);
    let jsons: Vec<_> = (0..4)
        .map(|i| dir.path(&format!("shard-{i}.json")))
        .collect();
    let children: Vec<_> = (0..4)
        .map(|i| spawn_shard(&url, &load, Some((i, 4)), &jsons[i as usize]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        measured(&o);
    }
    let one = read_json(&single);
    let parts: Vec<_> = jsons.iter().map(|j| read_json(j)).collect();
    // Each shard sent its own quarter of the arrivals, not the whole plan.
    for p in &parts {
        assert_eq!(p["totals"]["scheduled"], 1500, "{}", p["totals"]);
    }
    let total = dir.path("total.json");
    let back = dir.path("back.json");
    let paths: Vec<&str> = jsons.iter().map(|j| j.to_str().unwrap()).collect();
    let reversed: Vec<&str> = paths.iter().rev().copied().collect();
    for (order, out) in [(&paths, &total), (&reversed, &back)] {
        let mut args = vec!["merge"];
        args.extend(order.iter());
        args.extend(["-o", out.to_str().unwrap()]);
        let o = run_herd(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read(&total).unwrap(),
        std::fs::read(&back).unwrap()
    );
    let m = read_json(&total);
    for k in ["scheduled", "sent", "completed", "ok"] {
        assert_eq!(m["totals"][k], one["totals"][k], "{k}: merged vs single");
    }
    assert_eq!(m["totals"]["scheduled"], 6000);
    assert_eq!(m["latency_ms"]["count"], one["latency_ms"]["count"]);
    // The same server at the same rate: the medians agree within loopback jitter (the merged
    // percentiles are recomputed from the added histograms; merge's own tests prove that exact).
    let (a, b) = (
        m["latency_ms"]["p50"].as_f64().unwrap(),
        one["latency_ms"]["p50"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() <= 1.0 + 0.5 * b,
        "p50: merged {a} ms, single {b} ms"
    );
}

/// Logins seen and refused by [`login_server`].
#[derive(Default)]
struct Logins {
    active: std::collections::HashSet<String>,
    seen: std::collections::BTreeSet<String>,
    refused: u64,
}

/// A server that refuses (409) a second concurrent login of the same user: `POST /login` and
/// `POST /logout` with a form body `user=NAME`.
fn login_server() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::Mutex<Logins>>,
) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let state = std::sync::Arc::new(std::sync::Mutex::new(Logins::default()));
    let shared = std::sync::Arc::clone(&state);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let state = std::sync::Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&pending[..end]).to_string();
                    let len = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if pending.len() < end + 4 + len {
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    }
                    let body =
                        String::from_utf8_lossy(&pending[end + 4..end + 4 + len]).to_string();
                    pending.drain(..end + 4 + len);
                    let user = body.strip_prefix("user=").unwrap_or_default().to_owned();
                    let mut s = state.lock().unwrap();
                    let code = if head.starts_with("POST /login") {
                        if s.active.insert(user.clone()) {
                            s.seen.insert(user);
                            200
                        } else {
                            s.refused += 1;
                            409
                        }
                    } else {
                        s.active.remove(&user);
                        200
                    };
                    drop(s);
                    let reply = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
                    if conn.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, state)
}

#[test]
fn shards_never_log_in_as_the_same_user() {
    let (addr, logins) = login_server();
    let dir = TempDir::new("shard-logins");
    let users: String = (0..10).map(|i| format!("user{i}\n")).collect();
    std::fs::write(dir.path("users.csv"), format!("user\n{users}")).unwrap();
    let plan = dir.path("logins.yaml");
    std::fs::write(
        &plan,
        format!(
            "target: http://{addr}
load: {{ model: closed, users: 10, duration: 2s }}
data: {{ users: {{ csv: users.csv, pick: per-user }} }}
scenarios:
  - name: session
    steps:
      - post: /login
        form: {{ user: \"{{{{users.user}}}}\" }}
      - think: 20ms
      - post: /logout
        form: {{ user: \"{{{{users.user}}}}\" }}
"
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap().to_owned();
    let children: Vec<_> = (0..3)
        .map(|i| {
            Herd::new(&["run", &plan, "-q", "--shard", &format!("{i}/3")])
                .args(&["--start-at", "+2s", "--bind", &format!("127.0.0.{}", i + 2)])
                .spawn()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        measured(&o);
    }
    let l = logins.lock().unwrap();
    assert_eq!(l.refused, 0, "two shards logged in as the same user");
    assert_eq!(
        l.seen.len(),
        10,
        "every user played, by one shard each: {:?}",
        l.seen
    );
}

/// `--shard 0/100000000` took gigabytes and tens of seconds before sending anything; a shard
/// with no share of the users exited 6 as if nothing had answered; its result filled stdout as
/// base64. Now: a clear refusal, an exit 0 that says why nothing was sent, and stdout for people.
#[test]
fn shards_cost_their_share_and_a_shard_with_no_share_says_so() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    refused(
        &["run", "-n", "1", "--shard", "0/100000000", &url],
        "more than herd splits a run into (100000)",
    );
    let ran = Herd::new(&["run", "-q", "-c", "2", "-d", "1s", "--shard", "3/4", &url]).run();
    ran.code(0);
    assert!(
        ran.stderr().contains("shard 3/4 has no share of this run"),
        "{}",
        ran.stderr()
    );
    assert!(ran.stderr().contains("-----BEGIN HERD RESULT 3/4-----"));
    assert!(!ran.stdout().contains("HERD RESULT"), "{}", ran.stdout());
    assert_eq!(s.stats().requests, 0, "the empty shard sent nothing");
}

/// docs/distributed.md promises two shards never log in as the same user; with fewer
/// per-user rows than users (8 shards over 4 rows) they did. Refused before the start instant.
#[test]
fn a_per_user_csv_with_fewer_rows_than_users_is_refused_for_shards() {
    let s = mock(&["/*"]);
    let dir = TempDir::new("shard-rows");
    std::fs::write(dir.path("users.csv"), "user\na\nb\nc\nd\n").unwrap();
    let plan = dir.path("rows.yaml");
    std::fs::write(
        &plan,
        format!(
            "target: http://{}\nload: {{ model: closed, users: 8, duration: 1s }}\n\
             data: {{ users: {{ csv: users.csv, pick: per-user }} }}\n\
             scenarios:\n  - name: s\n    steps:\n      - get: /{{{{users.user}}}}\n",
            s.local_addr()
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let out = refused(
        &["run", plan, "--shard", "0/8", "--start-at", "+30s"],
        "data `users` has 4 rows for 8 users over 8 shards",
    );
    assert!(
        !stderr(&out).contains("ready, starting at"),
        "refused before the wait"
    );
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

#[test]
fn a_poisson_plan_split_into_shards_sends_exactly_the_single_plans_arrivals() {
    let nginx = crate::common::Nginx::start("");
    let url = nginx.url("/");
    let dir = TempDir::new("poisson-shards");
    let load = [
        "--rate",
        "500",
        "-d",
        "2s",
        "-c",
        "100",
        "--arrivals",
        "poisson",
        "--seed",
        "42",
    ];
    let single = dir.path("single.json");
    let o = spawn_shard(&url, &load, None, &single)
        .wait_with_output()
        .unwrap();
    measured(&o);
    let one = read_json(&single);
    assert_eq!(
        one["config"]["arrivals"],
        serde_json::json!({"process": "poisson", "seed": 42})
    );
    // A Poisson count: 1,000 expected, 32 the standard deviation; an even plan has exactly 1,000.
    let n = one["totals"]["scheduled"].as_u64().unwrap();
    assert!((870..=1130).contains(&n) && n != 1000, "{n}");
    let jsons: Vec<_> = (0..3).map(|i| dir.path(&format!("p-{i}.json"))).collect();
    let children: Vec<_> = (0..3)
        .map(|i| spawn_shard(&url, &load, Some((i, 3)), &jsons[i as usize]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        measured(&o);
    }
    let total = dir.path("total.json");
    let mut args = vec!["merge"];
    args.extend(jsons.iter().map(|j| j.to_str().unwrap()));
    args.extend(["-o", total.to_str().unwrap()]);
    let o = run_herd(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The same seed on every shard: together they play the single plan's arrivals, no more, no
    // fewer (the instants themselves are the engine's test).
    assert_eq!(read_json(&total)["totals"]["scheduled"], n);
}
