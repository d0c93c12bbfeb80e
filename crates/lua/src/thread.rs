//! wrk's `thread` object: `setup(thread)` in the main state and `wrk.thread` in the thread's own
//! state are two handles on the same thread. `thread:get` and `thread:set` copy values between
//! the states (nil, booleans, numbers, strings and tables of them), `thread.addr` chooses where
//! its connections go, `thread:stop()` ends its users.

use crate::addr::Addr;
use mlua::{Lua, UserData, UserDataFields, UserDataMethods, Value, WeakLua};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Tables nested deeper than this are refused rather than followed (a table holding itself).
const MAX_DEPTH: usize = 32;

#[derive(Clone)]
pub(crate) struct Thread {
    /// The thread's own state. Weak: the thread's state holds this object as `wrk.thread`.
    pub state: WeakLua,
    pub addr: Arc<Mutex<Option<SocketAddr>>>,
    pub stopped: Arc<AtomicBool>,
}

impl Thread {
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    fn state(&self) -> mlua::Result<Lua> {
        self.state
            .try_upgrade()
            .ok_or_else(|| mlua::Error::runtime("the thread's Lua state has ended"))
    }
}

impl UserData for Thread {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("addr", |_, t| {
            Ok(t.addr.lock().expect("addr lock").map(Addr))
        });
        fields.add_field_method_set("addr", |_, t, a: Addr| {
            *t.addr.lock().expect("addr lock") = Some(a.0);
            Ok(())
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |lua, t, name: String| {
            let state = t.state()?;
            let v: Value = state.globals().get(name.as_str())?;
            copy(&v, lua, 0)
        });
        methods.add_method("set", |lua, t, (name, v): (String, Value)| {
            let state = t.state()?;
            let _ = lua;
            let v = copy(&v, &state, 0)?;
            state.globals().set(name, v)
        });
        methods.add_method("stop", |_, t, ()| {
            t.stopped.store(true, Ordering::Relaxed);
            Ok(())
        });
    }
}

/// `v` rebuilt in another state.
fn copy(v: &Value, to: &Lua, depth: usize) -> mlua::Result<Value> {
    Ok(match v {
        Value::Nil => Value::Nil,
        Value::Boolean(b) => Value::Boolean(*b),
        Value::Integer(i) => Value::Integer(*i),
        Value::Number(n) => Value::Number(*n),
        Value::String(s) => Value::String(to.create_string(s.as_bytes())?),
        Value::Table(t) if depth < MAX_DEPTH => {
            let out = to.create_table()?;
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                out.set(copy(&k, to, depth + 1)?, copy(&v, to, depth + 1)?)?;
            }
            Value::Table(out)
        }
        Value::UserData(ud) if ud.is::<Addr>() => {
            Value::UserData(to.create_userdata(*ud.borrow::<Addr>()?)?)
        }
        Value::Table(_) => {
            return Err(mlua::Error::runtime(format!(
                "cannot pass a table nested deeper than {MAX_DEPTH} levels between threads"
            )))
        }
        other => {
            return Err(mlua::Error::runtime(format!(
            "cannot pass a {} between threads (nil, booleans, numbers, strings and tables only)",
            other.type_name()
        )))
        }
    })
}
