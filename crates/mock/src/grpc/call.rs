//! One gRPC call, as a plan: what the server sends and when, decided from the messages that
//! came in and the route's draw (latency, failure). The connection carries the plan out on
//! its timer; nothing here reads a clock or touches a socket, so the tables below test it.

use std::time::Duration;

use super::frame::{Deframer, Framed};
use super::services::{services, Handler, Status};
use super::status;
use crate::route::Fault;

/// A reply message that is well framed and does not decode as any message (field 1, a
/// length of 2^32 - 1 that no byte follows): what a client's "malformed reply" error class
/// is tested with (`fault=garbage` on a gRPC route).
pub(crate) const MALFORMED: &[u8] = b"\x0a\xff\xff\xff\xff\x0f";

/// Something the server does for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// A reply message (unframed).
    Message(Vec<u8>),
    /// The trailers: a status code and its message. The call is over.
    Finish(u8, String),
    /// A network fault instead of an answer (see [`Fault`]).
    Fault(Fault),
}

/// An action due `after` the moment it was planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) after: Duration,
    pub(crate) action: Action,
}

/// How a failing call fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    Status(u8),
    Fault(Fault),
}

/// What the route decided for a call when its head arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Fate {
    /// Before the first answer (a stream's time to first message; each bidi answer).
    pub(crate) delay: Duration,
    pub(crate) failure: Option<Failure>,
}

#[derive(Debug)]
pub(crate) struct Call {
    handler: Handler,
    fate: Fate,
    deframer: Deframer,
    /// Request messages taken, and the last one (client streams answer with it).
    received: u32,
    last: Vec<u8>,
    /// The client's deadline (grpc-timeout) left when the call began, and time gone since.
    timeout: Option<Duration>,
    /// A step ending the call is planned: nothing more is.
    over: bool,
}

fn step(after: Duration, action: Action) -> Step {
    Step { after, action }
}

fn finish(after: Duration, (code, message): Status) -> Step {
    step(after, Action::Finish(code, message))
}

impl Call {
    pub(crate) fn new(handler: Handler, fate: Fate, timeout: Option<Duration>) -> Call {
        Call {
            handler,
            fate,
            deframer: Deframer::default(),
            received: 0,
            last: Vec::new(),
            timeout,
            over: false,
        }
    }

    /// A call no method takes: it is over before it begins (its status goes out at once).
    pub(crate) fn refused() -> Call {
        Call {
            over: true,
            ..Call::new(Handler::Unary, Fate::default(), None)
        }
    }

    /// The head arrived: a failing call that answers as messages come fails now (after its
    /// delay); the others wait for the client's messages.
    pub(crate) fn begin(&mut self, elapsed: Duration) -> Vec<Step> {
        match self.fate.failure {
            Some(failure) if self.handler.answers_each() => {
                self.seal(vec![self.failing(failure)], elapsed)
            }
            _ => Vec::new(),
        }
    }

    /// Body bytes arrived.
    pub(crate) fn data(&mut self, bytes: &[u8], elapsed: Duration) -> Vec<Step> {
        if self.over {
            return Vec::new();
        }
        self.deframer.push(bytes);
        let mut steps = Vec::new();
        while let Some(framed) = self.deframer.next() {
            let message = match framed {
                Framed::Message(m) => m,
                Framed::Compressed => {
                    let why = "herd serve takes uncompressed messages only (no grpc-encoding)";
                    steps.push(finish(Duration::ZERO, (status::UNIMPLEMENTED, why.into())));
                    return self.seal(steps, elapsed);
                }
                Framed::TooLarge(n) => {
                    let why = format!(
                        "a request message of {n} bytes is above the {} byte limit",
                        super::frame::MAX_MESSAGE
                    );
                    let code = 8; // RESOURCE_EXHAUSTED, as gRPC's own receive limit says it
                    steps.push(finish(Duration::ZERO, (code, why)));
                    return self.seal(steps, elapsed);
                }
            };
            self.received += 1;
            if self.handler.takes_one() && self.received > 1 {
                let why = "this method takes one request message; the client sent more";
                steps.push(finish(Duration::ZERO, (status::UNIMPLEMENTED, why.into())));
                return self.seal(steps, elapsed);
            }
            if self.handler.answers_each() && self.fate.failure.is_none() {
                match self.answer_one(&message) {
                    Ok(reply) => steps.push(step(self.delay(), Action::Message(reply))),
                    Err(status) => {
                        steps.push(finish(Duration::ZERO, status));
                        return self.seal(steps, elapsed);
                    }
                }
            } else {
                self.last = message;
            }
        }
        self.seal(steps, elapsed)
    }

    /// The client is done sending: whatever is left to answer is planned, and the trailers.
    pub(crate) fn end(&mut self, elapsed: Duration) -> Vec<Step> {
        if self.over {
            return Vec::new();
        }
        let delay = self.delay();
        if self.deframer.pending() > 0 {
            let why = "the request ended inside a message";
            return self.seal(vec![finish(delay, (status::INTERNAL, why.into()))], elapsed);
        }
        if let Some(failure) = self.fate.failure {
            return self.seal(vec![self.failing(failure)], elapsed);
        }
        if self.handler.takes_one() && self.received == 0 {
            let why = "this method takes one request message; the client sent none";
            return self.seal(
                vec![finish(delay, (status::UNIMPLEMENTED, why.into()))],
                elapsed,
            );
        }
        let ok = || (status::OK, String::new());
        let steps = match self.answer_last() {
            Err(status) => vec![finish(delay, status)],
            Ok(Answer::Each) => vec![finish(delay, ok())],
            Ok(Answer::One(reply)) => {
                vec![step(delay, Action::Message(reply)), finish(delay, ok())]
            }
            Ok(Answer::Stream { replies, interval }) => {
                let mut steps = Vec::with_capacity(replies.len() + 1);
                let mut at = delay;
                for (i, reply) in replies.into_iter().enumerate() {
                    at = delay + interval * i as u32;
                    steps.push(step(at, Action::Message(reply)));
                }
                steps.push(finish(at, ok()));
                steps
            }
        };
        self.seal(steps, elapsed)
    }

    fn delay(&self) -> Duration {
        self.fate.delay
    }

    fn failing(&self, failure: Failure) -> Step {
        let action = match failure {
            Failure::Status(code) => Action::Finish(
                code,
                format!(
                    "{} injected by herd serve",
                    status::NAMES[usize::from(code)]
                ),
            ),
            Failure::Fault(Fault::Garbage) => Action::Message(MALFORMED.to_vec()),
            Failure::Fault(fault) => Action::Fault(fault),
        };
        step(self.delay(), action)
    }

    /// A bidi or reflection answer to one message.
    fn answer_one(&self, message: &[u8]) -> Result<Vec<u8>, Status> {
        let s = services();
        match self.handler {
            Handler::Reflection { alpha } => s.reflect(alpha, message),
            _ => Ok(s.echo_reply(&s.echo(message)?.message, self.received - 1)),
        }
    }

    /// The answer once the client is done.
    fn answer_last(&self) -> Result<Answer, Status> {
        let s = services();
        let last = &self.last;
        Ok(match self.handler {
            Handler::Bidi | Handler::Reflection { .. } => Answer::Each,
            Handler::Unary => Answer::One(s.echo_reply(&s.echo(last)?.message, 0)),
            Handler::SayHello => Answer::One(s.hello(last)?),
            Handler::ClientStream => {
                let message = if self.received == 0 {
                    String::new()
                } else {
                    s.echo(last)?.message
                };
                Answer::One(s.echo_reply(&message, self.received))
            }
            Handler::ServerStream => {
                let echo = s.echo(last)?;
                Answer::Stream {
                    replies: (0..echo.count)
                        .map(|i| s.echo_reply(&echo.message, i))
                        .collect(),
                    interval: echo.interval,
                }
            }
        })
    }

    /// Marks the call over when the steps end it, and holds them to the client's deadline:
    /// what would come after it is replaced by DEADLINE_EXCEEDED at the deadline, as a gRPC
    /// server does.
    fn seal(&mut self, mut steps: Vec<Step>, elapsed: Duration) -> Vec<Step> {
        if let Some(timeout) = self.timeout {
            let left = timeout.saturating_sub(elapsed);
            if let Some(late) = steps.iter().position(|s| s.after > left) {
                steps.truncate(late);
                let why = "the call's deadline (grpc-timeout) passed";
                steps.push(finish(left, (status::DEADLINE_EXCEEDED, why.into())));
            }
        }
        // A failing message (a malformed reply) still ends with OK trailers.
        if let Some(Step {
            after,
            action: Action::Message(m),
        }) = steps.last()
        {
            if m == MALFORMED {
                let after = *after;
                steps.push(finish(after, (status::OK, String::new())));
            }
        }
        self.over |= steps
            .iter()
            .any(|s| matches!(s.action, Action::Finish(..) | Action::Fault(_)));
        steps
    }
}

enum Answer {
    /// Answered message by message already.
    Each,
    One(Vec<u8>),
    Stream {
        replies: Vec<Vec<u8>>,
        interval: Duration,
    },
}

/// `grpc-timeout`: digits and a unit (H, M, S, m, u, n), as the client sends it.
pub(crate) fn parse_timeout(value: &[u8]) -> Option<Duration> {
    let (unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b'H' => Duration::from_secs(n * 3600),
        b'M' => Duration::from_secs(n * 60),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::frame::encode;
    use prost::Message;
    use prost_reflect::{DynamicMessage, Value};

    const MS: Duration = Duration::from_millis(1);

    fn echo_request(message: &str, count: u32, interval_ms: i32) -> Vec<u8> {
        let pool = &services().pool;
        let mut request =
            DynamicMessage::new(pool.get_message_by_name("herd.echo.EchoRequest").unwrap());
        request.set_field_by_name("message", Value::String(message.into()));
        request.set_field_by_name("count", Value::U32(count));
        let mut d = DynamicMessage::new(
            pool.get_message_by_name("google.protobuf.Duration")
                .unwrap(),
        );
        d.set_field_by_name("nanos", Value::I32(interval_ms * 1_000_000));
        request.set_field_by_name("interval", Value::Message(d));
        let mut framed = Vec::new();
        encode(&request.encode_to_vec(), &mut framed);
        framed
    }

    fn times(steps: &[Step]) -> Vec<(u128, &'static str)> {
        steps
            .iter()
            .map(|s| {
                let what = match &s.action {
                    Action::Message(_) => "message",
                    Action::Finish(0, _) => "ok",
                    Action::Finish(..) => "status",
                    Action::Fault(_) => "fault",
                };
                (s.after.as_millis(), what)
            })
            .collect()
    }

    fn fate(delay_ms: u64, failure: Option<Failure>) -> Fate {
        Fate {
            delay: MS * delay_ms as u32,
            failure,
        }
    }

    #[test]
    fn a_server_stream_sends_count_messages_interval_apart_after_the_latency() {
        let mut call = Call::new(Handler::ServerStream, fate(5, None), None);
        assert!(call.begin(Duration::ZERO).is_empty());
        assert!(call
            .data(&echo_request("hi", 3, 10), Duration::ZERO)
            .is_empty());
        let steps = call.end(Duration::ZERO);
        assert_eq!(
            times(&steps),
            [(5, "message"), (15, "message"), (25, "message"), (25, "ok")]
        );
        assert!(call.end(Duration::ZERO).is_empty(), "planned once");
    }

    #[test]
    fn a_deadline_cuts_the_plan_with_deadline_exceeded() {
        let mut call = Call::new(Handler::ServerStream, fate(5, None), Some(MS * 20));
        call.data(&echo_request("hi", 3, 10), Duration::ZERO);
        let steps = call.end(MS * 2);
        assert_eq!(
            times(&steps),
            [(5, "message"), (15, "message"), (18, "status")]
        );
        assert_eq!(
            steps[2].action,
            Action::Finish(
                status::DEADLINE_EXCEEDED,
                "the call's deadline (grpc-timeout) passed".into()
            )
        );
    }

    #[test]
    fn bidi_answers_each_message_as_it_comes_and_ends_when_the_client_does() {
        let mut call = Call::new(Handler::Bidi, fate(0, None), None);
        let one = call.data(&echo_request("a", 0, 0), Duration::ZERO);
        let mut two = echo_request("b", 0, 0);
        let rest = two.split_off(3);
        assert!(call.data(&two, Duration::ZERO).is_empty(), "half a message");
        let two = call.data(&rest, Duration::ZERO);
        assert_eq!(
            (times(&one), times(&two)),
            (vec![(0, "message")], vec![(0, "message")])
        );
        let Action::Message(reply) = &two[0].action else {
            panic!()
        };
        let pool = &services().pool;
        let reply = DynamicMessage::decode(
            pool.get_message_by_name("herd.echo.EchoResponse").unwrap(),
            &reply[..],
        )
        .unwrap();
        assert_eq!(reply.get_field_by_name("index").unwrap().as_u32(), Some(1));
        assert_eq!(times(&call.end(Duration::ZERO)), [(0, "ok")]);
    }

    #[test]
    fn failures_are_a_status_a_fault_or_a_malformed_reply() {
        let mut call = Call::new(Handler::Unary, fate(3, Some(Failure::Status(14))), None);
        call.data(&echo_request("x", 0, 0), Duration::ZERO);
        let steps = call.end(Duration::ZERO);
        assert_eq!(
            steps,
            [step(
                MS * 3,
                Action::Finish(14, "UNAVAILABLE injected by herd serve".into())
            )]
        );
        let mut call = Call::new(
            Handler::Unary,
            fate(0, Some(Failure::Fault(Fault::Garbage))),
            None,
        );
        call.data(&echo_request("x", 0, 0), Duration::ZERO);
        let steps = call.end(Duration::ZERO);
        assert_eq!(steps[0].action, Action::Message(MALFORMED.to_vec()));
        assert_eq!(times(&steps), [(0, "message"), (0, "ok")]);
        let desc = services()
            .pool
            .get_message_by_name("herd.echo.EchoResponse")
            .unwrap();
        assert!(DynamicMessage::decode(desc, MALFORMED).is_err());
        let mut call = Call::new(
            Handler::Bidi,
            fate(0, Some(Failure::Fault(Fault::Reset))),
            None,
        );
        assert_eq!(times(&call.begin(Duration::ZERO)), [(0, "fault")]);
        assert!(call
            .data(&echo_request("x", 0, 0), Duration::ZERO)
            .is_empty());
    }

    #[test]
    fn a_unary_call_with_two_messages_or_none_is_refused() {
        let mut call = Call::new(Handler::SayHello, Fate::default(), None);
        let mut two = echo_request("x", 0, 0);
        two.extend(echo_request("y", 0, 0));
        assert_eq!(times(&call.data(&two, Duration::ZERO)), [(0, "status")]);
        let mut call = Call::new(Handler::Unary, Fate::default(), None);
        assert_eq!(times(&call.end(Duration::ZERO)), [(0, "status")]);
        let mut call = Call::new(Handler::ClientStream, Fate::default(), None);
        call.data(&echo_request("x", 0, 0), Duration::ZERO);
        call.data(&echo_request("y", 0, 0), Duration::ZERO);
        assert_eq!(
            times(&call.end(Duration::ZERO)),
            [(0, "message"), (0, "ok")]
        );
    }

    #[test]
    fn grpc_timeouts_read_with_their_units() {
        assert_eq!(parse_timeout(b"100m"), Some(MS * 100));
        assert_eq!(parse_timeout(b"2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_timeout(b"5u"), Some(Duration::from_micros(5)));
        assert_eq!(parse_timeout(b"1x"), None);
        assert_eq!(parse_timeout(b"m"), None);
        assert_eq!(parse_timeout(b"123456789S"), None, "at most 8 digits");
    }
}
