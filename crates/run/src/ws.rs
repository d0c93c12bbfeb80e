//! A `ws://` or `wss://` URL: the flags that say which messages go (`--send`, its `{{seq}}`),
//! how fast (`--message-rate` per socket: the open model, each of the `-c` sockets on its own
//! share of the schedule; without it the closed model: send, await the reply, send again) and
//! how replies are matched (`--match FIELD`); checked with the other flags before anything is
//! sent. Each message is an exchange on the one loop: its reply is timed from the message's
//! intended instant, as every response is.

use herd_engine::{Action, Ctx, Last, Load, Plan, Request, Script};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `{{seq}}` in a message is replaced by the message's number in the run, from 1.
const SEQ: &str = "{{seq}}";

/// The WebSocket flags of `herd run`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WsFlags {
    /// `--send TEXT`: each message, `{{seq}}` numbered.
    pub send: Option<String>,
    /// `--message-rate R`: messages per second on each socket (the open model).
    pub message_rate: Option<f64>,
    /// `--match FIELD`: a reply answers the message whose JSON field FIELD has its value.
    pub matching: Option<String>,
    /// `--ping-interval D`: each open socket pings the server this often, each pong's round
    /// trip timed from its ping's intended instant.
    pub ping_interval: Option<std::time::Duration>,
}

impl WsFlags {
    pub fn given(&self) -> bool {
        self.send.is_some()
            || self.message_rate.is_some()
            || self.matching.is_some()
            || self.ping_interval.is_some()
    }

    /// Every problem of these flags for a URL that is (`websocket`) or is not a WebSocket's;
    /// `others`: the flags given that a WebSocket's messages leave no place for, by name.
    pub(crate) fn check(
        &self,
        websocket: bool,
        rate: bool,
        others: &[(bool, &str)],
        problems: &mut Vec<String>,
    ) {
        if !websocket {
            if self.given() {
                problems.push(
                    "--send, --message-rate, --match and --ping-interval are for WebSocket URLs: \
                     write ws:// or wss://"
                        .into(),
                );
            }
            return;
        }
        if self.send.is_none() {
            problems.push(
                "a WebSocket run sends messages: give one with --send, e.g. --send \
                 '{\"op\":\"ping\",\"id\":\"{{seq}}\"}'"
                    .into(),
            );
        }
        match self.message_rate {
            Some(r) if !(r.is_finite() && r > 0.0) => problems.push(format!(
                "--message-rate {r} is not a rate: give messages per second on each socket, \
                 above 0"
            )),
            _ => {}
        }
        if self
            .ping_interval
            .is_some_and(|d| d < std::time::Duration::from_millis(1))
        {
            problems.push(
                "--ping-interval is below a millisecond: give the time between a socket's pings, \
                 e.g. --ping-interval 1s"
                    .into(),
            );
        }
        if rate {
            problems.push(
                "--rate counts requests; a WebSocket's messages are paced per socket: write \
                 --message-rate R (messages per second on each of the -c sockets)"
                    .into(),
            );
        }
        for (given, flag) in others {
            if *given {
                problems.push(format!(
                    "{flag} does not apply to a WebSocket URL: its messages are --send's"
                ));
            }
        }
    }

    /// The plan's load for `-c` sockets (over HTTP/2, `-c` connections of `streams` sockets
    /// each): each sends at `--message-rate` (open, in turn), or one message at a time
    /// (closed).
    pub(crate) fn apply(&self, plan: &mut Plan, connections: Option<u64>, streams: usize) {
        if let Some(rate) = self.message_rate {
            let c = connections.unwrap_or(crate::DEFAULT_CONNECTIONS).max(1);
            plan.load = Load::Open {
                rate: rate * c as f64 * streams.max(1) as f64,
                max_connections: c,
            };
            plan.in_turn = true;
        }
    }

    pub(crate) fn matching(&self) -> herd_http::ws::Match {
        match &self.matching {
            Some(f) => herd_http::ws::Match::Field(f.clone()),
            None => herd_http::ws::Match::InOrder,
        }
    }
}

/// Each message `--send` says, numbered across the run's threads.
pub(crate) struct Messages {
    /// The text around each `{{seq}}`; one piece: nothing to number, the same bytes each time.
    pieces: Arc<[String]>,
    same: Request,
    seq: Arc<AtomicU64>,
}

impl Messages {
    pub(crate) fn new(text: &str, seq: Arc<AtomicU64>) -> Self {
        Messages {
            pieces: text.split(SEQ).map(str::to_owned).collect(),
            same: Request::new(text.as_bytes().to_vec()),
            seq,
        }
    }

    fn message(&self) -> Request {
        if self.pieces.len() == 1 {
            return self.same.clone();
        }
        let n = (self.seq.fetch_add(1, Ordering::Relaxed) + 1).to_string();
        Request::new(self.pieces.join(n.as_str()).into_bytes())
    }
}

impl Script for Messages {
    type User = ();
    type Report = ();

    fn new_user(&self, _id: u64) {}

    #[inline]
    fn next(&self, _user: &mut (), last: Last<'_>, _ctx: Ctx) -> Action {
        match last {
            Last::Start => Action::Send(self.message()),
            _ => Action::Done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_numbered_across_threads() {
        let seq = Arc::new(AtomicU64::new(0));
        let a = Messages::new(r#"{"id":"{{seq}}","again":{{seq}}}"#, seq.clone());
        let b = Messages::new(r#"{"id":"{{seq}}","again":{{seq}}}"#, seq);
        assert_eq!(&*a.message().bytes, br#"{"id":"1","again":1}"#);
        assert_eq!(&*b.message().bytes, br#"{"id":"2","again":2}"#);
        let plain = Messages::new("hi", Arc::default());
        assert_eq!(&*plain.message().bytes, b"hi");
    }

    #[test]
    fn the_message_rate_is_per_socket() {
        let mut plan = Plan::default();
        let flags = WsFlags {
            message_rate: Some(10.0),
            ..WsFlags::default()
        };
        flags.apply(&mut plan, Some(50), 1);
        assert!(matches!(plan.load, Load::Open { rate, max_connections: 50 } if rate == 500.0));
        assert!(plan.in_turn);
    }
}
