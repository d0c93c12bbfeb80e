//! The closed model: a fixed number of users, each sending its next request when the last is
//! answered; `-n`, calls per connection, stages of users, the throughput of a run.

use crate::common::{assert_accounted, go, go_script, ms, stage};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::{Action, Control, Ctx, Last, Load, Plan, Request, Script};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn closed_model_runs_exactly_n_requests() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Closed { users: 4 },
        duration: None,
        requests: Some(100),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed, 100);
    assert_eq!(out.total.ok, 100);
    assert_eq!(
        fake.connects.load(Relaxed),
        4,
        "keep-alive: one connection per user"
    );
    assert_accounted(&out);
    // 100 requests of 10 ms over 4 users: 25 rounds, 250 ms.
    let p50 = out.total.latency.value_at_quantile(0.5);
    assert!((9_900..=10_100).contains(&p50), "p50 {p50} us");
}

/// Each user asks for its own path and thinks longer the higher its id: a fast user and slow
/// ones, as when one user's URLs are cheap and another's are not.
struct Uneven;

impl Script for Uneven {
    type User = (u64, bool);
    type Report = ();
    fn new_user(&self, id: u64) -> (u64, bool) {
        (id, false)
    }
    fn next(&self, user: &mut (u64, bool), last: Last<'_>, _: Ctx) -> Action {
        match last {
            Last::Start => {
                user.1 = false;
                Action::Send(Request::new(
                    format!("GET /user/{} HTTP/1.1\r\n\r\n", user.0).into_bytes(),
                ))
            }
            Last::Response(_) if !user.1 => {
                user.1 = true;
                Action::Think(ms(user.0 * 7))
            }
            _ => Action::Done,
        }
    }
}

#[test]
fn n_is_handed_out_evenly_whatever_each_user_s_pace() {
    // h2load's rule: -n 11 over 3 users is 4, 4 and 3 iterations, the first users taking the
    // remainder, though user 0 answers three times as fast as user 2 (a siege URL file walked
    // by each user must see each URL as often).
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    fake.keep_requests = true;
    let plan = Plan {
        load: Load::Closed { users: 3 },
        duration: None,
        requests: Some(11),
        ..Plan::default()
    };
    let out = go_script(plan, &fake, Arc::new(Control::new()), |_| Uneven);
    assert_eq!(out.total.completed, 11);
    let requests = fake.requests.lock().unwrap();
    let per_user: Vec<usize> = (0..3)
        .map(|u| {
            let path = format!("GET /user/{u} ");
            requests.iter().filter(|r| r.starts_with(&path)).count()
        })
        .collect();
    assert_eq!(per_user, [4, 4, 3]);
}

#[test]
fn calls_per_conn_one_opens_a_connection_per_request() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Closed { users: 3 },
        duration: None,
        requests: Some(30),
        calls_per_conn: Some(1),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(fake.connects.load(Relaxed), 30);
    assert_eq!(out.total.connect.len(), 30);
}

#[test]
fn closed_stages_ramp_users_up_hold_and_down() {
    // 0 -> 4 users over 10 s, hold 10 s, 4 -> 0 over 10 s, each request 100 ms. User u joins when
    // the target passes u + 1 and leaves when it falls below: 70 user-seconds, 700 requests.
    let fake = FakeServer::new(|_, _| Reply::After(ms(100), 200));
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        stages: vec![stage(10.0, 4.0), stage(10.0, 4.0), stage(10.0, 0.0)],
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert!((695..=705).contains(&out.total.ok), "ok {}", out.total.ok);
    assert_eq!(
        fake.connects.load(Relaxed),
        4,
        "one connection per user, kept while parked"
    );
    let per_sec: Vec<u64> = out.timeline.iter().map(|s| s.requests()).collect();
    assert_eq!(per_sec.len(), 30);
    assert_eq!(
        per_sec[15], 40,
        "4 users at 10 req/s each in the steady state"
    );
    assert!(
        per_sec[1] == 0 && per_sec[3] == 10,
        "one user from 2.5 s: {per_sec:?}"
    );
}

#[test]
fn throughput_is_never_divided_by_less_time_than_it_took() {
    // 100 users on a 200 ms route for 2.1 s: each starts iterations at 0, 0.2, ..., 2.0 s; the
    // last ones end at 2.2 s, in the drain. 1,100 answers over 2.2 s: 500 a second, the
    // ceiling (not 1,100 / 2.1 = 524).
    let fake = FakeServer::new(|_, _| Reply::After(ms(200), 200));
    let plan = Plan {
        load: Load::Closed { users: 100 },
        duration: Some(ms(2_100)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 1_100);
    let rate = out.total.ok as f64 / out.duration.as_secs_f64();
    assert!((499.0..=500.5).contains(&rate), "{rate} req/s");
}

#[test]
fn a_user_leaving_on_a_response_that_announces_a_close_leaves_the_close_to_the_server() {
    // Every answer says `Connection: close`, its close read in a later event. The user's last
    // response ends its iterations in the note that brought it: herd must still wait for the
    // server's close, or the TIME_WAIT lands on the generator's port.
    let fake = FakeServer::new(|_, _| Reply::Closing(ms(5), 200));
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(6),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 6);
    assert_eq!(fake.connects.load(Relaxed), 6);
    assert_eq!(
        out.generator.server_closed, 6,
        "the server hung up first on every connection, the users' last ones included"
    );
    assert_accounted(&out);
}

/// Users that stop for good after three requests each (wrk's `stop.lua`, `wrk.thread:stop()`).
struct StopsAfterThree;

impl Script for StopsAfterThree {
    type User = u32;
    type Report = ();
    fn new_user(&self, _id: u64) -> u32 {
        0
    }
    fn next(&self, sent: &mut u32, _last: Last<'_>, _: Ctx) -> Action {
        if *sent == 3 {
            return Action::Stop;
        }
        *sent += 1;
        Action::Send(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]))
    }
}

#[test]
fn a_run_whose_users_all_stopped_lasts_as_long_as_they_ran() {
    // The users stop after 30 ms of a planned 5 s: the result said 5.00 s and a fifth of the
    // rate, with four empty seconds that never happened.
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: Some(ms(5_000)),
        ..Plan::default()
    };
    let out = go_script(plan, &fake, Arc::new(Control::new()), |_| StopsAfterThree);
    assert_eq!(out.total.completed, 6);
    assert!(out.duration < ms(100), "{:?}", out.duration);
    assert_eq!(out.timeline.len(), 1, "one second, not five");
}

/// A saturated server answers in milliseconds, each user's answer microseconds after another's,
/// so each wakes the loop: from the first tenth of a second on, the loop's waits nap the longest
/// (50 µs, a hundredth of 10 ms capped), and napping, they gather several answers a wake. A
/// server answering in 200 µs gets no nap: it would add a tenth to what is measured.
#[test]
fn waits_nap_only_when_a_hundredth_of_the_fastest_answer_is_worth_a_sleep() {
    for (answer, want) in [
        (ms(10), Duration::from_micros(50)),
        (Duration::from_micros(200), Duration::ZERO),
    ] {
        // The server answers on a grid, `answer` apart: the 16 requests of a slot each 3 µs
        // after the one before.
        let k = std::sync::atomic::AtomicU64::new(0);
        let fake = FakeServer::new(move |t, _| {
            let slot = answer.as_nanos() as u64;
            let next = (t.as_nanos() as u64 / slot + 1) * slot;
            let spread = k.fetch_add(1, Relaxed) % 16 * 3_000;
            let wait = next + slot - t.as_nanos() as u64 + spread;
            Reply::After(Duration::from_nanos(wait), 200)
        });
        let plan = Plan {
            load: Load::Closed { users: 16 },
            duration: Some(Duration::from_millis(3500)),
            ..Plan::default()
        };
        let out = go(plan, &fake);
        assert!(out.total.ok > 0);
        let naps = fake.naps.lock().unwrap().clone();
        assert!(naps.len() >= 30, "a nap each tenth of a second: {naps:?}");
        assert!(
            naps.iter().all(|&n| n == want),
            "answers of {answer:?}: {naps:?}"
        );
        // The result says so: every tenth of a second the loop decided, and how it napped.
        let told = out.generator.naps;
        assert_eq!(told.windows, naps.len() as u64, "{told:?}");
        assert_eq!(told.longest, want, "{told:?}");
        let napping = if want.is_zero() { 0 } else { told.windows };
        assert_eq!(told.napping, napping, "{told:?}");
    }
}
