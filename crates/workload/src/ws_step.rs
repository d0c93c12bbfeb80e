//! Reading a WebSocket step (`ws:`) of a workload whose target is `ws://` or `wss://`: a
//! message sent on the user's socket and the reply it expects, with the same templates,
//! extractions and per-name tables as a request step; `connect` and `close` mark where a
//! socket begins and ends.
//!
//! ```yaml
//! - ws: connect
//! - ws: { name: join, send: '{"op":"join","id":"{{id}}"}', expect: { json: "$.op", equals: join } }
//! - ws: { send: { op: say, text: "hi {{id}}" }, expect: { regex: "hi \\d+" }, extract: { t: { json: "$.t" } } }
//! - ws: close
//! ```

use crate::diag::Diag;
use crate::hole::Escape;
use crate::read::Reader;
use crate::step::{json_template, read_extract, template, Expect, RequestDraft, StepDraft};
use crate::template::Template;
use crate::yaml::{Node, Value};

const KEYS: [&str; 7] = [
    "name", "connect", "send", "expect", "extract", "close", "headers",
];

/// Whether `node` is a `ws:` step.
pub fn is_ws(node: &Node) -> bool {
    match &node.value {
        Value::Map(entries) => entries.iter().any(|(k, _)| k.scalar() == Some("ws")),
        _ => false,
    }
}

/// A `ws:` step: a message and what its reply must hold, or a socket's `connect` or `close`.
pub fn read_ws_step(r: &mut Reader, node: &Node) -> Option<StepDraft> {
    let f = r.fields(node, "a step", &["ws"])?;
    let w = f.get("ws")?;
    match w.scalar() {
        Some("connect") => return Some(StepDraft::Connect(w.at)),
        Some("close") => return Some(StepDraft::Close(w.at)),
        Some(other) => {
            r.report(
                Diag::new(w.at, format!("`ws: {other}` is not a WebSocket step"))
                    .hint("write `ws: connect`, `ws: close` or `ws: { send: TEXT, expect: ... }`"),
            );
            return None;
        }
        None => {}
    }
    let f = r.fields(w, "a ws step", &KEYS)?;
    let path = f
        .get("connect")
        .filter(|c| !matches!(c.scalar(), Some("true" | "false")));
    if let Some(c) = path {
        return read_connect(r, &f, c);
    }
    if let Some(h) = f.get("headers") {
        r.report(
            Diag::new(
                h.at,
                "a message has no headers: they go on the socket's Upgrade",
            )
            .hint("give them to the step that opens it: ws: { connect: /chat, headers: { ... } }"),
        );
    }
    let marks =
        ["connect", "close"].map(|k| f.get(k).and_then(|n| r.boolean(n, k)).unwrap_or(false));
    let Some(send) = f.get("send") else {
        match marks {
            [true, false] => return Some(StepDraft::Connect(w.at)),
            [false, true] => return Some(StepDraft::Close(w.at)),
            _ => {
                r.report(
                    Diag::new(w.at, "a ws step sends a message: give it `send`")
                        .hint("e.g. ws: { send: '{\"op\":\"ping\"}', expect: { text: pong } }"),
                );
                return None;
            }
        }
    };
    let mut diags = Vec::new();
    let mut body = Template::default();
    let source = match &send.value {
        Value::Map(_) | Value::Seq(_) => {
            json_template(send, &mut body, &mut diags);
            crate::yaml::to_json(send).to_string()
        }
        _ => {
            body = template(r, send, Escape::None, &mut diags);
            r.string(send, "send").unwrap_or_default()
        }
    };
    let expect = f.get("expect").and_then(|e| read_expect(r, e));
    let mut extract = Vec::new();
    if let Some(xf) = f.get("extract").and_then(|x| r.map(x, "extract")) {
        for (k, v) in xf.entries() {
            let Some(var) = k.scalar() else { continue };
            if let Some(e) = read_extract(r, v) {
                extract.push((var.to_owned(), k.at, e));
            }
        }
    }
    let name = f.get("name").and_then(|n| r.string(n, "name"));
    r.diags.extend(diags);
    let mut draft = RequestDraft::message(w.at, body, short(&source));
    draft.name = name;
    draft.extract = extract;
    draft.expect = expect;
    draft.connect = marks[0];
    draft.close = marks[1];
    Some(StepDraft::Request(Box::new(draft)))
}

/// `ws: { connect: /chat, headers: { ... }, name: ... }` (an http(s):// target's workload):
/// the Upgrade that opens the user's socket, a GET of the path with WebSocket's headers and
/// the step's own (templates), after the workload's `defaults.headers`.
fn read_connect(r: &mut Reader, f: &crate::read::Fields, c: &Node) -> Option<StepDraft> {
    for key in ["send", "expect", "extract", "close"] {
        if let Some(n) = f.get(key) {
            r.report(
                Diag::new(
                    n.at,
                    format!("a `connect` step opens the socket: `{key}` goes in a step of its own"),
                )
                .hint("e.g. ws: { connect: /chat }, then ws: { send: hello }, then ws: close"),
            );
        }
    }
    let text = r.string(c, "connect")?;
    let mut diags = Vec::new();
    let path = Template::parse(c, &text, Escape::None, &mut diags);
    let key = herd_http::ws::key();
    let mut headers: Vec<(String, Template)> = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key.as_str()),
        ("Sec-WebSocket-Version", "13"),
    ]
    .iter()
    .map(|(n, v)| ((*n).to_owned(), Template::literal(v)))
    .collect();
    if let Some(h) = f.get("headers") {
        for (k, v) in crate::step::pairs(r, h, "headers") {
            headers.push((k, template(r, v, Escape::None, &mut diags)));
        }
    }
    let name = f
        .get("name")
        .and_then(|n| r.string(n, "name"))
        .unwrap_or_else(|| format!("WS connect {text}"));
    r.diags.extend(diags);
    let mut draft = RequestDraft::message(c.at, Template::default(), text);
    draft.method = "GET".to_owned();
    draft.path = path;
    draft.name = Some(name);
    draft.headers = headers;
    draft.socket = herd_engine::SocketRole::Open;
    Some(StepDraft::Request(Box::new(draft)))
}

/// A message's default name: `WS` and its first 40 characters.
fn short(source: &str) -> String {
    let mut s: String = source.chars().take(40).collect();
    if s.len() < source.len() {
        s.push_str("...");
    }
    s
}

/// `expect: { text: T }`, `{ json: PATH }` or `{ regex: RE }`, either of the latter two with
/// `equals: VALUE`: what the reply must hold, a check of its own.
fn read_expect(r: &mut Reader, node: &Node) -> Option<Expect> {
    let f = r.fields(node, "expect", &["text", "json", "regex", "equals"])?;
    let equals = f.get("equals").and_then(|e| r.string(e, "equals"));
    if let Some(t) = f.get("text") {
        if equals.is_some() || f.has("json") || f.has("regex") {
            r.error(
                node.at,
                "`expect: { text }` stands alone: the reply contains the text",
            );
            return None;
        }
        return Some(Expect::Text(r.string(t, "text")?));
    }
    let mut how = None;
    for k in ["json", "regex"] {
        if let Some(v) = f.get(k) {
            let text = r.string(v, k).unwrap_or_default();
            let one = Node {
                at: node.at,
                value: Value::Map(vec![(
                    Node {
                        at: v.at,
                        value: Value::Scalar {
                            text: k.to_owned(),
                            quoted: false,
                        },
                    },
                    v.clone(),
                )]),
            };
            how = read_extract(r, &one).map(|e| (format!("{k} {text}"), e));
        }
    }
    match how {
        Some((what, e)) => Some(Expect::Found {
            label: match &equals {
                Some(v) => format!("{what} = {v:?}"),
                None => what,
            },
            how: e,
            equals,
        }),
        None => {
            if !f.has("json") && !f.has("regex") {
                r.report(
                    Diag::new(node.at, "`expect` needs one of text, json, regex")
                        .hint("e.g. expect: { json: \"$.op\", equals: pong }"),
                );
            }
            None
        }
    }
}
