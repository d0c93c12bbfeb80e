//! Reading one scenario step: a request (`get: /path` and its options), a gRPC call
//! (`grpc: package.Service/Method`, its `data` and `metadata`) or a pause (`think:`).
//! Templates are parsed here; names in them are resolved later, when the whole file is known.

use crate::diag::{did_you_mean, Diag, Pos};
use crate::extract::{Extract, JsonPath};
use crate::grpc_call::GrpcDraft;
use crate::hole::Escape;
use crate::read::{Fields, Reader};
use crate::template::Template;
use crate::think::Think;
use crate::yaml::{Node, Value};
use herd_engine::SocketRole;
use std::time::Duration;

/// The method a WebSocket message's draft carries (`ws:`): it is framed as a message, not
/// an HTTP request.
pub const WS: &str = "WS";

pub const METHODS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];
const KEYS: [&str; 22] = [
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "options",
    "name",
    "headers",
    "query",
    "form",
    "multipart",
    "json",
    "body",
    "extract",
    "check",
    "follow_redirects",
    "think",
    "stream",
    "grpc",
    "data",
    "metadata",
];
/// An HTTP request's keys a `grpc:` step has no use for.
const NOT_GRPC: [&str; 7] = [
    "query",
    "form",
    "multipart",
    "json",
    "body",
    "follow_redirects",
    "stream",
];

/// A request step as written, before names are resolved.
#[derive(Debug)]
pub struct RequestDraft {
    pub at: Pos,
    pub method: String,
    /// Path and query, query parameters already appended.
    pub path: Template,
    /// The path as written, for the default name.
    pub path_source: String,
    pub name: Option<String>,
    pub headers: Vec<(String, Template)>,
    pub body: Template,
    pub extract: Vec<(String, Pos, Extract)>,
    pub check: CheckDraft,
    pub follow_redirects: Option<bool>,
    /// `stream: llm`: an event-stream response is read as an LLM's tokens.
    pub llm: bool,
    /// A `grpc:` step's call (its body is then the request message as JSON).
    pub grpc: Option<GrpcDraft>,
    /// A WebSocket message's (`ws:`): what its reply must hold.
    pub expect: Option<Expect>,
    /// A WebSocket message's: it opens a new socket (`connect: true`), the socket closes after
    /// its reply (`close: true`).
    pub connect: bool,
    pub close: bool,
    /// A `ws:` step of an http(s):// target's workload: `Open` for `ws: { connect: PATH }`
    /// (its path and headers the Upgrade's), `Message` for a message on the socket it opened.
    pub socket: SocketRole,
}

/// `check:` as written.
#[derive(Debug, Default)]
pub struct CheckDraft {
    /// HTTP statuses that pass.
    pub status: Option<Vec<u16>>,
    /// A `grpc:` step's `grpc-status` codes that pass.
    pub grpc_status: Option<Vec<u8>>,
    pub body_contains: Option<String>,
    /// `lua: NAME`: a function of the script judges the response.
    pub lua: Option<(String, Pos)>,
    /// `json: { PATH: VALUE }`: what a JSONPath selects first, as text, must be VALUE.
    pub json: Vec<(String, JsonPath, String)>,
}

/// What a WebSocket message's reply must hold (`expect:`).
#[derive(Debug)]
pub enum Expect {
    /// `{ text: T }`: the reply contains T.
    Text(String),
    /// `{ json: PATH }` or `{ regex: RE }`: found in the reply (and equal to `equals`).
    Found {
        how: Extract,
        equals: Option<String>,
        /// How the check is named (`json $.op = "pong"`).
        label: String,
    },
}

impl Expect {
    /// The check's name after its step's: `expect json $.op = "pong"`.
    pub fn label(&self) -> String {
        match self {
            Expect::Text(t) => format!("expect text {t:?}"),
            Expect::Found { label, .. } => format!("expect {label}"),
        }
    }
}

impl RequestDraft {
    /// A WebSocket message (`ws: { send }`): `body` is the message, `source` as written.
    pub fn message(at: Pos, body: Template, source: String) -> Self {
        RequestDraft {
            at,
            method: WS.to_owned(),
            path: Template::default(),
            path_source: source,
            name: None,
            headers: Vec::new(),
            body,
            extract: Vec::new(),
            check: CheckDraft::default(),
            follow_redirects: Some(false),
            llm: false,
            grpc: None,
            expect: None,
            connect: false,
            close: false,
            socket: SocketRole::None,
        }
    }
}

#[derive(Debug)]
pub enum StepDraft {
    Request(Box<RequestDraft>),
    Think(Think),
    /// `ws: connect`: the next message goes on a new socket.
    Connect(Pos),
    /// `ws: close`: the socket closes after the last message's reply.
    Close(Pos),
}

pub fn read_step(r: &mut Reader, node: &Node) -> Option<StepDraft> {
    let f = r.fields(node, "a step", &KEYS)?;
    let methods: Vec<&str> = METHODS.iter().copied().filter(|m| f.has(m)).collect();
    if let Some(t) = f.get("think") {
        if !methods.is_empty() || f.has("grpc") {
            r.error(node.at, "a step is either a request or a `think`, not both");
        }
        return read_think(r, t).map(StepDraft::Think);
    }
    if f.has("grpc") {
        if !methods.is_empty() {
            r.error(
                node.at,
                format!(
                    "a step is an HTTP request or a gRPC call, not both ({} and grpc)",
                    methods.join(" and ")
                ),
            );
        }
        return read_grpc(r, &f, node);
    }
    for key in ["data", "metadata"] {
        if let Some(n) = f.get(key) {
            r.report(
                Diag::new(n.at, format!("`{key}` belongs to a gRPC call (`grpc:`)"))
                    .hint("an HTTP request's body is `json`, `body`, `form` or `multipart`; its fields are `headers`"),
            );
        }
    }
    let method = match methods.as_slice() {
        [m] => *m,
        [] => {
            r.report(
                Diag::new(node.at, "a step needs a request (get, post, put, patch, delete, head, options) or `think`")
                    .hint("e.g. - get: /"),
            );
            return None;
        }
        _ => {
            r.error(
                node.at,
                format!("a step makes one request, not {}", methods.join(" and ")),
            );
            return None;
        }
    };
    let pnode = f.get(method)?;
    let path_text = r.string(pnode, method)?;
    let mut diags = Vec::new();
    let mut path = Template::parse(pnode, &path_text, Escape::None, &mut diags);
    if let Some(q) = f.get("query") {
        let mut sep = if path_text.contains('?') { '&' } else { '?' };
        for (k, v) in pairs(r, q, "query") {
            path.push_lit(&format!("{sep}{}=", encode(&k)));
            path.append(template(r, v, Escape::Url, &mut diags));
            sep = '&';
        }
    }
    let mut headers = Vec::new();
    if let Some(h) = f.get("headers") {
        for (k, v) in pairs(r, h, "headers") {
            headers.push((k, template(r, v, Escape::None, &mut diags)));
        }
    }
    let (body, content_type) = read_body(r, &f, node, &mut diags);
    if let Some(ct) = content_type {
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("Content-Type".to_owned(), Template::literal(&ct)));
        }
    }
    let extract = read_extracts(r, &f);
    let check = f
        .get("check")
        .map(|c| read_check(r, c, false))
        .unwrap_or_default();
    let name = f.get("name").and_then(|n| r.string(n, "name"));
    let follow_redirects = f
        .get("follow_redirects")
        .and_then(|b| r.boolean(b, "follow_redirects"));
    let llm = match f.get("stream") {
        None => false,
        Some(n) => match r.string(n, "stream").as_deref() {
            Some("llm") => true,
            Some("events") => false,
            Some(other) => {
                r.report(
                    Diag::new(n.at, format!("`stream: {other}` is not a way to read a stream"))
                        .hint("write `stream: events` (time every event) or `stream: llm` (an OpenAI-compatible chat completion's tokens)"),
                );
                false
            }
            None => false,
        },
    };
    r.diags.extend(diags);
    Some(StepDraft::Request(Box::new(RequestDraft {
        at: node.at,
        method: method.to_ascii_uppercase(),
        path,
        path_source: path_text,
        name,
        headers,
        body,
        extract,
        check,
        follow_redirects,
        llm,
        grpc: None,
        expect: None,
        connect: false,
        close: false,
        socket: SocketRole::None,
    })))
}

/// A `grpc:` step: a POST of the call's message (`data`, YAML as JSON, strings templates) with
/// gRPC's fields and the `metadata`; its method and types are looked up when compiled.
fn read_grpc(r: &mut Reader, f: &Fields, node: &Node) -> Option<StepDraft> {
    let cnode = f.get("grpc")?;
    let call = r.string(cnode, "grpc")?;
    for key in NOT_GRPC.iter().filter(|k| f.has(k)) {
        r.report(
            Diag::new(
                node.at,
                format!("`{key}` is an HTTP request's; a gRPC call does not take it"),
            )
            .hint("a grpc step takes data (its message), metadata, name, check, extract, headers"),
        );
    }
    let mut diags = Vec::new();
    let mut body = Template::default();
    match f.get("data") {
        Some(d) => json_template(d, &mut body, &mut diags),
        None => body.push_lit("{}"),
    }
    let mut headers = vec![
        (
            "content-type".to_owned(),
            Template::literal("application/grpc"),
        ),
        ("te".to_owned(), Template::literal("trailers")),
    ];
    for key in ["metadata", "headers"] {
        if let Some(m) = f.get(key) {
            for (k, v) in pairs(r, m, key) {
                let value = template(r, v, Escape::None, &mut diags);
                headers.push((k.to_ascii_lowercase(), value));
            }
        }
    }
    let extract = read_extracts(r, f);
    let check = f
        .get("check")
        .map(|c| read_check(r, c, true))
        .unwrap_or_default();
    let name = f.get("name").and_then(|n| r.string(n, "name"));
    r.diags.extend(diags);
    Some(StepDraft::Request(Box::new(RequestDraft {
        at: node.at,
        method: "POST".to_owned(),
        path: Template::default(),
        path_source: call.clone(),
        name,
        headers,
        body,
        extract,
        check,
        follow_redirects: Some(false),
        llm: false,
        grpc: Some(GrpcDraft { call, at: cnode.at }),
        expect: None,
        connect: false,
        close: false,
        socket: SocketRole::None,
    })))
}

/// `extract:`, each variable with how it is found.
fn read_extracts(r: &mut Reader, f: &Fields) -> Vec<(String, Pos, Extract)> {
    let mut extract = Vec::new();
    if let Some(x) = f.get("extract") {
        if let Some(xf) = r.map(x, "extract") {
            for (k, v) in xf.entries() {
                let Some(var) = k.scalar() else { continue };
                if let Some(e) = read_extract(r, v) {
                    extract.push((var.to_owned(), k.at, e));
                }
            }
        }
    }
    extract
}

/// The request's body (`form`, `multipart`, `json` or `body`, one of them) and the content
/// type it implies.
fn read_body(
    r: &mut Reader,
    f: &Fields,
    node: &Node,
    diags: &mut Vec<Diag>,
) -> (Template, Option<String>) {
    let bodies: Vec<&str> = ["form", "multipart", "json", "body"]
        .into_iter()
        .filter(|k| f.has(k))
        .collect();
    if bodies.len() > 1 {
        r.error(
            node.at,
            format!("a request has one body: give one of {}", bodies.join(", ")),
        );
    }
    let mut body = Template::default();
    let mut content_type = None;
    let mut multipart_type = None;
    if let Some(parts) = f.get("multipart") {
        multipart_type = crate::multipart::read(r, parts, &mut body, diags);
    } else if let Some(form) = f.get("form") {
        for (i, (k, v)) in pairs(r, form, "form").into_iter().enumerate() {
            body.push_lit(&format!("{}{}=", if i > 0 { "&" } else { "" }, encode(&k)));
            body.append(template(r, v, Escape::Url, diags));
        }
        content_type = Some("application/x-www-form-urlencoded");
    } else if let Some(json) = f.get("json") {
        json_template(json, &mut body, diags);
        content_type = Some("application/json");
    } else if let Some(raw) = f.get("body") {
        if let Some(text) = r.string(raw, "body") {
            body = Template::parse(raw, &text, Escape::None, diags);
        }
    }
    (body, content_type.map(str::to_owned).or(multipart_type))
}

/// `check:`: the statuses that pass (a gRPC call's: `grpc-status` names or codes), text the
/// body must contain, values at JSON paths, a Lua check.
fn read_check(r: &mut Reader, c: &Node, grpc: bool) -> CheckDraft {
    let mut out = CheckDraft::default();
    let Some(cf) = r.fields(c, "check", &["status", "body_contains", "lua", "json"]) else {
        return out;
    };
    if let Some(s) = cf.get("status") {
        let codes: Vec<&Node> = match &s.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![s],
        };
        match grpc {
            true => out.grpc_status = Some(grpc_codes(r, &codes)),
            false => out.status = Some(http_codes(r, &codes)),
        }
    }
    out.body_contains = cf
        .get("body_contains")
        .and_then(|b| r.string(b, "body_contains"));
    out.lua = cf
        .get("lua")
        .and_then(|l| Some((r.string(l, "lua")?, l.at)));
    if let Some(j) = cf.get("json") {
        for (path, want) in pairs(r, j, "json") {
            let Some(value) = r.string(want, "a value") else {
                continue;
            };
            match JsonPath::parse(&path) {
                Ok(p) => out.json.push((path, p, value)),
                Err(e) => r.report(
                    Diag::new(want.at, format!("check json: {}", e.message))
                        .hint("e.g. check: { json: { \"$.message\": hello } }"),
                ),
            }
        }
    }
    out
}

fn http_codes(r: &mut Reader, nodes: &[&Node]) -> Vec<u16> {
    let mut ok = Vec::new();
    for n in nodes {
        match r.count(n, "status") {
            Some(c @ 100..=999) => ok.push(c as u16),
            Some(c) => r.error(n.at, format!("{c} is not an HTTP status code")),
            None => {}
        }
    }
    ok
}

/// gRPC's codes by name (`OK`, `not_found`) or number (0..16).
fn grpc_codes(r: &mut Reader, nodes: &[&Node]) -> Vec<u8> {
    let mut ok = Vec::new();
    for n in nodes {
        let Some(word) = r.string(n, "status") else {
            continue;
        };
        match herd_metrics::grpc_code(&word) {
            Some(c) => ok.push(c),
            None => r.report(
                Diag::new(n.at, format!("`{word}` is not a gRPC status")).hint(format!(
                    "a grpc step's status is a grpc-status: a code 0..16 or a name ({})",
                    herd_metrics::GRPC_CODES.join(", ")
                )),
            ),
        }
    }
    ok
}

/// A mapping of names to text templates (headers, query, form), in file order.
pub(crate) fn pairs<'n>(r: &mut Reader, node: &'n Node, what: &str) -> Vec<(String, &'n Node)> {
    let Some(f) = r.map(node, what) else {
        return Vec::new();
    };
    f.entries()
        .iter()
        .filter_map(|(k, v)| Some((k.scalar()?.to_owned(), v)))
        .collect()
}

pub(crate) fn template(
    r: &mut Reader,
    node: &Node,
    escape: Escape,
    diags: &mut Vec<Diag>,
) -> Template {
    match r.string(node, "a value") {
        Some(text) => Template::parse(node, &text, escape, diags),
        None => Template::default(),
    }
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    crate::template::escape_into(s, Escape::Url, &mut out);
    out
}

/// A YAML value as a JSON body template: strings may hold holes, escaped as JSON.
pub(crate) fn json_template(node: &Node, out: &mut Template, diags: &mut Vec<Diag>) {
    match &node.value {
        Value::Scalar { text, quoted } => {
            let plain = (!*quoted).then(|| crate::yaml::plain_scalar(text));
            match plain {
                Some(v) if !v.is_string() => out.push_lit(&v.to_string()),
                _ => {
                    out.push_lit("\"");
                    out.append(Template::parse(node, text, Escape::Json, diags));
                    out.push_lit("\"");
                }
            }
        }
        Value::Seq(items) => {
            out.push_lit("[");
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_lit(",");
                }
                json_template(it, out, diags);
            }
            out.push_lit("]");
        }
        Value::Map(entries) => {
            out.push_lit("{");
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_lit(",");
                }
                let key = k.scalar().unwrap_or_default();
                out.push_lit(&serde_json::to_string(key).expect("a string serializes"));
                out.push_lit(":");
                json_template(v, out, diags);
            }
            out.push_lit("}");
        }
    }
}

pub(crate) fn read_extract(r: &mut Reader, node: &Node) -> Option<Extract> {
    let f = r.fields(
        node,
        "an extraction",
        &["json", "regex", "header", "cookie"],
    )?;
    let [(k, v)] = f.entries() else {
        r.report(
            Diag::new(
                node.at,
                "an extraction takes exactly one of json, regex, header, cookie",
            )
            .hint("e.g. { json: \"$.token\" }"),
        );
        return None;
    };
    let text = r.string(v, "extraction")?;
    match k.scalar()? {
        "json" => match JsonPath::parse(&text) {
            Ok(p) => Some(Extract::Json(p)),
            Err(e) => {
                r.error(v.pos_in_scalar(e.offset, &text), e.message);
                None
            }
        },
        "regex" => match regex::Regex::new(&text) {
            Ok(re) => Some(Extract::Regex(re)),
            Err(e) => {
                let first = e.to_string().lines().last().unwrap_or_default().to_owned();
                r.report(Diag::new(v.at, format!("bad regular expression: {first}")));
                None
            }
        },
        "header" => Some(Extract::Header(text)),
        "cookie" => Some(Extract::Cookie(text)),
        _ => None,
    }
}

const THINKS: [&str; 3] = ["fixed", "uniform", "exponential"];

fn read_think(r: &mut Reader, node: &Node) -> Option<Think> {
    if node.scalar().is_some() {
        return r.duration(node, "think").map(Think::Fixed);
    }
    let f = r.fields(node, "think", &THINKS)?;
    let [(k, v)] = f.entries() else {
        r.report(
            Diag::new(node.at, "think takes one of fixed, uniform, exponential")
                .hint("e.g. { uniform: [1s, 3s] }"),
        );
        return None;
    };
    match k.scalar()? {
        "fixed" => r.duration(v, "think").map(Think::Fixed),
        "exponential" => r.duration(v, "think mean").map(Think::Exponential),
        "uniform" => {
            let items = r.seq(v, "uniform")?;
            let ds: Vec<Option<Duration>> = items.iter().map(|i| r.duration(i, "think")).collect();
            match ds.as_slice() {
                [Some(a), Some(b)] if a <= b => Some(Think::Uniform(*a, *b)),
                [Some(_), Some(_)] => {
                    r.error(v.at, "uniform: the first bound must not exceed the second");
                    None
                }
                [_, _] => None,
                _ => {
                    r.report(Diag::new(v.at, "uniform takes two durations").hint("e.g. [1s, 3s]"));
                    None
                }
            }
        }
        other => {
            let hint = did_you_mean(other, THINKS);
            r.report(Diag::new(k.at, format!("`{other}` is not a think time")).hint_opt(hint));
            None
        }
    }
}
