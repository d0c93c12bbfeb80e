//! The workload language against a fake transport under a paused clock: what goes on the wire,
//! sessions, the scenario mix, the open model, profiles.

use crate::common::{compile_in, ok, run_on, Fake};
use herd_workload::Workload;

/// Compiles `src` beside a users CSV of its own.
fn compile(src: &str) -> Workload {
    compile_in(
        src,
        &[(
            "herd-language-users.csv",
            "user,password\nalice,a 1\nbob,b&2\n",
        )],
    )
}

#[test]
fn the_scenario_mix_follows_the_weights() {
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 3000 }
scenarios:
  - { name: a, weight: 60, steps: [ { get: /a } ] }
  - { name: b, weight: 30, steps: [ { get: /b } ] }
  - { name: c, weight: 10, steps: [ { get: /c } ] }
",
    );
    let t = run_on(&w, Fake::new(|_, _| ok(""))).script;
    let counts: Vec<u64> = t.scenarios.iter().map(|s| s.iterations).collect();
    assert_eq!(counts.iter().sum::<u64>(), 3000);
    for (got, share) in counts.iter().zip([0.6, 0.3, 0.1]) {
        let want = 3000.0 * share;
        assert!((*got as f64 - want).abs() < 90.0, "{counts:?}");
    }
    // seeded: the same file gives the same mix
    let again = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 3000 }
scenarios:
  - { name: a, weight: 60, steps: [ { get: /a } ] }
  - { name: b, weight: 30, steps: [ { get: /b } ] }
  - { name: c, weight: 10, steps: [ { get: /c } ] }
",
    );
    let counts2: Vec<u64> = run_on(&again, Fake::new(|_, _| ok("")))
        .script
        .scenarios
        .iter()
        .map(|s| s.iterations)
        .collect();
    assert_eq!(counts, counts2);
}

#[test]
fn requests_go_out_as_written() {
    let w = compile(
        r#"target: http://127.0.0.1:1
defaults: { headers: { Accept: text/html, X-Team: perf } }
load: { model: closed, users: 1, iterations: 1 }
data: { users: { csv: herd-language-users.csv, pick: per-user } }
scenarios:
  - name: s
    steps:
      - post: /login
        form: { user: "{{users.user}}", password: "{{users.password}}" }
      - get: /search
        query: { q: "{{users.password}}", page: 2, s: "a b" }
        headers: { X-Team: "own {{users.user}}" }
      - put: /items/1
        json: { name: "say \"{{users.user}}\"", n: 3, tags: [a, true], none: null }
      - delete: /raw
        body: "plain {{users.user}}"
"#,
    );
    let fake = Fake::new(|_, _| ok(""));
    run_on(&w, fake.clone());
    let r = fake.requests();
    assert_eq!(r.len(), 4, "{r:?}");
    assert!(r[0].starts_with("POST /login HTTP/1.1\r\n"), "{}", r[0]);
    assert!(r[0].contains("Accept: text/html\r\nX-Team: perf\r\nContent-Type: application/x-www-form-urlencoded\r\n"), "{}", r[0]);
    assert!(
        r[0].ends_with("\r\n\r\nuser=alice&password=a%201"),
        "{}",
        r[0]
    );
    assert!(
        r[1].starts_with("GET /search?q=a%201&page=2&s=a%20b HTTP/1.1\r\n"),
        "{}",
        r[1]
    );
    assert!(
        r[1].contains("X-Team: own alice\r\n") && !r[1].contains("perf"),
        "{}",
        r[1]
    );
    assert!(
        r[2].contains("Content-Type: application/json\r\n"),
        "{}",
        r[2]
    );
    assert!(
        r[2].ends_with(r#"{"name":"say \"alice\"","n":3,"tags":["a",true],"none":null}"#),
        "{}",
        r[2]
    );
    assert!(r[3].ends_with("\r\n\r\nplain alice"), "{}", r[3]);
}

#[test]
fn each_user_keeps_its_own_cookies_and_variables() {
    let w = compile(
        r#"target: http://127.0.0.1:1
load: { model: closed, users: 3, iterations: 3 }
scenarios:
  - name: s
    steps:
      - get: /login
        extract: { token: { json: "$.token" } }
      - get: /cart
        headers: { Authorization: "Bearer {{token}}" }
"#,
    );
    // the n-th login gets session n and token tn
    let fake = Fake::new(|req, n| {
        if req.starts_with("GET /login") {
            let headers = vec![("Set-Cookie".to_owned(), format!("sid={n}; Path=/"))];
            (200, headers, format!(r#"{{"token":"t{n}"}}"#))
        } else {
            ok("cart")
        }
    });
    run_on(&w, fake.clone());
    let r = fake.requests();
    assert_eq!(r.len(), 6);
    for (i, req) in r.iter().enumerate() {
        if req.starts_with("GET /cart") {
            // the cookie and token of the login this user made, not another user's
            let cookie = req
                .split("Cookie: sid=")
                .nth(1)
                .unwrap()
                .split("\r\n")
                .next()
                .unwrap();
            let token = req
                .split("Bearer t")
                .nth(1)
                .unwrap()
                .split("\r\n")
                .next()
                .unwrap();
            assert_eq!(cookie, token, "request {i}: {req}");
        }
    }
    let fresh = r
        .iter()
        .filter(|q| q.starts_with("GET /login") && !q.contains("Cookie:"));
    assert!(fresh.count() >= 1, "a fresh user has no cookies");
}

#[test]
fn static_steps_are_serialized_once() {
    let w = compile(
        "target: http://127.0.0.1:1
defaults: { cookies: false }
load: { model: closed, users: 1, iterations: 50 }
data: { item: { zipf: { n: 100 } } }
scenarios:
  - name: s
    steps:
      - get: /static
      - get: /items/{{item}}
",
    );
    let fake = Fake::new(|_, _| ok(""));
    run_on(&w, fake.clone());
    let seen = fake.seen.lock().unwrap();
    let mut static_bufs: Vec<usize> = seen
        .iter()
        .filter(|(r, _)| r.starts_with("GET /static"))
        .map(|(_, p)| *p)
        .collect();
    static_bufs.dedup();
    assert_eq!(static_bufs.len(), 1, "one buffer for every static request");
    let items: Vec<&String> = seen
        .iter()
        .map(|(r, _)| r)
        .filter(|r| r.starts_with("GET /items/"))
        .collect();
    assert_eq!(items.len(), 50);
    let mut ids: Vec<u64> = items
        .iter()
        .map(|r| r[11..].split(' ').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert!(
        ids.len() > 5 && ids.iter().all(|i| (1..=100).contains(i)),
        "{ids:?}"
    );
}

#[test]
fn the_open_model_starts_iterations_on_schedule() {
    // 50 iterations/s for 2 s: 100 iterations start, whatever the think time; those whose
    // pause outlasts the run (the last 300 ms: 15) send no second request after its end.
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: open, rate: 50, duration: 2s }
scenarios:
  - { name: s, steps: [ { get: /a }, { think: 300ms }, { get: /b } ] }
",
    );
    let fake = Fake::new(|_, _| ok(""));
    let t = run_on(&w, fake.clone()).script;
    assert_eq!(t.scenarios[0].iterations, 85);
    let b = fake
        .requests()
        .iter()
        .filter(|r| r.starts_with("GET /b"))
        .count();
    assert_eq!(b, 85, "no request starts after the end of the run");
    let a = fake
        .requests()
        .iter()
        .filter(|r| r.starts_with("GET /a"))
        .count();
    assert_eq!(a, 100);
    // each iteration lasted the think time (the fake answers at once)
    assert!(
        t.scenarios[0].duration.min() >= 299_000,
        "{}",
        t.scenarios[0].duration.min()
    );
    // stages ramp the arrival rate: 0 -> 100/s over 2 s is 100 arrivals
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: open, stages: [ { duration: 2s, target: 100 } ] }
scenarios: [ { name: s, steps: [ { get: /a } ] } ]
",
    );
    let t = run_on(&w, Fake::new(|_, _| ok(""))).script;
    assert_eq!(t.scenarios[0].iterations, 100);
}

#[test]
fn profiles_compile_to_stages_that_run() {
    let w = compile(
        "target: http://127.0.0.1:1
load: { profile: flood, target: 3, duration: 2s, warmup: 100ms }
scenarios: [ { name: s, steps: [ { get: /a }, { think: 100ms } ] } ]
",
    );
    let plan = w.plan(1);
    assert_eq!(plan.stages.len(), 3, "{:?}", plan.stages);
    assert_eq!(
        plan.stages[0].duration,
        std::time::Duration::ZERO,
        "everyone at once"
    );
    assert_eq!(plan.max_connections(), 3);
    let t = run_on(&w, Fake::new(|_, _| ok(""))).script;
    // 3 users, ~10 iterations/s each for ~1.9 s of hold, minus the ramp-down's share
    let n = t.scenarios[0].iterations;
    assert!((45..=60).contains(&n), "{n}");
}

#[test]
fn a_value_that_cannot_go_in_a_path_is_reported_not_sent() {
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 4 }
data: { term: { values: [shoes, red hats], pick: sequential } }
scenarios: [ { name: s, steps: [ { get: '/search/{{term}}' } ] } ]
",
    );
    let fake = Fake::new(|_, _| ok(""));
    let t = run_on(&w, fake.clone()).script;
    assert_eq!(fake.requests().len(), 2, "only the shoes were sent");
    let i = w
        .checks()
        .iter()
        .position(|c| c == "GET /search/{{term}}: sent")
        .expect("a sent check");
    let c = &t.checks[i];
    assert_eq!((c.passes, c.fails), (2, 2));
    assert!(
        c.sample.as_deref().unwrap().contains("percent-encoded"),
        "{c:?}"
    );
}

#[test]
fn static_steps_with_cookies_are_serialized_again_only_when_the_jar_changes() {
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 40 }
scenarios: [ { name: s, steps: [ { get: /login }, { get: /static } ] } ]
",
    );
    // the session cookie changes once, on the 21st login
    let fake = Fake::new(|req, n| {
        if req.starts_with("GET /login") {
            let sid = if n < 40 { "a" } else { "b" };
            (
                200,
                vec![("Set-Cookie".into(), format!("sid={sid}"))],
                String::new(),
            )
        } else {
            ok("")
        }
    });
    run_on(&w, fake.clone());
    let seen = fake.seen.lock().unwrap();
    let mut bufs: Vec<(String, usize)> = seen
        .iter()
        .filter(|(r, _)| r.starts_with("GET /static"))
        .map(|(r, p)| (r.split("Cookie: ").nth(1).unwrap_or("").to_owned(), *p))
        .collect();
    assert_eq!(bufs.len(), 40);
    assert!(
        bufs.iter().all(|(c, _)| c.starts_with("sid=")),
        "every request carries the session"
    );
    bufs.dedup();
    assert_eq!(bufs.len(), 2, "one buffer per cookie value: {bufs:?}");
}

#[test]
fn a_scenario_that_can_send_nothing_does_not_spin() {
    // every value is unusable in a path: nothing is ever sent, yet the run ends on time
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 2, duration: 1s }
data: { term: { values: [a b, c d] } }
scenarios: [ { name: s, steps: [ { get: '/search/{{term}}' } ] } ]
",
    );
    let fake = Fake::new(|_, _| ok(""));
    let t = run_on(&w, fake.clone()).script;
    assert!(fake.requests().is_empty());
    let n = t.scenarios[0].iterations;
    assert!(
        (150..=210).contains(&n),
        "2 users, one iteration per 10 ms: {n}"
    );
}

#[test]
fn an_open_load_spaces_its_arrivals_as_the_file_says_from_its_seed() {
    let plan = |arrivals: &str, seed: &str| {
        compile(&format!(
            "target: http://127.0.0.1:1
seed: {seed}
load: {{ model: open, rate: 50, duration: 2s, arrivals: {arrivals} }}
scenarios: [ {{ name: s, steps: [ {{ get: /a }} ] }} ]
"
        ))
        .plan(1)
    };
    let p = plan("poisson", "7");
    assert_eq!((p.process, p.seed), (herd_engine::Process::Poisson, 7));
    assert_eq!(plan("uniform", "1").process, herd_engine::Process::Uniform);
    // A Poisson count: about 100 arrivals in 2 s, not exactly 100 as an even schedule sends.
    let fake = Fake::new(|_, _| ok(""));
    let w = compile(
        "target: http://127.0.0.1:1
seed: 3
load: { model: open, rate: 50, duration: 2s, arrivals: poisson }
scenarios: [ { name: s, steps: [ { get: /a } ] } ]
",
    );
    let n = run_on(&w, fake.clone()).script.scenarios[0].iterations;
    assert!((70..=130).contains(&n) && n != 100, "{n}");
}
