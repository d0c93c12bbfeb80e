//! One request step compiled: its headers with the defaults, names resolved, its checks
//! numbered, and, without holes, its bytes serialized once.

use crate::diag::Diag;
use crate::program::Send;
use crate::resolve::{slot_of, Resolve};
use crate::step::RequestDraft;
use crate::template::Template;
use herd_http::{prepare, Target};

#[allow(clippy::too_many_arguments)]
pub(super) fn compile_request(
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
        uses_vars |= ctx.header(t);
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
    let expect = q.expect.take().map(|e| {
        let id = check(e.label());
        (e, id)
    });
    let mut extract = Vec::new();
    for (var, _, how) in q.extract {
        let c = check(format!("extract {var}"));
        extract.push((slot_of(ctx.variables, &var), how, c));
        if !ctx.known.contains(&var) {
            ctx.known.push(var);
        }
    }
    let reads = follows
        || !extract.is_empty()
        || q.body_contains.is_some()
        || lua_check.is_some()
        || expect.is_some();
    let keep = cookies || reads;
    // The cookie jar alone reads only `Set-Cookie`: the rest of the response is not copied.
    let only_cookies = !reads;
    let is_static =
        q.path.is_static() && q.body.is_static() && headers.iter().all(|(_, t)| t.is_static());
    let llm = q.llm;
    let mut send = Send {
        llm,
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
        expect,
        close: q.close,
    };
    if is_static && send.method == crate::step::WS {
        send.prebuilt = Some((send.static_spec(), send.message()));
    } else if let (true, Some(target)) = (is_static, target) {
        let spec = send.static_spec();
        match prepare(target, &spec) {
            Ok(mut req) => {
                req.name = send.name;
                req.keep_response = keep;
                req.keep_only_cookies = only_cookies;
                req.llm = llm;
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

/// Request names in order of first use; the same name shares its stats.
#[derive(Default)]
pub(super) struct Names {
    pub(super) list: Vec<String>,
}

impl Names {
    pub(super) fn index(&mut self, name: &str) -> u32 {
        match self.list.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                self.list.push(name.to_owned());
                (self.list.len() - 1) as u32
            }
        }
    }
}
