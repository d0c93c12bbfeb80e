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
mod script;
mod split;
mod state;
mod thread;

pub use done::{Summary, WrkErrors};
pub use functions::{Functions, Judged};
pub use script::{WrkScript, WrkUser};

use script::Hooks;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use thiserror::Error;
use thread::Thread;

/// What a script's print and io.write may add to a run's output; beyond it the rest is cut,
/// so a script printing on every request cannot exhaust memory.
const OUTPUT_LIMIT: usize = 1 << 20;

#[derive(Debug, Error)]
pub enum LuaError {
    #[error("cannot read the script {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// The script failed to load or its `setup`, `init` or first `request()` failed; the
    /// message names the file and line.
    #[error("{0}")]
    Script(String),
    #[error("cannot set up Lua: {0}")]
    Setup(String),
}

/// The script and what wrk puts in its `wrk` table.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file as the user named it, for messages (`post.lua:3: ...`).
    pub file: String,
    pub code: String,
    pub scheme: String,
    pub host: String,
    /// The port when the URL gives one (wrk leaves it nil otherwise).
    pub port: Option<String>,
    pub path: String,
    /// Set by the command line (`-m`, `-d`/`--body`), else the script's or GET.
    pub method: Option<String>,
    pub body: Option<Vec<u8>>,
    /// `-H` headers, in `wrk.headers` before the script runs.
    pub headers: Vec<(String, String)>,
    /// What `init(args)` is handed: the URL, then the arguments after `--` (wrk's `args[0]` is
    /// the URL).
    pub args: Vec<String>,
    /// Where connections go unless `setup` sets `thread.addr`.
    pub addr: Option<SocketAddr>,
}

impl Source {
    /// Reads `file` for a run against `url`, with `args` for `init`.
    pub fn read(
        file: impl AsRef<Path>,
        url: WrkUrl,
        args: Vec<String>,
    ) -> Result<Source, LuaError> {
        let file = file.as_ref();
        let code = std::fs::read_to_string(file).map_err(|source| LuaError::Read {
            file: file.display().to_string(),
            source,
        })?;
        Ok(Source {
            file: file.display().to_string(),
            code,
            scheme: url.scheme,
            host: url.host,
            port: url.port,
            path: url.path,
            method: None,
            body: None,
            headers: Vec::new(),
            args,
            addr: None,
        })
    }
}

/// The URL as wrk's table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrkUrl {
    pub scheme: String,
    pub host: String,
    /// As written in the URL; nil in Lua when it gives none.
    pub port: Option<String>,
    /// Path and query.
    pub path: String,
}

/// What the scripts printed, in order, shared by the states of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Output(Arc<Mutex<(String, bool)>>);

impl Output {
    pub fn push(&self, s: &str) {
        let mut o = self.0.lock().expect("output lock");
        if o.0.len() + s.len() <= OUTPUT_LIMIT {
            o.0.push_str(s);
        } else if !o.1 {
            o.1 = true;
            o.0.push_str("\n[herd: the script printed more than 1 MiB; the rest is left out]\n");
        }
    }

    fn take(&self) -> String {
        std::mem::take(&mut self.0.lock().expect("output lock").0)
    }
}

/// Lua errors during the run: counted as one error class, with the first message kept.
#[derive(Debug, Default)]
pub(crate) struct Tally(Mutex<(u64, Option<String>)>);

impl Tally {
    pub fn add(&self, message: String) {
        let mut t = self.0.lock().expect("tally lock");
        t.0 += 1;
        t.1.get_or_insert(message);
    }
}

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
        *self.tally.0.lock().expect("tally lock") = (0, None);
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
        self.tally.0.lock().expect("tally lock").clone()
    }

    /// What the scripts printed so far (taken: the next call starts empty).
    pub fn take_output(&self) -> String {
        self.output.take()
    }
}
