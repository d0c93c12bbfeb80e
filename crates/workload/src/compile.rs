//! From a parsed file to a runnable [`Workload`]: names resolved, request names and checks
//! numbered, static requests serialized once, thresholds parsed. Every problem is collected.

use crate::data::read_sources;
use crate::diag::{did_you_mean, Diag, Diagnostics, Pos};
use crate::load::read_load;
use crate::program::{Program, Scenario, Send, Step};
use crate::read::Reader;
use crate::resolve::{slot_of, Resolve};
use crate::step::{read_step, RequestDraft, StepDraft};
use crate::template::{Escape, Template};
use crate::yaml::Node;
use crate::Workload;
use herd_http::{prepare, Target};
use herd_result::Criteria;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

const TOP: [&str; 9] = [
    "target",
    "script",
    "protocol",
    "defaults",
    "load",
    "data",
    "scenarios",
    "thresholds",
    "seed",
];
const DEFAULTS: [&str; 4] = ["headers", "timeout", "follow_redirects", "cookies"];
const SCENARIO: [&str; 3] = ["name", "weight", "steps"];

/// Compiles the text of a workload file; `file` is used in messages, `base` resolves CSV paths.
pub fn compile(src: &str, file: &Path, base: &Path) -> Result<Workload, Diagnostics> {
    let root = crate::yaml::parse(src).map_err(|d| Diagnostics::new(file, vec![d]))?;
    let mut r = Reader {
        base: base.to_path_buf(),
        ..Reader::default()
    };
    let Some(top) = r.fields(&root, "the workload", &TOP) else {
        return Err(Diagnostics::new(file, r.diags));
    };
    let target = match top.get("target") {
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
    };
    let mut timeout = Duration::from_secs(10);
    let (mut follow, mut cookies) = (false, true);
    let mut default_headers: Vec<(String, Template)> = Vec::new();
    if let Some(d) = top.get("defaults") {
        if let Some(f) = r.fields(d, "defaults", &DEFAULTS) {
            if let Some(t) = f.get("timeout").and_then(|t| r.duration(t, "timeout")) {
                timeout = t;
            }
            follow = f
                .get("follow_redirects")
                .and_then(|b| r.boolean(b, "follow_redirects"))
                .unwrap_or(false);
            cookies = f
                .get("cookies")
                .and_then(|b| r.boolean(b, "cookies"))
                .unwrap_or(true);
            if let Some(h) = f.get("headers").and_then(|h| r.map(h, "headers")) {
                let mut diags = Vec::new();
                for (k, v) in h.entries() {
                    if let (Some(name), Some(text)) = (k.scalar(), r.string(v, "a header value")) {
                        default_headers.push((
                            name.to_owned(),
                            Template::parse(v, &text, Escape::None, &mut diags),
                        ));
                    }
                }
                r.diags.extend(diags);
            }
        }
    }
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
    let http2 = match top.get("protocol") {
        None => false,
        Some(p) => match r.string(p, "protocol").as_deref() {
            Some("h1" | "http/1.1") => false,
            Some("h2" | "http/2") => true,
            Some(other) => {
                r.report(
                    Diag::new(p.at, format!("protocol `{other}` is not known")).hint(
                        "write protocol: h1 (HTTP/1.1, the default) or protocol: h2 (HTTP/2)",
                    ),
                );
                false
            }
            None => false,
        },
    };
    let mut script = top
        .get("script")
        .map(|s| crate::lua::LuaScript::read(&mut r, s, base));
    let mut drafts = Vec::new();
    match top.get("scenarios") {
        None => r.report(
            Diag::new(root.at, "the workload needs `scenarios`")
                .hint("e.g. scenarios: [{ name: home, steps: [{ get: / }] }]"),
        ),
        Some(s) => {
            for sc in r.seq(s, "scenarios").unwrap_or_default() {
                if let Some(d) = read_scenario(&mut r, sc) {
                    drafts.push(d);
                }
            }
        }
    }
    let mut names = Names::default();
    let mut checks = Vec::new();
    let mut variables = Vec::new();
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
            sources: &sources,
            variables: &mut variables,
            all_extracted: &d.extracted_anywhere,
            broken: &broken,
            known: Vec::new(),
            used: Vec::new(),
            diags: &mut r.diags,
            lua: script.as_mut(),
        };
        let mut steps = Vec::new();
        for step in d.steps {
            match step {
                StepDraft::Think(t) => steps.push(Step::Think(t)),
                StepDraft::Request(req) => {
                    let send = compile_request(
                        *req,
                        &default_headers,
                        follow,
                        cookies,
                        target.as_ref(),
                        &mut ctx,
                        &mut names,
                        &mut checks,
                    );
                    if let Some(s) = send {
                        steps.push(Step::Send(Box::new(s)));
                    }
                }
            }
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
    let mut thresholds = Vec::new();
    if let Some(t) = top.get("thresholds") {
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
                                let hint =
                                    did_you_mean(name, names.list.iter().map(|s| s.as_str()))
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
    }
    if r.diags.is_empty() {
        if let (Some(target), Some(load)) = (target, load) {
            let program = Program::new(
                target,
                sources,
                scenarios,
                names.list,
                checks,
                variables.len(),
                cookies,
                false,
                seed,
            );
            let mut program = program;
            program.lua = script;
            let mut workload = Workload::new(program, Some(load), timeout, thresholds, file);
            workload.http2 = http2;
            return Ok(workload);
        }
    }
    Err(Diagnostics::new(file, r.diags))
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
                if let Some(step) = read_step(r, st) {
                    steps.push(step);
                }
            }
        }
    }
    let extracted_anywhere = steps
        .iter()
        .filter_map(|s| match s {
            StepDraft::Request(q) => Some(q.extract.iter().map(|(v, _, _)| v.clone())),
            StepDraft::Think(_) => None,
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

/// Request names in order of first use; the same name shares its stats.
#[derive(Default)]
struct Names {
    list: Vec<String>,
}

impl Names {
    fn index(&mut self, name: &str) -> u32 {
        match self.list.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                self.list.push(name.to_owned());
                (self.list.len() - 1) as u32
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn compile_request(
    mut q: RequestDraft,
    defaults: &[(String, Template)],
    follow: bool,
    cookies: bool,
    target: Option<&Target>,
    ctx: &mut Resolve<'_>,
    names: &mut Names,
    checks: &mut Vec<String>,
) -> Option<Send> {
    let name = q
        .name
        .clone()
        .unwrap_or_else(|| format!("{} {}", q.method, q.path_source));
    let mut headers: Vec<(String, Template)> = defaults
        .iter()
        .filter(|(n, _)| !q.headers.iter().any(|(m, _)| m.eq_ignore_ascii_case(n)))
        .cloned()
        .collect();
    headers.append(&mut q.headers);
    let mut uses_vars = ctx.template(&mut q.path);
    for (_, t) in headers.iter_mut() {
        uses_vars |= ctx.template(t);
    }
    // A body's values need not fit a path or header, but a Lua call in it can still fail.
    let body_calls_lua = !q.body.lua_mut().is_empty();
    ctx.template(&mut q.body);
    uses_vars |= body_calls_lua;
    let mut check = |label: String| {
        checks.push(format!("{name}: {label}"));
        checks.len() - 1
    };
    // A step can fail to go out when a value it uses is unset or unusable, or when a redirect
    // it follows points off the target: that is counted, never silent.
    let follows = q.follow_redirects.unwrap_or(follow);
    let sent_check = (uses_vars || follows).then(|| check("sent".to_owned()));
    let status_check = q.status.as_ref().map(|codes| {
        let list: Vec<String> = codes.iter().map(u16::to_string).collect();
        check(format!("status {}", list.join(" or ")))
    });
    let contains_check = q
        .body_contains
        .as_ref()
        .map(|s| check(format!("body contains {s:?}")));
    let lua_check = q.lua_check.as_ref().and_then(|(f, at)| {
        let what = format!("check `lua: {f}`");
        let index = crate::lua::bind(ctx.lua.as_deref_mut(), f, *at, &what, ctx.diags)?;
        Some((index, check(format!("lua {f}"))))
    });
    let mut extract = Vec::new();
    for (var, _, how) in q.extract {
        let c = check(format!("extract {var}"));
        extract.push((slot_of(ctx.variables, &var), how, c));
        if !ctx.known.contains(&var) {
            ctx.known.push(var);
        }
    }
    let reads = follows || !extract.is_empty() || q.body_contains.is_some() || lua_check.is_some();
    let keep = cookies || reads;
    // The cookie jar alone reads only `Set-Cookie`: the rest of the response is not copied.
    let only_cookies = !reads;
    let is_static =
        q.path.is_static() && q.body.is_static() && headers.iter().all(|(_, t)| t.is_static());
    let mut send = Send {
        name: names.index(&name),
        method: q.method,
        path: q.path,
        headers,
        body: q.body,
        keep,
        only_cookies,
        status: q.status.unwrap_or_default(),
        status_check,
        body_contains: q.body_contains.map(|s| (s, contains_check.unwrap_or(0))),
        lua_check,
        extract,
        follow: follows,
        sent_check,
        prebuilt: None,
        cache_slot: None,
    };
    if let (true, Some(target)) = (is_static, target) {
        let spec = send.static_spec();
        match prepare(target, &spec) {
            Ok(mut req) => {
                req.name = send.name;
                req.keep_response = keep;
                req.keep_only_cookies = only_cookies;
                send.prebuilt = Some((spec, req));
            }
            Err(e) => {
                ctx.diags.push(Diag::new(q.at, e.to_string()));
                return None;
            }
        }
    }
    Some(send)
}
