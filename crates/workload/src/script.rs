//! What a virtual user does: picks a scenario by weight (with its own seeded generator), draws
//! its test data, and walks the steps: requests for the engine to send, pauses, extraction,
//! checks and its own cookie jar. The engine's loop pulls the next action whenever the user is
//! free, so a user is a small state machine: its scenario, the step it is at, and what the last
//! response left. Static requests go out as the bytes serialized at compile time.

use crate::cookie::Jar;
use crate::data::Drawn;
use crate::func::Entropy;
use crate::hole::NotSent;
use crate::hole::{Lookup, Slot};
use crate::program::{Program, Send, Step};
use crate::redirect::Redirect;
use crate::tally::Tally;
use herd_engine::metrics::Verdict;
use herd_engine::segment::Shard;
use herd_engine::{Action, Ctx, Failure, Last, Request, Response, Script};
use herd_lua::Functions;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::fmt::Write;
use std::sync::Arc;
use std::time::Instant;

/// Redirects followed for one step before giving up (browsers allow about 20).
const MAX_REDIRECTS: usize = 10;

/// One worker thread's script: the shared program and this thread's tally, handed back by
/// `Script::finish` at the end of the run.
pub struct WorkloadScript {
    program: Arc<Program>,
    /// The shard of the run this process plays: sequential data rows follow its stripe.
    shard: Option<Shard>,
    pub(crate) tally: RefCell<Tally>,
    /// This thread's own Lua state for the `script:` (or why it did not load), only when the
    /// workload has one.
    pub(crate) lua: Option<Result<Functions, String>>,
}

impl WorkloadScript {
    pub(crate) fn new(program: Arc<Program>, shard: Option<Shard>) -> Self {
        let tally = Tally::new(program.scenarios.len(), program.checks.len());
        let lua = program.lua.as_ref().map(|s| s.functions());
        WorkloadScript {
            program,
            shard,
            tally: RefCell::new(tally),
            lua,
        }
    }
}

/// A virtual user's own state, and where it is in its scenario.
pub struct User {
    id: u64,
    rng: SmallRng,
    jar: Jar,
    extracted: Vec<Option<String>>,
    drawn: Vec<Drawn>,
    /// Drawn numbers as text, per source.
    texts: Vec<String>,
    walked: u64,
    /// Static steps serialized with this user's cookies, and the jar version they carry.
    cache: Vec<Option<(u64, Request)>>,
    /// The scenario of the iteration in progress, the step it is at, and when it started.
    scenario: usize,
    step: usize,
    started: Instant,
    measured: bool,
    /// Redirects followed for the current step, and where the last response pointed.
    redirects: usize,
    location: Option<Redirect>,
    /// For `uuid()` and `random_int()` in templates.
    entropy: Entropy,
    /// Its socket is open (`ws: { connect }` answered `101`, not closed since): its messages
    /// go out; otherwise they are not sent.
    socket_open: bool,
}

struct Vars<'a> {
    program: &'a Program,
    user: &'a User,
    lua: Option<&'a Result<Functions, String>>,
}

impl Lookup for Vars<'_> {
    fn value(&self, slot: Slot) -> Option<&str> {
        let u = self.user;
        match slot {
            Slot::Column { source, column } => {
                self.program.sources[source].text(&u.drawn[source], column, "")
            }
            Slot::Value { source } => {
                self.program.sources[source].text(&u.drawn[source], 0, &u.texts[source])
            }
            Slot::Extracted(i) => u.extracted[i].as_deref(),
            // Known only while a step's headers render (program::Send::build).
            Slot::Unresolved | Slot::RequestBody => None,
        }
    }

    fn random(&self) -> u64 {
        self.user.entropy.next()
    }

    fn lua(&self, index: usize, args: &[String]) -> Result<String, String> {
        match self.lua {
            Some(Ok(f)) => f.call(index, args),
            Some(Err(e)) => Err(e.clone()),
            None => Err("the workload has no script".to_owned()),
        }
    }
}

impl Script for WorkloadScript {
    type User = User;
    type Report = Tally;

    fn take_second(&self) -> herd_engine::ScriptSecond {
        std::mem::take(&mut self.tally.borrow_mut().second)
    }

    fn finish(&self) -> Tally {
        self.tally.take()
    }

    fn new_user(&self, id: u64) -> User {
        let p = &self.program;
        User {
            id,
            rng: SmallRng::seed_from_u64(p.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            jar: Jar::default(),
            extracted: vec![None; p.variables],
            drawn: vec![Drawn::Nothing; p.sources.len()],
            texts: vec![String::new(); p.sources.len()],
            walked: id,
            cache: vec![None; p.static_steps],
            scenario: 0,
            step: 0,
            started: Instant::now(),
            measured: false,
            redirects: 0,
            location: None,
            entropy: Entropy::new(p.seed, id),
            socket_open: false,
        }
    }

    fn next(&self, user: &mut User, last: Last<'_>, ctx: Ctx) -> Action {
        let p = &*self.program;
        match last {
            Last::Start => self.start(user, ctx),
            Last::Response(r) => {
                if p.sockets {
                    socket_moved(p, user, Some(r.status));
                }
                if let Some(to) = user.location.take() {
                    if user.redirects < MAX_REDIRECTS {
                        user.redirects += 1;
                        if let Some(a) = self.redirect(user, &to) {
                            return a;
                        }
                    }
                }
                user.step += 1;
            }
            Last::Failed(_) => {
                if p.sockets {
                    socket_moved(p, user, None);
                }
                user.step += 1;
            }
            Last::Woke => user.step += 1,
        }
        let scenario = &p.scenarios[user.scenario];
        while let Some(step) = scenario.steps.get(user.step) {
            user.redirects = 0;
            match step {
                Step::Think(t) => {
                    let d = t.sample(&mut user.rng);
                    if !d.is_zero() {
                        return Action::Think(d);
                    }
                }
                Step::Send(s)
                    if s.socket == herd_engine::SocketRole::Message && !user.socket_open =>
                {
                    let why = "no open WebSocket: its `ws: { connect }` was refused or failed, \
                               or the socket closed";
                    self.not_sent(s, NotSent::Invalid(why.to_owned()), user.measured);
                }
                Step::Send(s) => match self.build(s, user) {
                    Ok(req) => {
                        if let (Some(c), true) = (s.sent_check, user.measured) {
                            self.tally.borrow_mut().check(c, true, String::new);
                        }
                        return Action::Send(req);
                    }
                    Err(why) => self.not_sent(s, why, user.measured),
                },
            }
            user.step += 1;
        }
        if user.measured {
            let took = ctx.now.saturating_duration_since(user.started);
            self.tally.borrow_mut().iteration(user.scenario, took);
        }
        Action::Done
    }

    fn judge(
        &self,
        user: &mut User,
        req: &Request,
        r: &Response,
        _ctx: Ctx,
    ) -> Result<(Verdict, Option<String>), Failure> {
        let p = &*self.program;
        let Some(Step::Send(s)) = p.scenarios[user.scenario].steps.get(user.step) else {
            return Ok(herd_engine::default_verdict(r));
        };
        if p.cookies {
            user.jar.store(&p.target, &req.bytes, &r.headers);
        }
        if s.follow && matches!(r.status, 301 | 302 | 303 | 307 | 308) {
            user.location =
                redirect_path(r, &req.bytes).map(|to| Redirect::after(r.status, &req.bytes, to));
            if user.location.is_some() {
                return Ok((Verdict::Ok, None));
            }
        }
        self.judge_checks(s, r, &mut user.extracted, user.measured)
    }
}

impl WorkloadScript {
    /// A new iteration: picks the scenario, draws its data, forgets last iteration's values.
    fn start(&self, user: &mut User, ctx: Ctx) {
        let p = &*self.program;
        user.scenario = if p.walk {
            user.walked += 1;
            ((user.walked - 1) % p.scenarios.len() as u64) as usize
        } else if p.scenarios.len() == 1 {
            0
        } else {
            p.scenario_at(user.rng.gen_range(0..p.total_weight()))
        };
        // Extracted variables live for one iteration: a value from the last one would be stale.
        user.extracted.iter_mut().for_each(|v| *v = None);
        for &s in &p.scenarios[user.scenario].sources {
            let drawn = p.sources[s].draw_in(user.id, &mut user.rng, self.shard.as_ref());
            if let Drawn::Number(n) = drawn {
                let t = &mut user.texts[s];
                t.clear();
                let _ = write!(t, "{n}");
            }
            user.drawn[s] = drawn;
        }
        user.step = 0;
        user.started = ctx.now;
        user.measured = ctx.measured;
        user.redirects = 0;
        user.location = None;
        user.socket_open = false;
    }

    /// The request of step `s` for `user`: static ones as serialized at compile time (again
    /// only when the user's cookies changed), templated ones built now.
    fn build(&self, s: &Send, user: &mut User) -> Result<Request, NotSent> {
        let p = &*self.program;
        let has_cookies = p.cookies && !user.jar.is_empty();
        match (&s.prebuilt, s.cache_slot) {
            (Some((_, pre)), _) if !has_cookies => Ok(pre.clone()),
            // A static step with cookies: serialized again only when the jar changed.
            (Some(_), Some(slot)) => {
                let version = user.jar.version();
                if let Some((v, r)) = &user.cache[slot] {
                    if *v == version {
                        return Ok(r.clone());
                    }
                }
                let vars = Vars {
                    program: p,
                    user,
                    lua: self.lua.as_ref(),
                };
                let r = s.build(&p.target, &vars, Some(&user.jar), None)?;
                user.cache[slot] = Some((version, r.clone()));
                Ok(r)
            }
            _ => {
                let cookie = has_cookies.then_some(&user.jar);
                s.build(
                    &p.target,
                    &Vars {
                        program: p,
                        user,
                        lua: self.lua.as_ref(),
                    },
                    cookie,
                    None,
                )
            }
        }
    }

    /// The request following redirect `to`, or `None` when it cannot be built.
    fn redirect(&self, user: &mut User, to: &Redirect) -> Option<Action> {
        let p = &*self.program;
        let Some(Step::Send(s)) = p.scenarios[user.scenario].steps.get(user.step) else {
            return None;
        };
        let cookie = (p.cookies && !user.jar.is_empty()).then_some(&user.jar);
        let vars = Vars {
            program: p,
            user,
            lua: self.lua.as_ref(),
        };
        match s.build(&p.target, &vars, cookie, Some(to)) {
            Ok(r) => Some(Action::Send(r)),
            Err(why) => {
                self.not_sent(s, why, user.measured);
                None
            }
        }
    }

    /// Counts a step that could not be sent.
    fn not_sent(&self, s: &Send, why: NotSent, measured: bool) {
        if let (Some(c), true) = (s.sent_check, measured) {
            self.tally.borrow_mut().check(c, false, || match &why {
                NotSent::Unset(v) => {
                    format!("not sent: {{{{{v}}}}} is unset (its extraction found nothing)")
                }
                NotSent::Invalid(e) => format!("not sent: {e}"),
                NotSent::Script(e) => format!("not sent: {e}"),
            });
        }
        if let (NotSent::Script(e), true) = (&why, measured) {
            self.tally.borrow_mut().lua_error(e);
        }
    }
}

/// What the answer (`status`, `None` when it failed) to `user`'s step says of its socket: open
/// once its Upgrade got `101`, gone when anything on it failed or its last exchange is done.
fn socket_moved(p: &Program, user: &mut User, status: Option<u16>) {
    let Some(Step::Send(s)) = p.scenarios[user.scenario].steps.get(user.step) else {
        return;
    };
    match s.socket {
        herd_engine::SocketRole::None => {}
        herd_engine::SocketRole::Open => user.socket_open = status == Some(101) && !s.close,
        herd_engine::SocketRole::Message => user.socket_open &= status.is_some() && !s.close,
    }
}

/// The `Location` of a redirect: an absolute URL (the request builder checks it is on the
/// target), an absolute path, or a path relative to the request's own (`b` from `/a/x` is `/a/b`).
fn redirect_path(r: &Response, request: &[u8]) -> Option<String> {
    let loc = r
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("location"))
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())?;
    if loc.starts_with('/') || loc.contains("://") {
        return Some(loc.to_owned());
    }
    // "GET /a/x?q HTTP/1.1": the directory of the path
    let line = request.split(|&b| b == b'\r').next()?;
    let path = std::str::from_utf8(line).ok()?.split(' ').nth(1)?;
    let path = path.split('?').next()?;
    let dir = &path[..=path.rfind('/')?];
    Some(format!("{dir}{loc}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_locations_resolve_against_the_request() {
        let r = |loc: &str| Response {
            headers: vec![("Location".into(), loc.into())].into(),
            ..Response::default()
        };
        let req = b"GET /shop/cart?x=1 HTTP/1.1\r\nHost: h\r\n\r\n";
        let table = [
            ("/login", Some("/login")),
            ("http://h/a", Some("http://h/a")),
            ("login?next=cart", Some("/shop/login?next=cart")),
            ("", None),
        ];
        for (loc, want) in table {
            assert_eq!(redirect_path(&r(loc), req).as_deref(), want, "{loc}");
        }
    }
}
