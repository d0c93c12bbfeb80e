//! wrk's Lua scripting for herd: `herd run -s script.lua URL [-- args]` runs wrk's scripts
//! unchanged (wrk's SCRIPTING document). A main state runs `setup(thread)` for each worker
//! thread and `done(summary, latency, requests)` at the end; each worker thread has its own
//! state, which runs `init(args)` and then `delay()`, `request()` and `response()` as the
//! engine's loop pulls them (see [`WrkScript`]). What is not defined costs nothing: without
//! `request()` the request is built once, without `response()` no body is kept.
//!
//! ```no_run
//! use herd_lua::{Source, Wrk, WrkUrl};
//! let url = WrkUrl {
//!     scheme: "http".into(),
//!     host: "127.0.0.1".into(),
//!     port: Some("8080".into()),
//!     path: "/".into(),
//! };
//! let source = Source::read("post.lua", url, vec![])?;
//! let mut wrk = Wrk::load(source)?;
//! let scripts = wrk.start(2)?; // one per worker thread, handed to herd_engine::run
//! # Ok::<(), herd_lua::LuaError>(())
//! ```

mod addr;
mod done;
mod functions;
mod output;
mod script;
mod source;
mod split;
mod state;
mod thread;

pub use done::{Summary, WrkErrors};
pub use functions::{Functions, Judged};
pub use script::{WrkScript, WrkUser};
pub use source::{LuaError, Source, WrkUrl};

use output::{Output, Tally};

use script::Hooks;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use thread::Thread;

/// A script's run: the main state (`setup`, `done`) and the worker threads' states.
pub struct Wrk {
    source: Source,
    main: mlua::Lua,
    output: Output,
    threads: Vec<(mlua::Lua, Thread)>,
    tally: Arc<Tally>,
    depth: usize,
}

impl Wrk {
    /// Loads the script into the main state: a syntax error or a failing top level is reported
    /// here, before anything is sent.
    pub fn load(source: Source) -> Result<Wrk, LuaError> {
        let output = Output::default();
        let main = state::open(&source, &output)?;
        Ok(Wrk {
            source,
            main,
            output,
            threads: Vec::new(),
            tally: Arc::default(),
            depth: 1,
        })
    }

    /// How many requests the first `request()` returned (known after [`Wrk::start`]): wrk
    /// pipelines them on a connection, so the run gives each connection that window.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Makes the states of `n` worker threads: `setup(thread)` in the main state for each, then
    /// `init(args)` and a first `request()` (checked to be HTTP) in each thread's own state, as
    /// wrk does. Any error stops here, before the load.
    pub fn start(&mut self, n: usize) -> Result<Vec<WrkScript>, LuaError> {
        self.threads.clear();
        self.tally.reset();
        let mut scripts = Vec::with_capacity(n);
        for k in 0..n {
            let lua = state::open(&self.source, &self.output)?;
            let thread = Thread {
                state: lua.weak(),
                addr: Arc::new(Mutex::new(self.source.addr)),
                stopped: Arc::new(AtomicBool::new(false)),
            };
            let fail = |e: mlua::Error| LuaError::Script(state::message(&e));
            let setup = || -> mlua::Result<()> {
                let wrk: mlua::Table = lua.globals().get("wrk")?;
                wrk.set("thread", thread.clone())?;
                if let mlua::Value::Function(f) = self.main.globals().get("setup")? {
                    let t = self.main.create_userdata(thread.clone())?;
                    f.call::<()>(t)?;
                }
                Ok(())
            };
            setup().map_err(fail)?;
            let wrk: mlua::Table = lua.globals().get("wrk").map_err(fail)?;
            let init: mlua::Function = wrk.get("init").map_err(fail)?;
            let args = lua.create_table().map_err(fail)?;
            // As in wrk, args[0] is the URL and the arguments after `--` follow from 1.
            for (i, a) in self.source.args.iter().enumerate() {
                args.set(i, a.as_str()).map_err(fail)?;
            }
            init.call::<()>(args).map_err(fail)?;
            let hooks = Hooks::of(&lua).map_err(fail)?;
            // wrk checks the first thread's request() before the run (a script's counter sees
            // that call); every thread's static request is built here.
            let check = |f: mlua::Result<mlua::LuaString>| -> Result<Vec<_>, LuaError> {
                let s = f.map_err(fail)?;
                split::split(&s.as_bytes(), hooks.keep_response()).map_err(|e| {
                    LuaError::Script(format!("{}: request() returned {e}", self.source.file))
                })
            };
            let fixed = match &hooks.request {
                Some(f) if k == 0 => {
                    self.depth = check(f.call(()))?.len();
                    Vec::new()
                }
                Some(_) => Vec::new(),
                None => {
                    let fixed = check(
                        wrk.get::<mlua::Function>("request")
                            .and_then(|f| f.call(())),
                    )?;
                    self.depth = fixed.len();
                    fixed
                }
            };
            scripts.push(WrkScript {
                lua: lua.clone(),
                thread: thread.clone(),
                hooks,
                fixed: fixed.into(),
                last: RefCell::new(None),
                tally: Arc::clone(&self.tally),
                spread: false,
                users: std::cell::Cell::new(0),
            });
            self.threads.push((lua, thread));
        }
        Ok(scripts)
    }

    /// Where each thread's connections go, when `setup` chose (`thread.addr`).
    pub fn addrs(&self) -> Vec<Option<SocketAddr>> {
        self.threads
            .iter()
            .map(|(_, t)| *t.addr.lock().expect("addr lock"))
            .collect()
    }

    /// Calls `done()` in the main state after the run; its error names the file and line.
    pub fn done(&self, summary: &Summary) -> Result<(), LuaError> {
        done::call(&self.main, summary).map_err(|e| LuaError::Script(state::message(&e)))
    }

    /// Lua errors during the run: how many, and the first one's message.
    pub fn errors(&self) -> (u64, Option<String>) {
        self.tally.get()
    }

    /// What the scripts printed so far (taken: the next call starts empty).
    pub fn take_output(&self) -> String {
        self.output.take()
    }
}
