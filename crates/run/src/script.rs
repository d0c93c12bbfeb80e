//! A URL run driven by a wrk Lua script (`herd run -s script.lua URL -- args`): the script is
//! loaded when the run is prepared, its threads are set up (`setup`, `init`, a first
//! `request()`) before any load, and `done()` runs on what was measured. What the script
//! printed and its errors belong to the result.

use crate::what::UrlRequest;
use crate::RunError;
use herd_engine::{Plan, Progress, RunOutput, SystemClock};
use herd_http::{HttpTransport, TlsOptions};
use herd_lua::{Summary, Wrk, WrkScript, WrkUrl};
use herd_result::RunResult;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The error class Lua errors during a run are counted under, in `errors` and `error_samples`.
pub(crate) const LUA_ERRORS: &str = "lua";

/// Reads and loads the script for `r`: a missing file, a syntax error or a failing top level
/// is a problem reported before anything is sent.
pub(crate) fn load(
    file: &Path,
    args: &[String],
    r: &UrlRequest,
    method_given: bool,
) -> Result<Wrk, String> {
    let t = &r.target;
    let port = t.port().to_string();
    let url = WrkUrl {
        scheme: t.scheme().as_str().to_owned(),
        host: t.host().to_owned(),
        port: t.authority().ends_with(&format!(":{port}")).then_some(port),
        path: t.path_and_query().to_owned(),
    };
    // wrk's `args[0]` is the URL; the arguments after `--` follow.
    let args = std::iter::once(format!(
        "{}://{}{}",
        t.scheme().as_str(),
        t.authority(),
        t.path_and_query()
    ))
    .chain(args.iter().cloned())
    .collect();
    let mut source = herd_lua::Source::read(file, url, args).map_err(|e| e.to_string())?;
    source.addr = Some(t.addr());
    source.headers = r.spec.headers.clone();
    if method_given || !r.body().is_empty() {
        source.method = Some(r.spec.method.clone());
    }
    if !r.body().is_empty() {
        source.body = Some(r.body().to_vec());
    }
    Wrk::load(source).map_err(|e| e.to_string())
}

/// The worker threads of a scripted run, set up and waiting for the load.
pub(crate) struct Threads {
    transports: Vec<HttpTransport>,
    scripts: Vec<Mutex<Option<WrkScript>>>,
    /// How many requests the script's `request()` returns at once.
    depth: usize,
}

impl Threads {
    /// A `request()` that returns several requests is pipelined, as wrk does: a closed run
    /// without `--pipeline` gives each connection a window of that many (its users share it,
    /// each sending one of the requests per iteration). Returns the window when it applied.
    pub(crate) fn pipeline(&mut self, plan: &mut Plan) -> Option<usize> {
        let herd_engine::Load::Closed { users } = plan.load else {
            return None;
        };
        if self.depth < 2
            || plan.pipeline > 1
            || plan.connections.is_some()
            || !plan.stages.is_empty()
        {
            return None;
        }
        plan.connections = Some(users);
        plan.load = herd_engine::Load::Closed {
            users: users.saturating_mul(self.depth as u64),
        };
        plan.pipeline = self.depth;
        // `-n` counts request() calls, each of which is now `depth` iterations.
        plan.requests = plan.requests.map(|n| n.saturating_mul(self.depth as u64));
        for s in &mut self.scripts {
            if let Some(s) = s.get_mut().expect("script lock").as_mut() {
                s.spread();
            }
        }
        Some(self.depth)
    }
}

/// Sets up one Lua state per worker thread of `plan` (wrk's `setup`, `init`, a first
/// `request()`) and a transport for each, to where `setup` sent it (`thread.addr`; the site's
/// name stays in the Host header and TLS SNI).
pub(crate) fn start(
    plan: &Plan,
    r: &UrlRequest,
    wrk: &Mutex<Wrk>,
    options: &TlsOptions,
    proxy: Option<&herd_http::Proxy>,
) -> Result<Threads, RunError> {
    let mut wrk = wrk.lock().expect("script lock");
    let scripts = wrk
        .start(plan.effective_threads())
        .map_err(|e| RunError::Invalid(vec![format!("{e}\nnothing was sent")]))?;
    let transports = wrk
        .addrs()
        .into_iter()
        .map(|a| {
            let target = r.target.clone().with_addr(a.unwrap_or(r.target.addr()));
            let t = HttpTransport::new(&target, options.clone())?;
            Ok(match proxy {
                Some(p) => t.through(p, &target),
                None => t,
            })
        })
        .collect::<Result<Vec<_>, herd_http::HttpError>>()
        .map_err(|e| RunError::Start(e.to_string()))?;
    let scripts = scripts.into_iter().map(|s| Mutex::new(Some(s))).collect();
    Ok(Threads {
        transports,
        scripts,
        depth: wrk.depth(),
    })
}

/// Plays `plan` on the threads set up, each with its own Lua state.
pub(crate) fn play(
    plan: &Plan,
    threads: Threads,
    hooks: &herd_engine::Hooks,
    progress: impl FnMut(&Progress),
) -> Result<RunOutput, herd_engine::RunError> {
    let Threads {
        transports,
        scripts,
        ..
    } = threads;
    herd_engine::run(
        plan,
        Arc::new(SystemClock),
        |k| transports[k].wire(),
        |k| {
            scripts[k]
                .lock()
                .expect("script slot lock")
                .take()
                .expect("one script per worker thread")
        },
        hooks.clone(),
        progress,
    )
}

/// Runs `done()` on what was measured and adds the script's part to the result: what it
/// printed (`script.output`) and its errors (the `lua` error class). An error in `done()`
/// is one of them: the measurement is kept whatever the script does.
pub(crate) fn conclude(wrk: &Mutex<Wrk>, file: &Path, out: &RunOutput, result: &mut RunResult) {
    let wrk = wrk.lock().expect("script lock");
    let done_error = wrk.done(&Summary::of(out)).err().map(|e| e.to_string());
    let (mut count, mut sample) = wrk.errors();
    if let Some(e) = done_error {
        count += 1;
        sample.get_or_insert(e);
    }
    // `response()`'s errors were its responses' (`ErrorKind::Lua`); these are the rest.
    result.add_errors(LUA_ERRORS, count, sample.as_deref());
    result.extra.insert(
        "script".to_owned(),
        serde_json::json!({
            "file": file.display().to_string(),
            "output": wrk.take_output(),
        }),
    );
}
