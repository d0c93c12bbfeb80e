//! From a parsed file to a runnable [`Workload`]: names resolved, request names and checks
//! numbered, static requests serialized once, thresholds parsed. Every problem is collected.

use crate::data::read_sources;
use crate::diag::{did_you_mean, Diag, Diagnostics, Pos};
use crate::hole::Escape;
use crate::load::{read_load, LoadPlan};
use crate::program::{Program, Scenario, Step};
use crate::read::{Fields, Reader};
use crate::resolve::Resolve;
use crate::step::{read_step, StepDraft};
use crate::template::Template;
use crate::yaml::Node;
use herd_http::Target;
use herd_result::{Criteria, Criterion};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

mod request;
use request::{compile_request, Names};

const TOP: [&str; 12] = [
    "target",
    "script",
    "protocol",
    "proto",
    "defaults",
    "load",
    "data",
    "scenarios",
    "thresholds",
    "seed",
    "faults",
    "proxy_api",
];
const DEFAULTS: [&str; 5] = [
    "headers",
    "timeout",
    "event_timeout",
    "follow_redirects",
    "cookies",
];
const SCENARIO: [&str; 3] = ["name", "weight", "steps"];

/// A workload file compiled: the parts of a [`crate::Workload`].
pub(crate) struct Compiled {
    pub program: Program,
    pub load: LoadPlan,
    pub timeout: Duration,
    /// `defaults: event_timeout`: the longest wait for an event stream's next event.
    pub event_timeout: Option<Duration>,
    pub thresholds: Vec<Criterion>,
    pub faults: Vec<crate::Fault>,
    pub proxy_api: Option<String>,
    pub http2: bool,
    /// The file's own `target:` when the command line gave another (`--target`).
    pub retargeted_from: Option<String>,
}

/// Compiles the text of a workload file; `file` is used in messages, `base` resolves CSV paths;
/// `retarget` (`--target`) replaces the file's own `target:`.
pub fn compile(
    src: &str,
    file: &Path,
    base: &Path,
    retarget: Option<&str>,
) -> Result<Compiled, Diagnostics> {
    let root = crate::yaml::parse(src).map_err(|d| Diagnostics::new(file, vec![d]))?;
    let mut r = Reader {
        base: base.to_path_buf(),
        ..Reader::default()
    };
    let Some(top) = r.fields(&root, "the workload", &TOP) else {
        return Err(Diagnostics::new(file, r.diags));
    };
    let own_target = top
        .get("target")
        .and_then(|t| t.scalar())
        .map(str::to_owned);
    let target = match retarget {
        Some(url) => match Target::parse(url) {
            Ok(t) => Some(t),
            Err(e) => {
                r.report(Diag::new(root.at, format!("--target: {e}")));
                None
            }
        },
        None => read_target(&mut r, &top, &root),
    };
    let defaults = top
        .get("defaults")
        .and_then(|d| read_defaults(&mut r, d))
        .unwrap_or_default();
    let load = match top.get("load") {
        Some(l) => read_load(&mut r, l),
        None => {
            r.report(
                Diag::new(root.at, "the workload needs a `load`")
                    .hint("e.g. load: { model: closed, users: 10, duration: 1m }"),
            );
            None
        }
    };
    let (sources, broken) = top
        .get("data")
        .map(|d| read_sources(&mut r, d, base))
        .unwrap_or_default();
    let seed = top
        .get("seed")
        .and_then(|s| r.count(s, "seed"))
        .unwrap_or(0);
    let protocol = top
        .get("protocol")
        .map(|p| (read_protocol(&mut r, p), p.at));
    let types = top.get("proto").and_then(|p| read_proto(&mut r, p));
    let mut script = top
        .get("script")
        .map(|s| crate::lua::LuaScript::read(&mut r, s, base));
    let drafts = read_scenarios(&mut r, &top, &root);
    let mut names = Names::default();
    let mut checks = Vec::new();
    let mut variables = Vec::new();
    let scenarios = {
        let mut b = Build {
            defaults: &defaults,
            target: target.as_ref(),
            types: types.as_ref(),
            sources: &sources,
            broken: &broken,
            variables: &mut variables,
            names: &mut names,
            checks: &mut checks,
        };
        b.scenarios(&mut r, drafts, script.as_mut())
    };
    let http2 = speaks_h2(&mut r, protocol, &scenarios);
    if http2 {
        sockets_over_h2(&mut r, protocol.map_or(root.at, |(_, at)| at), &scenarios);
    }
    let thresholds = top
        .get("thresholds")
        .map(|t| read_thresholds(&mut r, t, &names))
        .unwrap_or_default();
    let faults = top
        .get("faults")
        .map(|f| crate::fault::read_faults(&mut r, f))
        .unwrap_or_default();
    let proxy_api = top
        .get("proxy_api")
        .and_then(|p| crate::fault::read_proxy_api(&mut r, p));
    if r.diags.is_empty() {
        if let (Some(target), Some(load)) = (target, load) {
            let mut program = Program::new(
                target,
                sources,
                scenarios,
                names.list,
                checks,
                variables.len(),
                defaults.cookies,
                false,
                seed,
            );
            program.lua = script;
            return Ok(Compiled {
                program,
                load,
                timeout: defaults.timeout,
                event_timeout: defaults.event_timeout,
                thresholds,
                faults,
                proxy_api,
                http2,
                retargeted_from: retarget.and(own_target),
            });
        }
    }
    Err(Diagnostics::new(file, r.diags))
}

/// `target:`, which every workload needs.
fn read_target(r: &mut Reader, top: &Fields, root: &Node) -> Option<Target> {
    match top.get("target") {
        None => {
            r.report(
                Diag::new(root.at, "the workload needs a `target`")
                    .hint("e.g. target: http://127.0.0.1:8080"),
            );
            None
        }
        Some(t) => r
            .string(t, "target")
            .and_then(|url| match Target::parse(&url) {
                Ok(t) => Some(t),
                Err(e) => {
                    r.error(t.at, e.to_string());
                    None
                }
            }),
    }
}

/// What every request of the workload gets unless its step says otherwise (`defaults:`).
struct Defaults {
    timeout: Duration,
    event_timeout: Option<Duration>,
    follow: bool,
    cookies: bool,
    headers: Vec<(String, Template)>,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            timeout: Duration::from_secs(10),
            event_timeout: None,
            follow: false,
            cookies: true,
            headers: Vec::new(),
        }
    }
}

/// `defaults:`; `None` when it is not a map of the known keys (reported).
fn read_defaults(r: &mut Reader, d: &Node) -> Option<Defaults> {
    let f = r.fields(d, "defaults", &DEFAULTS)?;
    let mut out = Defaults::default();
    if let Some(t) = f.get("timeout").and_then(|t| r.duration(t, "timeout")) {
        out.timeout = t;
    }
    if let Some(n) = f.get("event_timeout") {
        out.event_timeout = r.duration(n, "event_timeout");
        if out.event_timeout.is_some_and(|t| t.is_zero()) {
            r.report(
                Diag::new(n.at, "`event_timeout` must be longer than 0s")
                    .hint("e.g. event_timeout: 2s, or leave it out to wait as long as `timeout`"),
            );
        }
    }
    out.follow = f
        .get("follow_redirects")
        .and_then(|b| r.boolean(b, "follow_redirects"))
        .unwrap_or(false);
    out.cookies = f
        .get("cookies")
        .and_then(|b| r.boolean(b, "cookies"))
        .unwrap_or(true);
    if let Some(h) = f.get("headers").and_then(|h| r.map(h, "headers")) {
        let mut diags = Vec::new();
        for (k, v) in h.entries() {
            if let (Some(name), Some(text)) = (k.scalar(), r.string(v, "a header value")) {
                out.headers.push((
                    name.to_owned(),
                    Template::parse(v, &text, Escape::None, &mut diags),
                ));
            }
        }
        r.diags.extend(diags);
    }
    Some(out)
}

/// `protocol:`: whether the workload speaks HTTP/2.
fn read_protocol(r: &mut Reader, p: &Node) -> bool {
    match r.string(p, "protocol").as_deref() {
        Some("h1" | "http/1.1") => false,
        Some("h2" | "http/2") => true,
        Some(other) => {
            r.report(
                Diag::new(p.at, format!("protocol `{other}` is not known"))
                    .hint("write protocol: h1 (HTTP/1.1, the default) or protocol: h2 (HTTP/2)"),
            );
            false
        }
        None => false,
    }
}

/// Whether the workload speaks HTTP/2: as its `protocol:` says, else when a `grpc:` step's
/// call needs it (one that says HTTP/1.1 beside a call is refused).
fn speaks_h2(r: &mut Reader, protocol: Option<(bool, Pos)>, scenarios: &[Scenario]) -> bool {
    let calls = scenarios
        .iter()
        .flat_map(|s| &s.steps)
        .any(|s| matches!(s, Step::Send(send) if send.grpc.is_some()));
    match protocol {
        Some((false, at)) if calls => {
            r.report(
                Diag::new(
                    at,
                    "a grpc step's calls ride HTTP/2, and this workload says HTTP/1.1",
                )
                .hint("write protocol: h2, or leave `protocol` out"),
            );
            false
        }
        Some((h2, _)) => h2,
        None => calls,
    }
}

/// A workload that speaks HTTP/2 (`protocol: h2` at `at`, or a grpc step's) cannot open
/// sockets with HTTP/1.1's Upgrade: said when it has a `ws: { connect }` step.
fn sockets_over_h2(r: &mut Reader, at: Pos, scenarios: &[Scenario]) {
    let opens = |s: &Step| matches!(s, Step::Send(x) if x.socket == herd_engine::SocketRole::Open);
    if scenarios.iter().flat_map(|s| &s.steps).any(opens) {
        r.report(
            Diag::new(
                at,
                "a `ws: { connect }` step opens its socket with HTTP/1.1's Upgrade, and this \
                 workload speaks HTTP/2",
            )
            .hint("drop `protocol: h2`; a grpc step needs HTTP/2: put the sockets in a workload of their own"),
        );
    }
}

/// `proto:`: the `.proto` file (relative to the workload's folder) whose types the `grpc:`
/// steps' calls use, compiled in-process (its own folder searched for its imports).
fn read_proto(r: &mut Reader, p: &Node) -> Option<herd_grpc::DescriptorPool> {
    let file = r.string(p, "proto")?;
    let path = r.base.join(&file);
    match herd_grpc::pool(Some(&path), &[], None) {
        Ok(pool) => Some(pool),
        Err(e) => {
            let e = e
                .replace(
                    &format!("--proto {}", path.display()),
                    &format!("proto {file}"),
                )
                .replace("; --import-paths DIR,DIR names where its imports are", "");
            r.report(Diag::new(p.at, e));
            None
        }
    }
}

/// `scenarios:`, each read into a draft (its steps not yet compiled).
fn read_scenarios(r: &mut Reader, top: &Fields, root: &Node) -> Vec<ScenarioDraft> {
    let mut drafts = Vec::new();
    match top.get("scenarios") {
        None => r.report(
            Diag::new(root.at, "the workload needs `scenarios`")
                .hint("e.g. scenarios: [{ name: home, steps: [{ get: / }] }]"),
        ),
        Some(s) => {
            let items = r.seq(s, "scenarios").unwrap_or_default();
            // An empty list would leave nothing to pick from when the first user starts.
            if items.is_empty() && matches!(s.value, crate::yaml::Value::Seq(_)) {
                r.report(Diag::new(s.at, "`scenarios` is empty").hint(
                    "give at least one, e.g. scenarios: [{ name: home, steps: [{ get: / }] }]",
                ));
            }
            for sc in items {
                if let Some(d) = read_scenario(r, sc) {
                    drafts.push(d);
                }
            }
        }
    }
    drafts
}

/// What the scenarios' steps are compiled against, and what they add to the program.
struct Build<'a> {
    defaults: &'a Defaults,
    target: Option<&'a Target>,
    types: Option<&'a herd_grpc::DescriptorPool>,
    sources: &'a [crate::data::Source],
    broken: &'a [String],
    variables: &'a mut Vec<String>,
    names: &'a mut Names,
    checks: &'a mut Vec<String>,
}

impl Build<'_> {
    /// The drafts' steps compiled: each request resolved against the data, variables and script.
    fn scenarios(
        &mut self,
        r: &mut Reader,
        drafts: Vec<ScenarioDraft>,
        mut script: Option<&mut crate::lua::LuaScript>,
    ) -> Vec<Scenario> {
        let mut scenarios = Vec::new();
        let mut seen = HashMap::new();
        for d in drafts {
            if let Some(prev) = seen.insert(d.name.clone(), d.at) {
                r.error(
                    d.at,
                    format!(
                        "scenario `{}` is named twice (first at line {})",
                        d.name, prev.line
                    ),
                );
            }
            let mut ctx = Resolve {
                sources: self.sources,
                variables: self.variables,
                all_extracted: &d.extracted_anywhere,
                broken: self.broken,
                known: Vec::new(),
                used: Vec::new(),
                diags: &mut r.diags,
                lua: script.as_deref_mut(),
            };
            let mut steps = Vec::new();
            // An http(s):// target's `ws:` steps: where the scenario's socket was opened.
            let mixed = self.target.is_some_and(|t| !t.websocket());
            let mut open: Option<Pos> = None;
            for step in d.steps {
                match step {
                    StepDraft::Think(t) => steps.push(Step::Think(t)),
                    StepDraft::Connect(at) if mixed => ctx.diags.push(
                        Diag::new(
                            at,
                            "`ws: connect` in an http(s):// target's workload needs the path to open the socket on",
                        )
                        .hint("e.g. ws: { connect: /chat } (a ws:// or wss:// URL on the target's host too)"),
                    ),
                    StepDraft::Connect(_) => {
                        crate::sockets::close_last(&mut steps);
                    }
                    StepDraft::Close(at) if mixed => {
                        if open.take().is_some() {
                            crate::sockets::close_socket(&mut steps);
                        } else {
                            ctx.diags.push(
                                Diag::new(at, "`ws: close` closes a socket, and none is open here")
                                    .hint("open one before it with ws: { connect: /path }"),
                            );
                        }
                    }
                    StepDraft::Close(at) => {
                        if !crate::sockets::close_last(&mut steps) {
                            ctx.diags.push(
                                Diag::new(
                                    at,
                                    "`ws: close` closes the socket of a message sent before it",
                                )
                                .hint("put it after a `ws: { send }` step"),
                            );
                        }
                    }
                    StepDraft::Request(mut req) => {
                        if !socket_step(self.target, &mut req, ctx.diags, &mut steps, &mut open) {
                            continue;
                        }
                        let message = req.socket == herd_engine::SocketRole::Message;
                        let send = compile_request(
                            *req,
                            &self.defaults.headers,
                            self.defaults.follow,
                            self.defaults.cookies,
                            self.target,
                            self.types,
                            &mut ctx,
                            self.names,
                            self.checks,
                        );
                        if let Some(mut s) = send {
                            if message && s.sent_check.is_none() {
                                // A message whose socket did not open is not sent: counted.
                                let name = &self.names.list[s.name as usize];
                                self.checks.push(format!("{name}: sent"));
                                s.sent_check = Some(self.checks.len() - 1);
                            }
                            steps.push(Step::Send(Box::new(s)));
                        }
                    }
                }
            }
            if open.is_some() {
                // Left open at the scenario's end: closed (1000) after its last exchange.
                crate::sockets::close_socket(&mut steps);
            }
            let mut used = ctx.used;
            used.sort_unstable();
            used.dedup();
            scenarios.push(Scenario {
                name: d.name,
                weight: d.weight,
                steps,
                sources: used,
            });
        }
        scenarios
    }
}

/// Request step `req` of `target`'s workload against its socket (`open`: where the
/// scenario's socket was opened, in an http(s):// target's workload) before it is compiled:
/// whether it goes in (said why not); the socket before a connect, or before a `ws://`
/// target's `connect: true` message, closed.
fn socket_step(
    target: Option<&Target>,
    req: &mut crate::step::RequestDraft,
    diags: &mut Vec<Diag>,
    steps: &mut [Step],
    open: &mut Option<Pos>,
) -> bool {
    match target {
        Some(t) if !t.websocket() => {
            let was_open = open.is_some();
            if !crate::sockets::on_socket(req, t, open, diags) {
                return false;
            }
            if req.socket == herd_engine::SocketRole::Open && was_open {
                crate::sockets::close_socket(steps);
            }
        }
        _ => {
            if !crate::sockets::fits(req, target, diags) {
                return false;
            }
            if req.connect {
                crate::sockets::close_last(steps);
            }
        }
    }
    true
}

/// `thresholds:`, each naming requests the workload has.
fn read_thresholds(r: &mut Reader, t: &Node, names: &Names) -> Vec<Criterion> {
    let mut thresholds = Vec::new();
    for n in r.seq(t, "thresholds").unwrap_or_default() {
        let Some(text) = r.string(n, "a threshold") else {
            continue;
        };
        // One entry may hold several criteria: "p99 < 500ms, errors < 1%".
        match Criteria::parse(&text) {
            Ok(criteria) => {
                for th in criteria.items {
                    if let Some(name) = &th.name {
                        if !names.list.contains(name) {
                            let hint = did_you_mean(name, names.list.iter().map(|s| s.as_str()))
                                .unwrap_or_else(|| {
                                    format!("request names: {}", names.list.join(", "))
                                });
                            r.report(
                                Diag::new(
                                    n.at,
                                    format!("threshold `{text}`: no request is named `{name}`"),
                                )
                                .hint(hint),
                            );
                        }
                    }
                    thresholds.push(th);
                }
            }
            Err(diags) => {
                for d in diags {
                    let msg = format!("threshold column {}: {}", d.column, d.message);
                    let hint = (!d.hint.is_empty()).then_some(d.hint);
                    r.report(Diag::new(n.at, msg).hint_opt(hint));
                }
            }
        }
    }
    thresholds
}

struct ScenarioDraft {
    at: Pos,
    name: String,
    weight: u64,
    steps: Vec<StepDraft>,
    extracted_anywhere: Vec<String>,
}

fn read_scenario(r: &mut Reader, node: &Node) -> Option<ScenarioDraft> {
    let f = r.fields(node, "a scenario", &SCENARIO)?;
    let name = f.get("name").and_then(|n| r.string(n, "name"));
    if !f.has("name") {
        r.report(Diag::new(node.at, "a scenario needs a `name`").hint("e.g. name: browse"));
    }
    let weight = match f.get("weight") {
        None => Some(1),
        Some(w) => match r.count(w, "weight") {
            Some(0) => {
                r.report(
                    Diag::new(w.at, "a weight of 0 would never run this scenario")
                        .hint("give a weight of 1 or more, or remove the scenario"),
                );
                None
            }
            other => other,
        },
    };
    let mut steps = Vec::new();
    match f.get("steps") {
        // A misspelt `stpes` is already reported with its suggestion.
        None if f
            .entries()
            .iter()
            .any(|(k, _)| did_you_mean(k.scalar().unwrap_or_default(), ["steps"]).is_some()) => {}
        None => r.report(
            Diag::new(node.at, "a scenario needs `steps`").hint("e.g. steps: [{ get: / }]"),
        ),
        Some(s) => {
            let items = r.seq(s, "steps").unwrap_or_default();
            if items.is_empty() && matches!(s.value, crate::yaml::Value::Seq(_)) {
                r.error(s.at, "`steps` is empty");
            }
            for st in items {
                let step = if crate::ws_step::is_ws(st) {
                    crate::ws_step::read_ws_step(r, st)
                } else {
                    read_step(r, st)
                };
                if let Some(step) = step {
                    steps.push(step);
                }
            }
        }
    }
    let extracted_anywhere = steps
        .iter()
        .filter_map(|s| match s {
            StepDraft::Request(q) => Some(q.extract.iter().map(|(v, _, _)| v.clone())),
            StepDraft::Think(_) | StepDraft::Connect(_) | StepDraft::Close(_) => None,
        })
        .flatten()
        .collect();
    // A scenario with a bad name or weight is still checked step by step (the problem is
    // already recorded, so the file is refused anyway).
    Some(ScenarioDraft {
        at: node.at,
        name: name.unwrap_or_default(),
        weight: weight.unwrap_or(1),
        steps,
        extracted_anywhere,
    })
}
