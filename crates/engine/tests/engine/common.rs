//! What the engine tests share: a run of a plan against a `FakeServer` on its virtual clock, and
//! the accounting every run must keep.

use herd_engine::fake::FakeServer;
use herd_engine::{run, Control, Hooks, Plan, Request, RunOutput, Script, Single};
use std::sync::Arc;
use std::time::Duration;

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn go(plan: Plan, fake: &FakeServer) -> RunOutput {
    go_with(plan, fake, Arc::new(Control::new()))
}

pub fn go_with(plan: Plan, fake: &FakeServer, hooks: impl Into<Hooks>) -> RunOutput {
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    go_script(plan, fake, hooks, move |_| script.clone())
}

pub fn go_script<S: Script>(
    plan: Plan,
    fake: &FakeServer,
    hooks: impl Into<Hooks>,
    script: impl Fn(usize) -> S + Sync,
) -> RunOutput {
    let clock = Arc::clone(&fake.clock);
    run(
        &plan,
        clock,
        |_| Ok(fake.transport()),
        script,
        hooks,
        |_| {},
    )
    .unwrap()
    .split()
    .0
}

pub fn assert_accounted(out: &RunOutput) {
    let t = &out.total;
    assert_eq!(
        out.scheduled,
        t.completed + t.errors.total() + out.dropped,
        "scheduled = completed + errors + dropped"
    );
}

pub fn stage(secs: f64, target: f64) -> herd_engine::Stage {
    herd_engine::Stage {
        duration: Duration::from_secs_f64(secs),
        target,
    }
}
