//! A call per iteration on the engine's loop, judged by its trailers: `grpc-status` OK is a
//! success, any other code a failed call counted under its name; a reply that is not a call's
//! (no `grpc-status`, a broken frame, a message of another type) is error `grpc_malformed`.

use crate::frame::Decoder;
use herd_engine::{Action, Ctx, Failure, Last, Paced, Parts, Request, Response, Script};
use herd_metrics::{grpc_code_name, grpc_status, ErrorKind, Verdict};
use prost_reflect::{DynamicMessage, MessageDescriptor};

/// The same call every iteration: its request built once (with templates in the data, its
/// messages made again for each call), its response kept (its trailers say the call's code,
/// which the engine records).
#[derive(Clone, Debug)]
pub struct GrpcScript {
    request: Request,
    reply: MessageDescriptor,
    data: Option<crate::Data>,
    interval: Option<std::time::Duration>,
}

impl GrpcScript {
    /// `request` carries `call` (POST to its path, its fields and framed message); its
    /// response is kept for its trailers and messages.
    pub fn new(mut request: Request, call: &crate::Call) -> GrpcScript {
        request.keep_response = true;
        let mut script = GrpcScript {
            request,
            reply: call.reply(),
            data: call.data.clone(),
            interval: call.interval,
        };
        if let (Some(parts), Some(_)) = (&script.request.parts, call.interval) {
            let parts = script.paced(Parts::clone(parts), &call.body);
            script.request.parts = Some(std::sync::Arc::new(parts));
        }
        script
    }

    /// `parts` with `body`, in pieces on the schedule of `--message-rate` when it is given.
    fn paced(&self, mut parts: Parts, body: &[u8]) -> Parts {
        match self.interval {
            Some(interval) => {
                let mut pieces = Vec::new();
                let mut d = crate::frame::Decoder::default();
                // The body is the messages this crate framed: whole, uncompressed.
                let _ = d.feed(body, |m| pieces.push(crate::frame::encode(m)));
                parts.paced = Some(std::sync::Arc::new(Paced { pieces, interval }));
            }
            None => parts.body = body.to_vec().into(),
        }
        parts
    }

    /// The next call's request: the same one, or one with this call's messages. A number
    /// that does not fit its field (a call past 2^31 into an int32) sends the first call's.
    fn request(&self) -> Request {
        let (Some(data), Some(parts)) = (&self.data, &self.request.parts) else {
            return self.request.clone();
        };
        let Ok(body) = data.next() else {
            return self.request.clone();
        };
        let parts = self.paced(Parts::clone(parts), &body);
        let mut r = self.request.clone();
        r.parts = Some(std::sync::Arc::new(parts));
        r
    }
}

impl Script for GrpcScript {
    type User = ();
    type Report = ();

    fn new_user(&self, _id: u64) {}

    #[inline]
    fn next(&self, _user: &mut (), last: Last<'_>, _ctx: Ctx) -> Action {
        match last {
            Last::Start => Action::Send(self.request()),
            _ => Action::Done,
        }
    }

    fn judge(
        &self,
        _user: &mut (),
        _req: &Request,
        resp: &Response,
        _ctx: Ctx,
    ) -> Result<(Verdict, Option<String>), Failure> {
        judge(&self.reply, resp)
    }
}

/// A call's response judged: see the module's note.
pub fn judge(
    reply: &MessageDescriptor,
    resp: &Response,
) -> Result<(Verdict, Option<String>), Failure> {
    let malformed = |m: String| Failure::new(ErrorKind::GrpcMalformed, m);
    if resp.status != 200 {
        // Not a call's answer but HTTP's (a proxy's 502, a 404): counted under its status.
        return Ok((
            Verdict::Failed,
            Some(format!(
                "HTTP status {} where a gRPC server answers 200",
                resp.status
            )),
        ));
    }
    let fields = || resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
    let Some(code) = grpc_status(fields()) else {
        return Err(malformed(
            "the reply has no grpc-status in its trailers: the server did not answer as a gRPC \
             server (check the address and --call)"
                .into(),
        ));
    };
    let mut decoder = Decoder::default();
    let (mut messages, mut bad) = (0u64, None);
    decoder
        .feed(&resp.body, |m| {
            messages += 1;
            if bad.is_none() {
                bad = DynamicMessage::decode(reply.clone(), m).err();
            }
        })
        .and_then(|()| decoder.finish())
        .map_err(|e| malformed(e.to_string()))?;
    if let Some(e) = bad {
        return Err(malformed(format!(
            "a reply message is not a {}: {e}",
            reply.full_name()
        )));
    }
    if code != 0 {
        let said = fields()
            .find(|(n, _)| n.eq_ignore_ascii_case("grpc-message"))
            .map(|(_, v)| format!(": {v}"))
            .unwrap_or_default();
        return Ok((
            Verdict::Failed,
            Some(format!("{}{said}", grpc_code_name(code))),
        ));
    }
    Ok((Verdict::Ok, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::encode;

    fn reply() -> MessageDescriptor {
        let dir = crate::fixture::tempdir();
        let p = dir.join("g.proto");
        std::fs::write(&p, crate::fixture::GREETER).unwrap();
        let pool = crate::describe::pool(Some(&p), &[], None).unwrap();
        pool.get_message_by_name("helloworld.HelloReply").unwrap()
    }

    fn response(status: u16, body: Vec<u8>, trailers: &[(&str, &str)]) -> Response {
        let mut r = Response {
            status,
            ..Response::default()
        };
        r.body = body.into();
        for (n, v) in trailers {
            r.headers.push(((*n).to_owned(), (*v).to_owned()));
        }
        r
    }

    #[test]
    fn codes_and_broken_replies_are_told_apart() {
        let d = reply();
        let ok = encode(&[0x0a, 2, b'h', b'i']);
        let r = judge(&d, &response(200, ok.clone(), &[("grpc-status", "0")]));
        assert_eq!(r.unwrap(), (Verdict::Ok, None));
        let r = judge(
            &d,
            &response(
                200,
                vec![],
                &[("grpc-status", "5"), ("grpc-message", "no x")],
            ),
        );
        assert_eq!(
            r.unwrap(),
            (Verdict::Failed, Some("NOT_FOUND: no x".into()))
        );
        let r = judge(&d, &response(502, vec![], &[]));
        assert_eq!(r.unwrap().0, Verdict::Failed);
        for (body, trailers, says) in [
            (ok.clone(), vec![], "no grpc-status"),
            (
                ok[..6].to_vec(),
                vec![("grpc-status", "0")],
                "ended inside a message",
            ),
            (
                encode(&[0xff, 0xff]),
                vec![("grpc-status", "0")],
                "is not a helloworld.HelloReply",
            ),
        ] {
            let e = judge(&d, &response(200, body, &trailers)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::GrpcMalformed);
            assert!(e.message.contains(says), "{}", e.message);
        }
    }
}
