//! One thread's script on the engine's synchronous pull: wrk's `delay()`, `request()` and
//! `response()` hooks, called only when the script defines them.

use crate::output::Tally;
use crate::split::split;
use crate::state::message;
use crate::thread::Thread;
use herd_engine::metrics::{ErrorKind, Verdict};
use herd_engine::{default_verdict, Action, Ctx, Failure, Last, Request, Response, Script};
use mlua::{Function, Lua, Table, Value};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// What `response()` is handed: wrk gives status, headers and body; a hook that declares only
/// `status` gets only that, and the body is never kept for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wants {
    Status,
    All,
}

pub(crate) struct Hooks {
    pub request: Option<Function>,
    pub response: Option<(Function, Wants)>,
    pub delay: Option<Function>,
}

impl Hooks {
    pub fn of(lua: &Lua) -> mlua::Result<Hooks> {
        let g = lua.globals();
        let f = |name: &str| -> mlua::Result<Option<Function>> {
            Ok(match g.get::<Value>(name)? {
                Value::Function(f) => Some(f),
                _ => None,
            })
        };
        let response = f("response")?.map(|r| {
            let info = r.info();
            let wants = if info.num_params <= 1 && !info.is_vararg {
                Wants::Status
            } else {
                Wants::All
            };
            (r, wants)
        });
        Ok(Hooks {
            request: f("request")?,
            response,
            delay: f("delay")?,
        })
    }

    /// Whether responses must be kept whole for the hook.
    pub fn keep_response(&self) -> bool {
        matches!(self.response, Some((_, Wants::All)))
    }
}

/// A worker thread's script: its own Lua state (wrk's model), driven by the engine's loop.
pub struct WrkScript {
    pub(crate) lua: Lua,
    pub(crate) thread: Thread,
    pub(crate) hooks: Hooks,
    /// The request built once (no `request()`), or what `request()` returned first.
    pub(crate) fixed: Arc<[Request]>,
    /// The last string `request()` returned and its requests: a script that returns a prebuilt
    /// string (wrk's advice) costs no parsing or allocation per request. The string is held so
    /// that its address cannot be reused by another string.
    pub(crate) last: RefCell<Option<(mlua::LuaString, Arc<[Request]>)>>,
    pub(crate) tally: Arc<Tally>,
    /// The engine pipelines a script's several requests ([`WrkScript::spread`]): each user
    /// sends one of them per iteration, user `j` of this thread the `j`th (mod their number).
    pub(crate) spread: bool,
    /// Users made on this thread so far.
    pub(crate) users: std::cell::Cell<usize>,
}

/// A user's place in the requests of its iteration: several when `request()` returns a
/// pipeline.
#[derive(Default)]
pub struct WrkUser {
    requests: Option<Arc<[Request]>>,
    next: usize,
    /// With [`WrkScript::spread`]: which of the requests this user sends.
    slot: usize,
}

impl WrkScript {
    /// The run pipelines the several requests a `request()` returns with the engine's window
    /// (`Plan::pipeline`, users sharing a connection) rather than one after the other: each
    /// user sends one of them per iteration, so a connection carries them all at once, as
    /// wrk's pipeline.lua has it.
    pub fn spread(&mut self) {
        self.spread = true;
    }

    /// The requests of the next iteration, from `request()` when the script has one.
    fn requests(&self) -> Result<Arc<[Request]>, String> {
        let Some(f) = &self.hooks.request else {
            return Ok(Arc::clone(&self.fixed));
        };
        let s: mlua::LuaString = f.call(()).map_err(|e| message(&e))?;
        let mut last = self.last.borrow_mut();
        if let Some((prev, reqs)) = last.as_ref() {
            if prev.to_pointer() == s.to_pointer() {
                return Ok(Arc::clone(reqs));
            }
        }
        let reqs: Arc<[Request]> = split(&s.as_bytes(), self.hooks.keep_response())
            .map_err(|e| format!("request() returned {e}"))?
            .into();
        *last = Some((s, Arc::clone(&reqs)));
        Ok(reqs)
    }

    fn begin(&self, user: &mut WrkUser) -> Action {
        match self.requests() {
            Ok(reqs) if self.spread => {
                let mine = reqs[user.slot % reqs.len()].clone();
                user.next = reqs.len();
                user.requests = Some(reqs);
                Action::Send(mine)
            }
            Ok(reqs) => {
                let first = reqs[0].clone();
                user.requests = Some(reqs);
                user.next = 1;
                Action::Send(first)
            }
            Err(e) => {
                self.tally.add(e);
                Action::Stop
            }
        }
    }

    fn delay(&self) -> Result<Duration, String> {
        let Some(f) = &self.hooks.delay else {
            return Ok(Duration::ZERO);
        };
        let ms: Value = f.call(()).map_err(|e| message(&e))?;
        let ms = match ms {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            Value::Nil => 0.0,
            other => {
                return Err(format!(
                    "delay() returned a {}, not a number",
                    other.type_name()
                ))
            }
        };
        Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0))
    }

    fn respond(&self, resp: &Response) -> mlua::Result<()> {
        let Some((f, wants)) = &self.hooks.response else {
            return Ok(());
        };
        match wants {
            Wants::Status => f.call(resp.status),
            Wants::All => {
                let headers: Table = self.lua.create_table()?;
                for (name, value) in &resp.headers {
                    headers.set(name.as_str(), value.as_str())?;
                }
                let body = self.lua.create_string(&resp.body)?;
                f.call((resp.status, headers, body))
            }
        }
    }
}

impl Script for WrkScript {
    type User = WrkUser;
    type Report = ();

    fn new_user(&self, _id: u64) -> WrkUser {
        let slot = self.users.get();
        self.users.set(slot + 1);
        WrkUser {
            slot,
            ..WrkUser::default()
        }
    }

    /// wrk's `response()`: one that raises makes the response an error (`lua`), counted in
    /// the totals and thresholds as every other error is.
    fn judge(
        &self,
        _user: &mut WrkUser,
        _req: &Request,
        resp: &Response,
        _ctx: Ctx,
    ) -> Result<(Verdict, Option<String>), Failure> {
        match self.respond(resp) {
            Ok(()) => Ok(default_verdict(resp)),
            Err(e) => Err(Failure::new(ErrorKind::Lua, message(&e))),
        }
    }

    fn next(&self, user: &mut WrkUser, last: Last<'_>, _ctx: Ctx) -> Action {
        if self.thread.is_stopped() {
            return Action::Stop;
        }
        match last {
            Last::Start => match self.delay() {
                Ok(d) if !d.is_zero() => Action::Think(d),
                Ok(_) => self.begin(user),
                Err(e) => {
                    self.tally.add(e);
                    Action::Stop
                }
            },
            Last::Woke => self.begin(user),
            // `response()` ran in `judge`, before the response was recorded.
            Last::Response(_) => {
                if self.thread.is_stopped() {
                    return Action::Stop;
                }
                match user.requests.as_ref().and_then(|r| r.get(user.next)) {
                    Some(r) => {
                        user.next += 1;
                        Action::Send(r.clone())
                    }
                    None => Action::Done,
                }
            }
            Last::Failed(_) => Action::Done,
        }
    }
}
