//! A scenario's WebSocket messages and their sockets, as compiled: a workload speaks one or
//! the other (its target's scheme says which), and `ws: connect` / `ws: close` end the socket
//! of the message before them (its reply read, it is closed with code 1000; the next message
//! opens a new one).

use crate::diag::Diag;
use crate::program::Step;
use crate::step::{RequestDraft, WS};
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

/// Whether step `q` speaks its workload's target's protocol; says why not.
pub fn fits(q: &RequestDraft, target: Option<&Target>, diags: &mut Vec<Diag>) -> bool {
    let Some(t) = target else { return true };
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
            .hint("write the step as `ws: { send: ... }`; HTTP requests and WebSocket messages in one workload are not supported yet"),
        ),
        _ => return true,
    }
    false
}
