//! A scenario's WebSocket messages and their sockets, as compiled. A `ws://` target's
//! workload speaks messages alone, and `ws: connect` / `ws: close` end the socket of the
//! message before them (its reply read, it is closed with code 1000; the next message opens a
//! new one). An `http://` or `https://` target's workload mixes them with its requests: each
//! user's socket is opened by a `ws: { connect: PATH }` step (the Upgrade, an exchange of its
//! own) and closed by `ws: close`, by the next connect, or at the scenario's end.

use crate::diag::Diag;
use crate::diag::Pos;
use crate::program::Step;
use crate::step::{RequestDraft, WS};
use herd_engine::SocketRole;
use herd_http::Target;

/// Marks the last message of `steps` as its socket's last: whether there was one.
pub fn close_last(steps: &mut [Step]) -> bool {
    let last = steps.iter_mut().rev().find_map(|s| match s {
        Step::Send(send) if send.method == WS => Some(send),
        _ => None,
    });
    match last {
        Some(send) => {
            send.close = true;
            if let Some((_, req)) = &mut send.prebuilt {
                req.last = true;
            }
            true
        }
        None => false,
    }
}

/// Marks the last exchange of `steps` on a socket of an http(s):// target's workload (a
/// message, or the Upgrade itself) as its socket's last.
pub fn close_socket(steps: &mut [Step]) {
    let last = steps.iter_mut().rev().find_map(|s| match s {
        Step::Send(send) if send.socket != SocketRole::None => Some(send),
        _ => None,
    });
    if let Some(send) = last {
        send.close = true;
        if let Some((_, req)) = &mut send.prebuilt {
            req.last = true;
        }
    }
}

/// Step `q` of an http(s):// `target`'s workload, with the socket open since `open` (a `ws:`
/// message on it, a connect opening it, or a request): whether it goes in, said why not.
pub fn on_socket(
    q: &mut RequestDraft,
    target: &Target,
    open: &mut Option<Pos>,
    diags: &mut Vec<Diag>,
) -> bool {
    if q.socket == SocketRole::Open {
        if q.path.is_static() {
            match herd_http::ws::socket_path(target, &q.path_source) {
                Ok(path) => q.path = crate::template::Template::literal(&path),
                Err(e) => {
                    diags.push(
                        Diag::new(q.at, e).hint("write a path on the target, e.g. connect: /chat"),
                    );
                    return false;
                }
            }
        }
        *open = Some(q.at);
        return true;
    }
    if q.method != WS {
        return true;
    }
    if q.connect {
        diags.push(
            Diag::new(q.at, "`connect: true` in an http(s):// target's workload needs the path to open the socket on")
                .hint("open the socket in a step of its own: ws: { connect: /chat }, then send"),
        );
        return false;
    }
    if open.is_none() {
        diags.push(
            Diag::new(
                q.at,
                "a `ws:` message goes on a socket, and none is open here",
            )
            .hint("open one before it with ws: { connect: /chat }, a path on the target"),
        );
        return false;
    }
    if q.close {
        *open = None;
    }
    q.socket = SocketRole::Message;
    true
}

/// Whether step `q` speaks its workload's target's protocol; says why not.
pub fn fits(q: &RequestDraft, target: Option<&Target>, diags: &mut Vec<Diag>) -> bool {
    let Some(t) = target else { return true };
    if q.socket == SocketRole::Open {
        diags.push(
            Diag::new(q.at, "`connect: PATH` opens a socket in an http:// or https:// target's workload; a ws:// target's sockets open on its own URL")
                .hint("write `ws: connect`, or make the target http:// and open the socket with ws: { connect: /path }"),
        );
        return false;
    }
    let message = q.method == WS;
    match (message, t.websocket()) {
        (true, false) => diags.push(
            Diag::new(q.at, "a `ws:` step sends a WebSocket message: the workload's target must be ws:// or wss://")
                .hint("e.g. target: ws://127.0.0.1:8080/chat"),
        ),
        (false, true) => diags.push(
            Diag::new(
                q.at,
                format!("a ws:// target's steps are `ws:` messages, not {} requests", q.method),
            )
            .hint("write the step as `ws: { send: ... }`; to mix HTTP requests and WebSocket messages, make the target http:// (or https://) and open each socket with ws: { connect: /path }"),
        ),
        _ => return true,
    }
    false
}
