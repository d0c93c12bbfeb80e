//! What a prepared run plays: a URL with its request, a URL file, a workload file, a log replay
//! or a URL driven by a wrk script, resolved from the spec.

use crate::Labels;
use herd_engine::Request;
use herd_http::{RequestSpec, Target};
use herd_workload::Workload;
use std::path::PathBuf;

/// A URL with its request, resolved from the flags.
pub(crate) struct UrlRequest {
    pub target: Target,
    /// The request as the flags describe it, but its body: that lives only in `request`.
    pub spec: RequestSpec,
    /// The bytes sent, built once and shared by every connection (`Arc`s inside).
    pub request: Request,
    pub body_len: u64,
    /// The URL and the headers as the result shows them: credentials masked.
    pub shown_url: String,
    pub headers: Vec<String>,
    /// `--show-secrets`: `shown_url` and `headers` are as given.
    pub secrets_shown: bool,
    /// A `ws://` URL: what each connection says in its Upgrade, and the messages' flags.
    pub ws: Option<(std::sync::Arc<herd_http::ws::WebSocket>, crate::ws::WsFlags)>,
    /// The gRPC call the request is (`herd grpc`).
    pub grpc: Option<std::sync::Arc<herd_grpc::Call>>,
}

impl UrlRequest {
    /// The request's body, held once in its bytes.
    pub fn body(&self) -> &[u8] {
        self.request.parts.as_ref().map_or(&[], |p| &p.body)
    }
}

// One per run, never in a collection: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum What {
    Url(UrlRequest),
    UrlFile {
        request: UrlRequest,
        workload: Workload,
        file: PathBuf,
    },
    Workload {
        workload: Workload,
        file: PathBuf,
    },
    Replay {
        url: String,
        target: Target,
        replay: Box<crate::replay::Prepared>,
    },
    /// A URL driven by a wrk Lua script (its main state; the threads' are made per run).
    Script {
        request: UrlRequest,
        wrk: std::sync::Mutex<herd_lua::Wrk>,
        file: PathBuf,
    },
}

impl What {
    /// The one site the run loads.
    pub(crate) fn target(&self) -> &Target {
        match self {
            What::Url(r) | What::UrlFile { request: r, .. } | What::Script { request: r, .. } => {
                &r.target
            }
            What::Workload { workload, .. } => workload.target(),
            What::Replay { target, .. } => target,
        }
    }

    /// The names a run of it refers to in its records.
    pub(crate) fn labels(&self) -> Labels {
        match self {
            What::UrlFile { workload: w, .. } | What::Workload { workload: w, .. } => Labels {
                names: w.names().to_vec(),
                scenarios: w.scenarios().iter().map(|s| s.0.to_owned()).collect(),
                checks: w.checks().to_vec(),
            },
            _ => Labels::default(),
        }
    }
}
