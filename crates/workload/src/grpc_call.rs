//! A `grpc:` step's call: the method its name finds in the workload's `proto:`, the request
//! message turned from the step's rendered JSON into a framed protobuf body, and the reply's
//! messages read back as JSON, so the checks and extractions of HTTP steps (JSONPath, regex,
//! `body_contains`, a Lua check) read a call's reply the same way.

use crate::diag::Pos;
use herd_engine::Response;
use herd_grpc::MethodDescriptor;

/// A `grpc:` step as written: the call's name (`package.Service/Method`).
#[derive(Debug)]
pub struct GrpcDraft {
    pub call: String,
    pub at: Pos,
}

/// A `grpc:` step compiled.
#[derive(Debug)]
pub struct GrpcSend {
    pub method: MethodDescriptor,
    /// The `grpc-status` codes that pass; empty: OK alone.
    pub codes: Vec<u8>,
    /// The check counting them, when the step named codes.
    pub code_check: Option<usize>,
}

impl GrpcSend {
    /// The request's `:path`, `/package.Service/Method`.
    pub fn path(method: &MethodDescriptor) -> String {
        format!("/{}/{}", method.parent_service().full_name(), method.name())
    }

    /// The rendered JSON of the step's `data` as the call's framed request messages.
    pub fn encode(&self, json: &[u8]) -> Result<Vec<u8>, String> {
        let text = std::str::from_utf8(json).map_err(|_| "data: not UTF-8 text".to_owned())?;
        herd_grpc::encode_json(&self.method, text, "data")
    }

    /// The call's `grpc-status`, from its trailers.
    pub fn status(r: &Response) -> Option<u8> {
        herd_metrics::grpc_status(r.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    }

    /// The response as its checks read it: its body the reply's messages as JSON.
    pub fn as_json(&self, r: &Response) -> Result<Response, String> {
        let json = herd_grpc::reply_json(&self.method.output(), &r.body)?;
        let mut view = r.clone();
        view.body = serde_json::to_vec(&json).unwrap_or_default().into();
        Ok(view)
    }
}
