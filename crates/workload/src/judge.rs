//! Judging a step's response: its status (a gRPC call's `grpc-status`), `body_contains`, values
//! at JSON paths, a `script:` function's verdict and the extractions, each counted as a check
//! of the user's thread; the first failure is the response's message. A gRPC call's checks read
//! its reply's messages as JSON; a reply that is not its call's is error `grpc_malformed`.

use crate::grpc_call::GrpcSend;
use crate::program::Send;
use crate::script::WorkloadScript;
use herd_engine::metrics::{ErrorKind, Verdict};
use herd_engine::{Failure, Response};
use herd_lua::Judged;

impl WorkloadScript {
    pub(crate) fn judge_checks(
        &self,
        s: &Send,
        r: &Response,
        extracted: &mut [Option<String>],
        measured: bool,
    ) -> Result<(Verdict, Option<String>), Failure> {
        let json;
        let r = match &s.grpc {
            Some(g) => {
                json = g
                    .as_json(r)
                    .map_err(|e| Failure::new(ErrorKind::GrpcMalformed, e))?;
                &json
            }
            None => r,
        };
        let mut tally = self.tally.borrow_mut();
        let mut failed: Option<String> = None;
        // Recorded once `check` lets go of the tally.
        let mut lua_error = None;
        let mut check = |id: Option<usize>, ok: bool, why: &dyn Fn() -> String| {
            if let (Some(id), true) = (id, measured) {
                tally.check(id, ok, why);
            }
            if !ok && failed.is_none() {
                failed = Some(why());
            }
        };
        if let Some(g) = &s.grpc {
            let code = GrpcSend::status(r);
            let said = || match code {
                Some(c) => format!("grpc-status {}", herd_metrics::grpc_code_name(c)),
                None => format!("no grpc-status (HTTP status {})", r.status),
            };
            match (g.codes.is_empty(), code) {
                (true, Some(0)) => {}
                (true, _) => check(None, false, &said),
                (false, _) => {
                    let ok = code.is_some_and(|c| g.codes.contains(&c));
                    check(g.code_check, ok, &said);
                }
            }
        } else if s.status.is_empty() {
            if r.status >= 400 {
                check(None, false, &|| format!("status {}", r.status));
            }
        } else {
            let ok = s.status.contains(&r.status);
            check(s.status_check, ok, &|| {
                format!("status {}, expected {:?}", r.status, s.status)
            });
        }
        if let Some((needle, id)) = &s.body_contains {
            let ok = contains(&r.body, needle.as_bytes());
            check(Some(*id), ok, &|| {
                format!("the body does not contain {needle:?}")
            });
        }
        for (path, want, id) in &s.json_checks {
            let found = path.first_text(&r.body);
            let ok = found.as_deref() == Some(want.as_str());
            check(Some(*id), ok, &|| match &found {
                Some(v) => format!("json check: {v:?} where {want:?} was expected"),
                None => format!("json check: nothing where {want:?} was expected"),
            });
        }
        if let Some((f, id)) = s.lua_check {
            let judged = match &self.lua {
                Some(Ok(lua)) => lua.judge(f, r.status, &r.headers, &r.body),
                Some(Err(e)) => Err(e.clone()),
                None => Err("the workload has no script".to_owned()),
            };
            match judged {
                Ok(Judged::Pass) => check(Some(id), true, &String::new),
                Ok(Judged::Fail(why)) => check(Some(id), false, &|| why.clone()),
                Err(e) => {
                    check(Some(id), false, &|| format!("lua error: {e}"));
                    lua_error = Some(e);
                }
            }
        }
        for (slot, how, id) in &s.extract {
            let v = how.apply(r);
            check(Some(*id), v.is_some(), &|| {
                format!("extraction found nothing in a {} response", r.status)
            });
            extracted[*slot] = v;
        }
        drop(tally);
        // A check that raised judged nothing: the response is an error, as in every total.
        if let Some(e) = lua_error {
            return Err(Failure::new(ErrorKind::Lua, format!("lua error: {e}")));
        }
        Ok(match failed {
            None => (Verdict::Ok, None),
            Some(m) => (Verdict::Failed, Some(m)),
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}
