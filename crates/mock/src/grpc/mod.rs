//! gRPC on the mock's HTTP/2: the `herd.echo.Echo` service (one method of each kind), gRPC's
//! own `helloworld.Greeter`, and server reflection (v1 and v1alpha), always on. A call goes
//! to the first `grpc` route matching its path, whose latency delays each answer and whose
//! failing share ends with a status (`grpc-status=`) or a fault; calls no route matches are
//! answered at once. Messages are dynamic (prost-reflect) over .proto files compiled in
//! process (protox).
//!
//! A call is planned by [`call::Call`] (what to send, and when) and carried out by the
//! connection (`h2.rs`) on the worker's timer.

pub(crate) mod call;
mod frame;
mod reflection;
mod services;
pub(crate) mod status;

use std::time::Duration;

use rand::Rng;

pub(crate) use call::{Action, Call, Step};
pub(crate) use frame::encode;

use crate::response::{Compiled, Failure as RouteFailure};
use crate::worker::Worker;
use call::{Failure, Fate};
use services::Handler;

/// `content-type: application/grpc` (or `application/grpc+proto`, ...): a gRPC call.
pub(crate) fn is_grpc(fields: &[u8]) -> bool {
    fields.split(|b| *b == b'\n').any(|line| {
        line.strip_prefix(b"content-type: ")
            .is_some_and(|v| v.starts_with(b"application/grpc"))
    })
}

fn field<'f>(fields: &'f [u8], name: &[u8]) -> Option<&'f [u8]> {
    fields.split(|b| *b == b'\n').find_map(|line| {
        let value = line.strip_prefix(name)?.strip_prefix(b": ")?;
        Some(value.strip_suffix(b"\r").unwrap_or(value))
    })
}

/// A call begins: its method, the route's draw, the client's deadline. `Err` holds the
/// status of a call no method answers.
pub(crate) fn begin(w: &Worker, path: &str, fields: &[u8]) -> Result<(Call, bool), (u8, String)> {
    let handler = Handler::of(path).ok_or_else(|| {
        (
            status::UNIMPLEMENTED,
            format!(
                "unknown method {path}: herd serve answers herd.echo.Echo (Unary, ServerStream, \
                 ClientStream, Bidi), helloworld.Greeter/SayHello and server reflection"
            ),
        )
    })?;
    let route = match handler {
        Handler::Reflection { .. } => None,
        _ => w.table.lookup_grpc(path),
    };
    let fate = route.map(|r| fate(w, r)).unwrap_or_default();
    let timeout = field(fields, b"grpc-timeout").and_then(call::parse_timeout);
    Ok((Call::new(handler, fate, timeout), fate.failure.is_some()))
}

fn fate(w: &Worker, route: &Compiled) -> Fate {
    let (failed, delay) = {
        let mut rng = w.rng.borrow_mut();
        let failed = route.error_rate > 0.0 && rng.gen_bool(route.error_rate);
        (failed, route.delay.sample(&mut *rng))
    };
    let failure = failed.then(|| {
        if !route.grpc_status.is_empty() {
            let n = w.grpc_failures.get();
            w.grpc_failures.set(n + 1);
            let codes = &route.grpc_status;
            return Failure::Status(codes[(n % codes.len() as u64) as usize]);
        }
        match route.failure {
            RouteFailure::Fault(fault) => Failure::Fault(fault),
            RouteFailure::Status(_) => Failure::Status(status::INTERNAL),
        }
    });
    Fate { delay, failure }
}

/// The trailers ending a call: `grpc-status` and, when there is one, `grpc-message`
/// percent-encoded as the protocol asks.
pub(crate) fn trailers(code: u8, message: &str) -> (String, String) {
    let mut encoded = String::with_capacity(message.len());
    for b in message.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    (code.to_string(), encoded)
}

/// Steps split into those due now and the rest (each planned relative to now).
pub(crate) fn due_now(steps: Vec<Step>) -> (Vec<Action>, Vec<Step>) {
    let now = steps
        .iter()
        .take_while(|s| s.after == Duration::ZERO)
        .count();
    let mut steps = steps;
    let later = steps.split_off(now);
    (steps.into_iter().map(|s| s.action).collect(), later)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_calls_are_told_by_their_content_type() {
        assert!(is_grpc(
            b"te: trailers\r\ncontent-type: application/grpc\r\n"
        ));
        assert!(is_grpc(b"content-type: application/grpc+proto\r\n"));
        assert!(!is_grpc(b"content-type: application/json\r\n"));
        assert_eq!(
            field(b"grpc-timeout: 100m\r\nx: y\r\n", b"grpc-timeout"),
            Some(&b"100m"[..])
        );
    }

    #[test]
    fn status_messages_are_percent_encoded() {
        assert_eq!(
            trailers(14, "down 100% é"),
            ("14".into(), "down 100%25 %C3%A9".into())
        );
    }
}
