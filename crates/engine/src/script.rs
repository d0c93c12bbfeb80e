//! What a virtual user does, as a synchronous pull the engine's loop calls whenever the user is
//! free (wrk's request/response/delay hooks have this shape): the loop owns the sockets and the
//! clock; the script only says what comes next. A plain `herd run URL` is one request per
//! iteration; a workload file compiles to a script with steps, think times, extraction and checks.

use crate::{Failure, Request, Response, ScriptSecond};
use herd_metrics::Verdict;
use std::time::{Duration, Instant};

/// What a user does next.
#[derive(Clone, Debug)]
pub enum Action {
    /// Send this request; its outcome comes back through [`Script::judge`] and [`Last`].
    Send(Request),
    /// Pause this long (think time); the next request is measured from the pause's end.
    Think(Duration),
    /// The iteration is over: the user takes its next one (closed model) or waits for the next
    /// arrival (open model).
    Done,
    /// The user takes no more iterations (wrk's `wrk.thread:stop()`); the run goes on with the
    /// others and ends when none is left.
    Stop,
}

/// What happened since the script last spoke, handed to [`Script::next`].
#[derive(Clone, Copy, Debug)]
pub enum Last<'a> {
    /// A new iteration starts.
    Start,
    /// The request sent got this full response (already judged).
    Response(&'a Response),
    /// The request sent got no valid response.
    Failed(&'a Failure),
    /// The pause is over.
    Woke,
}

/// The moment and the iteration's standing, for a script that keeps its own counts.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub now: Instant,
    /// The iteration was intended after the warm-up: counts it keeps follow the engine's rule.
    pub measured: bool,
    /// Open model: the index in the whole schedule of the arrival this iteration answers
    /// (a replayed log's line); `None` in the closed model.
    pub arrival: Option<u64>,
}

pub trait Script: 'static {
    /// A virtual user's own state: cookies, variables, its data row, where it is in its steps.
    type User;

    /// What the script counted of its own (iterations per scenario, checks), handed back by
    /// [`Script::finish`] when its worker ends and merged across workers like the rest of
    /// the run's output; `()` for a script that counts nothing.
    type Report: ScriptReport;

    /// Creates user number `id` (unique across threads).
    fn new_user(&self, id: u64) -> Self::User;

    /// The user is free: what does it do next?
    fn next(&self, user: &mut Self::User, last: Last<'_>, ctx: Ctx) -> Action;

    /// Judges a full response to `req` (status and checks) before it is recorded; the message
    /// says why it failed. A script that cannot judge it (its hook raised) makes it an error
    /// (`ErrorKind::Lua`): counted with the other errors, in totals and thresholds alike.
    fn judge(
        &self,
        user: &mut Self::User,
        req: &Request,
        resp: &Response,
        ctx: Ctx,
    ) -> Result<(Verdict, Option<String>), Failure> {
        let _ = (user, req, ctx);
        Ok(default_verdict(resp))
    }

    /// What this thread's script counted since the last call: the worker hands it over with
    /// each second it closes, for the run's per-second records.
    fn take_second(&self) -> ScriptSecond {
        ScriptSecond::default()
    }

    /// The worker is done: what this thread's script counted.
    fn finish(&self) -> Self::Report {
        Self::Report::default()
    }
}

/// A script's own counts, one per worker thread, added together at the end of the run.
pub trait ScriptReport: Default + Send + 'static {
    fn merge(&mut self, other: Self);
}

impl ScriptReport for () {
    fn merge(&mut self, _other: ()) {}
}

/// How a full response is judged unless the script says otherwise: ok when the status is
/// below 400.
pub fn default_verdict(r: &Response) -> (Verdict, Option<String>) {
    if r.status < 400 {
        (Verdict::Ok, None)
    } else {
        (Verdict::Failed, None)
    }
}

/// The same pre-serialized request, every iteration: wrk's fast path, nothing built per request.
#[derive(Clone, Debug)]
pub struct Single(pub Request);

impl Script for Single {
    type User = ();
    type Report = ();

    fn new_user(&self, _id: u64) {}

    #[inline]
    fn next(&self, _user: &mut (), last: Last<'_>, _ctx: Ctx) -> Action {
        match last {
            Last::Start => Action::Send(self.0.clone()),
            _ => Action::Done,
        }
    }
}
