//! One request step compiled: its headers with the defaults, names resolved, its checks
//! numbered, and, without holes, its bytes serialized once.

use crate::diag::Diag;
use crate::grpc_call::GrpcSend;
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
    types: Option<&herd_grpc::DescriptorPool>,
    ctx: &mut Resolve<'_>,
    names: &mut Names,
    checks: &mut Vec<String>,
) -> Option<Send> {
    let method = match &q.grpc {
        Some(g) => Some(grpc_method(g, types, ctx)?),
        None => None,
    };
    if let Some(m) = &method {
        q.path = Template::literal(&GrpcSend::path(m));
    }
    let name = q.name.clone().unwrap_or_else(|| match &method {
        Some(m) => GrpcSend::path(m)[1..].to_owned(),
        None => format!("{} {}", q.method, q.path_source),
    });
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
    let status_check = q.check.status.as_ref().map(|codes| {
        let list: Vec<String> = codes.iter().map(u16::to_string).collect();
        check(format!("status {}", list.join(" or ")))
    });
    let codes = q.check.grpc_status.take();
    let grpc = method.map(|m| grpc_send(m, codes, &mut check));
    let contains_check = q
        .check
        .body_contains
        .as_ref()
        .map(|s| check(format!("body contains {s:?}")));
    let json_checks: Vec<_> = std::mem::take(&mut q.check.json)
        .into_iter()
        .map(|(text, path, want)| {
            let id = check(format!("json {text} is {want:?}"));
            (path, want, id)
        })
        .collect();
    let lua_check = q.check.lua.as_ref().and_then(|(f, at)| {
        let what = format!("check `lua: {f}`");
        let index = crate::lua::bind(ctx.lua.as_deref_mut(), f, *at, &what, ctx.diags)?;
        Some((index, check(format!("lua {f}"))))
    });
    let expect = q.expect.take().map(|e| {
        let id = check(e.label());
        (e, id)
    });
    let extract = extracts(q.extract, ctx, &mut check);
    let reads = follows
        || !extract.is_empty()
        || q.check.body_contains.is_some()
        || lua_check.is_some()
        || !json_checks.is_empty()
        || grpc.is_some()
        || expect.is_some();
    let keep = cookies || reads;
    // The cookie jar alone reads only `Set-Cookie`: the rest of the response is not copied.
    let only_cookies = !reads;
    let is_static =
        q.path.is_static() && q.body.is_static() && headers.iter().all(|(_, t)| t.is_static());
    let mut send = Send {
        llm: q.llm,
        name: names.index(&name),
        method: q.method,
        path: q.path,
        headers,
        body: q.body,
        keep,
        only_cookies,
        status: q.check.status.unwrap_or_default(),
        status_check,
        body_contains: q
            .check
            .body_contains
            .map(|s| (s, contains_check.unwrap_or(0))),
        lua_check,
        json_checks,
        grpc,
        extract,
        follow: follows,
        sent_check,
        prebuilt: None,
        cache_slot: None,
        expect,
        close: q.close,
        socket: q.socket,
    };
    if let (true, Some(target)) = (is_static, target) {
        send.prebuilt = Some(
            prebuild(&send, target)
                .map_err(|e| ctx.diags.push(Diag::new(q.at, e)))
                .ok()?,
        );
    }
    Some(send)
}

/// Each variable a step extracts, its slot and its check numbered; known from then on.
fn extracts(
    list: Vec<(String, crate::diag::Pos, crate::extract::Extract)>,
    ctx: &mut Resolve<'_>,
    mut check: impl FnMut(String) -> usize,
) -> Vec<(usize, crate::extract::Extract, usize)> {
    let mut extract = Vec::new();
    for (var, _, how) in list {
        let c = check(format!("extract {var}"));
        extract.push((slot_of(ctx.variables, &var), how, c));
        if !ctx.known.contains(&var) {
            ctx.known.push(var);
        }
    }
    extract
}

/// A step without holes serialized once (a call's message encoded from its JSON first; a
/// WebSocket message is its body's bytes, framed by the socket).
fn prebuild(
    send: &Send,
    target: &Target,
) -> Result<(herd_http::RequestSpec, herd_engine::Request), String> {
    if send.method == crate::step::WS {
        return Ok((send.static_spec(), send.message()));
    }
    let mut spec = send.static_spec();
    if let Some(g) = &send.grpc {
        spec.body = g.encode(&spec.body)?;
    }
    let mut req = prepare(target, &spec).map_err(|e| e.to_string())?;
    req.name = send.name;
    req.keep_response = send.keep;
    req.keep_only_cookies = send.only_cookies;
    req.llm = send.llm;
    req.socket = send.socket;
    req.last = send.close;
    Ok((spec, req))
}

/// A `grpc:` step's call: its `grpc-status` check numbered when it names codes.
fn grpc_send(
    method: herd_grpc::MethodDescriptor,
    codes: Option<Vec<u8>>,
    mut check: impl FnMut(String) -> usize,
) -> Box<GrpcSend> {
    let codes = codes.unwrap_or_default();
    let code_check = (!codes.is_empty()).then(|| {
        let list: Vec<&str> = codes
            .iter()
            .map(|c| herd_metrics::grpc_code_name(*c))
            .collect();
        check(format!("grpc-status {}", list.join(" or ")))
    });
    Box::new(GrpcSend {
        method,
        codes,
        code_check,
    })
}

/// The method a `grpc:` step names, in the workload's `proto:` types.
fn grpc_method(
    g: &crate::grpc_call::GrpcDraft,
    types: Option<&herd_grpc::DescriptorPool>,
    ctx: &mut Resolve<'_>,
) -> Option<herd_grpc::MethodDescriptor> {
    let Some(pool) = types else {
        ctx.diags.push(
            Diag::new(
                g.at,
                "a grpc step needs the call's types: give the workload a `proto:`",
            )
            .hint("e.g. proto: helloworld.proto (a path relative to the workload file)"),
        );
        return None;
    };
    herd_grpc::method(pool, &g.call)
        .map_err(|e| {
            let e = e.trim_start_matches("--call ").to_owned();
            ctx.diags.push(Diag::new(g.at, format!("grpc {e}")));
        })
        .ok()
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
