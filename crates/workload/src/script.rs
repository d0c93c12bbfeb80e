//! What a virtual user does: picks a scenario by weight (with its own seeded generator), draws
//! its test data, and walks the steps: requests through the engine, pauses, extraction, checks
//! and its own cookie jar. Static requests go out as the bytes serialized at compile time.

use crate::cookie::Jar;
use crate::data::Drawn;
use crate::func::Entropy;
use crate::program::{NotSent, Program, Send, Step};
use crate::redirect::Redirect;
use crate::tally::Tally;
use crate::template::{Lookup, Slot};
use herd_engine::metrics::Verdict;
use herd_engine::{Request, Response, Script, Transport, UserCtx};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Redirects followed for one step before giving up (browsers allow about 20).
const MAX_REDIRECTS: usize = 10;
/// The pause after an iteration that sent nothing and thought for no time.
const IDLE_ITERATION: std::time::Duration = std::time::Duration::from_millis(10);

/// One worker thread's script: the shared program and this thread's tally, added to the shared
/// tally when the worker drops it at the end of the run.
pub struct WorkloadScript {
    program: Arc<Program>,
    tally: RefCell<Tally>,
    sink: Arc<Mutex<Tally>>,
}

impl WorkloadScript {
    pub(crate) fn new(program: Arc<Program>, sink: Arc<Mutex<Tally>>) -> Self {
        let tally = Tally::new(program.scenarios.len(), program.checks.len());
        WorkloadScript {
            program,
            tally: RefCell::new(tally),
            sink,
        }
    }
}

impl Drop for WorkloadScript {
    fn drop(&mut self) {
        if let Ok(mut t) = self.sink.lock() {
            t.merge(&self.tally.borrow());
        }
    }
}

/// A virtual user's own state.
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
    /// For `uuid()` and `random_int()` in templates.
    entropy: Entropy,
}

struct Vars<'a> {
    program: &'a Program,
    user: &'a User,
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
            Slot::Unresolved => None,
        }
    }

    fn random(&self) -> u64 {
        self.user.entropy.next()
    }
}

impl Script for WorkloadScript {
    type User = User;

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
            entropy: Entropy::new(p.seed, id),
        }
    }

    async fn iterate<'a, T: Transport>(&'a self, user: &'a mut User, ctx: &'a mut UserCtx<T>) {
        let p = &*self.program;
        let index = if p.walk {
            user.walked += 1;
            ((user.walked - 1) % p.scenarios.len() as u64) as usize
        } else if p.scenarios.len() == 1 {
            0
        } else {
            p.scenario_at(user.rng.gen_range(0..p.total_weight()))
        };
        let scenario = &p.scenarios[index];
        // Extracted variables live for one iteration: a value from the last one would be stale.
        user.extracted.iter_mut().for_each(|v| *v = None);
        for &s in &scenario.sources {
            let drawn = p.sources[s].draw(user.id, &mut user.rng);
            if let Drawn::Number(n) = drawn {
                let t = &mut user.texts[s];
                t.clear();
                let _ = write!(t, "{n}");
            }
            user.drawn[s] = drawn;
        }
        let measured = ctx.measured();
        let start = Instant::now();
        let mut waited = false;
        for step in &scenario.steps {
            match step {
                Step::Think(t) => {
                    let d = t.sample(&mut user.rng);
                    waited |= !d.is_zero();
                    ctx.think(d).await;
                }
                Step::Send(s) => waited |= self.send(s, user, ctx, measured).await,
            }
        }
        if measured {
            self.tally.borrow_mut().iteration(index, start.elapsed());
        }
        if !waited {
            // Nothing was sent (every step's variables unset or data invalid) and nothing
            // paused: without this the user would spin and starve its thread's event loop.
            tokio::time::sleep(IDLE_ITERATION).await;
        }
    }
}

impl WorkloadScript {
    async fn send<T: Transport>(
        &self,
        s: &Send,
        user: &mut User,
        ctx: &mut UserCtx<T>,
        measured: bool,
    ) -> bool {
        let p = &*self.program;
        let has_cookies = p.cookies && !user.jar.is_empty();
        let built;
        let req: &Request = match (&s.prebuilt, s.cache_slot) {
            (Some((_, pre)), _) if !has_cookies => pre,
            // A static step with cookies: serialized again only when the jar changed.
            (Some(_), Some(slot)) => {
                let version = user.jar.version();
                match &user.cache[slot] {
                    Some((v, r)) if *v == version => {
                        built = r.clone();
                        &built
                    }
                    _ => {
                        let vars = Vars { program: p, user };
                        match s.build(&p.target, &vars, Some(&user.jar), None) {
                            Ok(r) => {
                                user.cache[slot] = Some((version, r.clone()));
                                built = r;
                                &built
                            }
                            Err(why) => return self.not_sent(s, why, measured),
                        }
                    }
                }
            }
            _ => {
                let cookie = has_cookies.then_some(&user.jar);
                match s.build(&p.target, &Vars { program: p, user }, cookie, None) {
                    Ok(r) => {
                        built = r;
                        &built
                    }
                    Err(why) => return self.not_sent(s, why, measured),
                }
            }
        };
        if let Some(c) = s.sent_check {
            if measured {
                self.tally.borrow_mut().check(c, true, String::new);
            }
        }
        let mut location = self.exchange(s, req, user, ctx, measured).await;
        for _ in 0..MAX_REDIRECTS {
            let Some(path) = location.take() else { break };
            let cookie = (p.cookies && !user.jar.is_empty()).then_some(&user.jar);
            let vars = Vars { program: p, user };
            match s.build(&p.target, &vars, cookie, Some(&path)) {
                Ok(r) => location = self.exchange(s, &r, user, ctx, measured).await,
                Err(why) => {
                    self.not_sent(s, why, measured);
                    break;
                }
            }
        }
        true
    }

    /// Counts a step that could not be sent; returns `false` (nothing was sent).
    fn not_sent(&self, s: &Send, why: NotSent, measured: bool) -> bool {
        if let (Some(c), true) = (s.sent_check, measured) {
            self.tally.borrow_mut().check(c, false, || match why {
                NotSent::Unset(v) => {
                    format!("not sent: {{{{{v}}}}} is unset (its extraction found nothing)")
                }
                NotSent::Invalid(e) => format!("not sent: {e}"),
            });
        }
        false
    }

    /// One exchange, judged by the step's checks; returns where a redirect to follow points.
    async fn exchange<T: Transport>(
        &self,
        s: &Send,
        req: &Request,
        user: &mut User,
        ctx: &mut UserCtx<T>,
        measured: bool,
    ) -> Option<Redirect> {
        let cookies = self.program.cookies;
        let mut location = None;
        let User { jar, extracted, .. } = user;
        let judge = |r: &Response| {
            if cookies {
                jar.store(&self.program.target, &req.bytes, &r.headers);
            }
            if s.follow && matches!(r.status, 301 | 302 | 303 | 307 | 308) {
                location = redirect_path(r, &req.bytes)
                    .map(|to| Redirect::after(r.status, &req.bytes, to));
                if location.is_some() {
                    return (Verdict::Ok, None);
                }
            }
            self.judge(s, r, extracted, measured)
        };
        let _ = ctx.exchange_with(req, judge).await;
        location
    }

    fn judge(
        &self,
        s: &Send,
        r: &Response,
        extracted: &mut [Option<String>],
        measured: bool,
    ) -> (Verdict, Option<String>) {
        let mut tally = self.tally.borrow_mut();
        let mut failed: Option<String> = None;
        let mut check = |id: Option<usize>, ok: bool, why: &dyn Fn() -> String| {
            if let (Some(id), true) = (id, measured) {
                tally.check(id, ok, why);
            }
            if !ok && failed.is_none() {
                failed = Some(why());
            }
        };
        if s.status.is_empty() {
            if r.status >= 400 {
                check(None, false, &|| format!("status {}", r.status));
            }
        } else {
            let ok = s.status.contains(&r.status);
            check(s.status_check, ok, &|| {
                format!("status {}, expected {:?}", r.status, s.status)
            });
        }
        if let Some((needle, id)) = &s.body_contains {
            let ok = contains(&r.body, needle.as_bytes());
            check(Some(*id), ok, &|| {
                format!("the body does not contain {needle:?}")
            });
        }
        for (slot, how, id) in &s.extract {
            let v = how.apply(r);
            check(Some(*id), v.is_some(), &|| {
                format!("extraction found nothing in a {} response", r.status)
            });
            extracted[*slot] = v;
        }
        match failed {
            None => (Verdict::Ok, None),
            Some(m) => (Verdict::Failed, Some(m)),
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
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
            headers: vec![("Location".into(), loc.into())],
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
