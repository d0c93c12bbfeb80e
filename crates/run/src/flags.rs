//! Which flags each kind of run applies and which it refuses: one table, read by `herd run`,
//! `herd sweep`, `herd capacity` and `herd replay` alike, so a flag is never silently dropped.
//! A new flag is declared here: a [`Flag`], its row in [`TABLE`], and how a spec shows it was
//! given ([`given`]).

use crate::{RunSpec, Source};

/// The kinds of run, one column each in [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One URL and the request flags.
    Url,
    /// A siege URL file: the flags are every line's defaults.
    UrlFile,
    /// A workload file at its own load (`herd run shop.yaml`).
    Workload,
    /// A workload file at a series' level (`herd sweep`, `herd capacity`): the level replaces
    /// the file's load, so the connection cap applies.
    WorkloadAtLevel,
    /// A web server's log played back (`herd replay`).
    Replay,
}

/// A flag a run may be given, as users write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    Connections,
    Rate,
    Duration,
    Requests,
    CallsPerConn,
    Pipeline,
    Method,
    Header,
    Body,
    BodyFile,
    Timeout,
    Warmup,
    Threads,
    Insecure,
    Bind,
    /// `-F/--form`, a multipart body.
    Form,
    /// `--resolve` or `--connect-to`.
    Route,
    /// Any of `--watch-pid`, `--watch-name`, `--watch-prometheus`, `--watch-metric`.
    Watch,
    /// `--http2` / `--proto h2`.
    Http2,
    /// `--streams`, `--h2-window`, `--h2-connection-window`.
    H2Settings,
    /// `--arrivals` or `--seed`: how the open model's arrivals are spaced.
    Arrivals,
    /// `--shard I/N` (or `--shard-from-env`), `--start-at`, `--late`.
    Shard,
    /// `--sse llm`: event streams read as an LLM's tokens.
    Sse,
    /// `--event-timeout`: the longest wait for an event stream's next event.
    EventTimeout,
    /// `--send`, `--message-rate`, `--match`: a WebSocket URL's messages.
    WebSocket,
}

/// What a kind of run does with a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Applies,
    /// Refused, with where the setting belongs instead.
    Refused(&'static str),
}

use Use::Applies as A;
const LOAD: Use = Use::Refused("set the load in the file's `load:` section");
const REQUEST: Use =
    Use::Refused("set requests, headers and bodies in the file's steps and `defaults:`");
const ROUTE: Use = Use::Refused(
    "routes apply to one URL or a replay for now; point the file's URLs at the address instead",
);
const LOG: Use = Use::Refused("the log says which requests are sent and when");

/// Per flag: its name in messages, then what a URL, a URL file, a workload file, a workload at
/// a level and a log replay do with it.
const PIPELINE: Use = Use::Refused(
    "pipelining applies to one URL: a workload's or a URL file's steps wait for their responses",
);

pub const TABLE: [(Flag, &str, [Use; 5]); 25] = [
    //                                        URL  URL file workload at level replay
    // Beside a workload file, the load flags win over its `load:` (k6's order), said in the
    // summary.
    (Flag::Connections, "-c/--connections", [A, A, A, A, A]),
    (Flag::Rate, "--rate", [A, A, A, A, A]),
    (Flag::Duration, "-d/--duration", [A, A, A, A, A]),
    (Flag::Requests, "-n/--requests", [A, A, A, A, LOG]),
    (Flag::Arrivals, "--arrivals/--seed", [A, A, LOAD, A, LOG]),
    (
        Flag::CallsPerConn,
        "--calls-per-conn",
        [A, A, REQUEST, REQUEST, LOG],
    ),
    (
        Flag::Pipeline,
        "--pipeline",
        [A, PIPELINE, PIPELINE, PIPELINE, LOG],
    ),
    (Flag::Method, "-m/--method", [A, A, REQUEST, REQUEST, LOG]),
    (Flag::Header, "-H/--header", [A, A, REQUEST, REQUEST, LOG]),
    (Flag::Body, "--body", [A, A, REQUEST, REQUEST, LOG]),
    (Flag::BodyFile, "--body-file", [A, A, REQUEST, REQUEST, LOG]),
    (Flag::Form, "-F/--form", [A, A, REQUEST, REQUEST, LOG]),
    (
        Flag::Route,
        "--resolve/--connect-to",
        [A, ROUTE, ROUTE, ROUTE, A],
    ),
    // A flag's deadline and warm-up win over the file's `defaults: timeout` and `load: warmup`.
    (Flag::Timeout, "--timeout", [A, A, A, A, A]),
    // As `--timeout`, over the file's `defaults: event_timeout`.
    (Flag::EventTimeout, "--event-timeout", [A, A, A, A, A]),
    (Flag::Warmup, "--warmup", [A, A, A, A, LOG]),
    (Flag::Threads, "-t/--threads", [A, A, A, A, A]),
    (Flag::Insecure, "-k/--insecure", [A, A, A, A, A]),
    (Flag::Bind, "--bind", [A, A, A, A, A]),
    (Flag::Watch, "--watch-*", [A, A, A, A, A]),
    (Flag::Http2, "--http2", [A, A, A, A, A]),
    (Flag::H2Settings, "--streams/--h2-window", [A, A, A, A, A]),
    // Every kind plays its stripe; a series' runs each start on their own instant.
    (Flag::Shard, "--shard/--start-at", [A, A, A, A, A]),
    (Flag::Sse, "--sse", [A, SSE_URLS, SSE_STEP, SSE_STEP, LOG]),
    (
        Flag::WebSocket,
        "--send/--message-rate/--match/--ping-interval",
        [A, WS_URLS, WS_URLS, WS_URLS, LOG],
    ),
];

const WS_URLS: Use = Use::Refused("WebSocket messages apply to one ws:// or wss:// URL for now");

const SSE_URLS: Use = Use::Refused("--sse llm applies to one URL or a workload's steps for now");
const SSE_STEP: Use = Use::Refused("set `stream: llm` on the file's steps");

impl Kind {
    fn column(self) -> usize {
        match self {
            Kind::Url => 0,
            Kind::UrlFile => 1,
            Kind::Workload => 2,
            Kind::WorkloadAtLevel => 3,
            Kind::Replay => 4,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Url => "a URL",
            Kind::UrlFile => "a URL file",
            Kind::Workload | Kind::WorkloadAtLevel => "a workload file",
            Kind::Replay => "a log replay",
        }
    }
}

/// What `kind` does with `flag`.
pub fn use_of(kind: Kind, flag: Flag) -> Use {
    TABLE
        .iter()
        .find(|(f, _, _)| *f == flag)
        .map_or(A, |(_, _, uses)| uses[kind.column()])
}

/// The flags a spec was given (a value the user set, not a default).
pub fn given(spec: &RunSpec) -> Vec<Flag> {
    let l = &spec.load;
    let mut flags = vec![
        (Flag::Connections, l.connections.is_some()),
        (Flag::Rate, l.rate.is_some()),
        (Flag::Duration, l.duration.is_some()),
        (Flag::Requests, l.requests.is_some()),
        (Flag::CallsPerConn, l.calls_per_conn.is_some()),
        (Flag::Pipeline, l.pipeline.is_some()),
        (Flag::Timeout, l.timeout.is_some()),
        (Flag::EventTimeout, l.event_timeout.is_some()),
        (Flag::Warmup, l.warmup.is_some()),
        (Flag::Threads, l.threads.is_some()),
        (Flag::Arrivals, l.arrivals.is_some() || l.seed.is_some()),
        (Flag::Insecure, spec.insecure),
        (Flag::Bind, spec.bind.is_some()),
        (Flag::Http2, spec.http.http2),
        (
            Flag::H2Settings,
            spec.http.streams.is_some()
                || spec.http.stream_window.is_some()
                || spec.http.connection_window.is_some(),
        ),
        (
            Flag::Route,
            !spec.connect.resolve.is_empty() || !spec.connect.connect_to.is_empty(),
        ),
        (
            Flag::Watch,
            !spec.watch.is_empty() || !spec.watch.metrics.is_empty(),
        ),
        (Flag::Shard, spec.shard.is_some()),
    ];
    let request = &spec.request;
    flags.extend([
        (Flag::Method, request.method.is_some()),
        (Flag::Header, !request.headers.is_empty()),
        (Flag::Body, request.body.is_some()),
        (Flag::BodyFile, request.body_file.is_some()),
        (Flag::Form, !request.form.is_empty()),
        (Flag::Sse, request.llm),
        (Flag::WebSocket, request.ws.given()),
    ]);
    flags.into_iter().filter(|f| f.1).map(|f| f.0).collect()
}

/// The kind of run a spec describes.
pub fn kind(spec: &RunSpec) -> Kind {
    match &spec.source {
        // A wrk script takes wrk's flags: the load, and the request it may rewrite.
        Source::Url { .. } | Source::Script { .. } => Kind::Url,
        Source::UrlFile { .. } => Kind::UrlFile,
        Source::Workload { .. } if spec.level.is_some() => Kind::WorkloadAtLevel,
        Source::Workload { .. } => Kind::Workload,
        Source::Replay { .. } => Kind::Replay,
    }
}

/// The given flags this spec's kind refuses, one message per reason: the flags, the kind of
/// run, and where the setting belongs.
pub fn refused(spec: &RunSpec) -> Vec<String> {
    let kind = kind(spec);
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for flag in given(spec) {
        let Use::Refused(why) = use_of(kind, flag) else {
            continue;
        };
        let name = TABLE.iter().find(|r| r.0 == flag).map_or("?", |r| r.1);
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(name),
            None => by_reason.push((why, vec![name])),
        }
    }
    let place = match &spec.source {
        Source::Workload { path, .. } => format!(" ({})", path.display()),
        _ => String::new(),
    };
    by_reason
        .into_iter()
        .map(|(why, names)| {
            format!(
                "{} cannot be combined with {}{place}: {why}",
                names.join(", "),
                kind.what()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LoadFlags, Source};
    use std::time::Duration;

    fn workload(load: LoadFlags) -> RunSpec {
        let mut spec = RunSpec::new(Source::Workload {
            path: "shop.yaml".into(),
            target: None,
        });
        spec.load = load;
        spec
    }

    #[test]
    fn a_workload_file_applies_the_load_flags_and_refuses_request_ones() {
        let spec = workload(LoadFlags {
            timeout: Some(Duration::from_secs(2)),
            warmup: Some(Duration::from_secs(1)),
            connections: Some(5),
            rate: Some(10.0),
            duration: Some(Duration::from_secs(12)),
            ..LoadFlags::default()
        });
        assert!(refused(&spec).is_empty(), "{:?}", refused(&spec));
        let spec = workload(LoadFlags {
            calls_per_conn: Some(1),
            ..LoadFlags::default()
        });
        assert_eq!(
            refused(&spec),
            [
                "--calls-per-conn cannot be combined with a workload file (shop.yaml): \
              set requests, headers and bodies in the file's steps and `defaults:`"
            ]
        );
    }

    #[test]
    fn a_series_level_lets_a_workload_take_the_connection_cap() {
        let mut spec = workload(LoadFlags {
            connections: Some(50),
            ..LoadFlags::default()
        });
        spec.level = Some(crate::Level::Rate(10.0));
        assert!(refused(&spec).is_empty());
    }

    #[test]
    fn every_flag_has_one_row() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(TABLE.iter().filter(|r| r.0 == row.0).count(), 1, "row {i}");
        }
    }
}
