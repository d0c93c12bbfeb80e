//! `RunSpec::prepare`: every check made before anything is sent, all problems reported at once
//! (ripgrep's LowArgs -> HiArgs, k6's `Validate() []error`).

use crate::body::BodyFile;
use crate::prepared::Prepared;
use crate::watch::Watch;
use crate::what::{UrlRequest, What};
use crate::{LoadFlags, RequestFlags, RunError, RunSpec, Source};
use herd_engine::Request;
use herd_engine::{Load, Plan};
use herd_http::h3::H3Transport;
use herd_http::{prepare, with_closing, RequestSpec, Scheme, Target, TlsOptions};
use herd_workload::{UrlDefaults, Workload};
use std::path::{Path, PathBuf};

impl RunSpec {
    /// Reads and checks everything the run needs (URL, headers, body file, URL file, workload
    /// file, the plan at the spec's level) and reports every problem at once.
    pub fn prepare(&self) -> Result<Prepared, RunError> {
        let mut problems = crate::flags::refused(self);
        let what = self.what(&mut problems);
        if self.http.http3 {
            let target = match &what {
                Some(What::Url(r)) | Some(What::UrlFile { request: r, .. }) => Some(&r.target),
                Some(What::Workload { workload, .. }) => Some(workload.target()),
                Some(What::Replay { target, .. }) => Some(target),
                Some(What::Script { .. }) => {
                    problems.push("--http3 does not run wrk Lua scripts yet: drop --http3".into());
                    None
                }
                None => None,
            };
            if let Some(Err(e)) = target.map(|t| H3Transport::new(t, TlsOptions::default())) {
                problems.push(format!("--http3: {e}"));
            }
        }
        if let Some(ip) = self.bind {
            problems.extend(local_address(ip).err());
        }
        let tls_files = self.connect.tls_files(&mut problems);
        let proxy = what.as_ref().and_then(|w| self.proxy(w, &mut problems));
        if let Some(What::Workload { workload, .. }) = &what {
            if workload.sockets() {
                sockets_refuse(self, workload, proxy.is_some(), &mut problems);
            }
        }
        let watch = Watch::check(&self.watch)
            .map_err(|p| problems.extend(p))
            .ok()
            .flatten();
        // A workload file's `protocol: h2` stands for --http2, so its HTTP/2 flags are fine.
        let file_h2 = matches!(&what, Some(What::Workload { workload, .. }) if workload.http2);
        let http = crate::HttpFlags {
            http2: self.http.http2 || file_h2,
            ..self.http
        };
        http.check(&mut problems);
        // A file's own load and a log's timing refuse the flags in `flags::TABLE` instead.
        if let crate::flags::Kind::Url
        | crate::flags::Kind::UrlFile
        | crate::flags::Kind::WorkloadAtLevel = crate::flags::kind(self)
        {
            self.load.check_arrivals(self.level, &mut problems);
        }
        if (http.http2 || http.http3) && self.load.pipeline.is_some() {
            problems.push(
                "--pipeline is HTTP/1.1's; over HTTP/2 and HTTP/3 requests share a connection \
                 as --streams"
                    .into(),
            );
        }
        if !problems.is_empty() {
            return Err(RunError::Invalid(problems));
        }
        let what = what.expect("no problems means the source was read");
        let notes = self.tls_flags_unused(&what);
        let prepared = Prepared {
            notes,
            watch,
            what,
            load: self.load.clone(),
            level: self.level,
            length: self.length,
            insecure: self.insecure,
            bind: self.bind,
            tls_files,
            proxy,
            http: self.http,
            shard: self.shard.clone(),
            runs: Default::default(),
            labels: Default::default(),
        };
        // A URL's plan was checked with its flags, in order; a file's or log's is checked here.
        if let What::Workload { .. } | What::Replay { .. } = prepared.what {
            prepared.check_at(self.level, self.length)?;
        }
        Ok(prepared)
    }

    /// The TLS flags given for a target that speaks no TLS: they change nothing, which a user
    /// who meant `https://` should hear.
    fn tls_flags_unused(&self, what: &What) -> Vec<String> {
        let target = what.target();
        if target.scheme() != herd_http::Scheme::Http {
            return Vec::new();
        }
        let given: Vec<&str> = [
            (self.insecure, "-k/--insecure"),
            (self.connect.cacert.is_some(), "--cacert"),
            (self.connect.cert.is_some(), "--cert"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect();
        if given.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "{} had no effect: http://{}/ speaks no TLS; for TLS, give an https:// URL",
            given.join(", "),
            target.authority()
        )]
    }

    /// What the spec's source is, read and checked; `None` when it could not be (the
    /// problems say why).
    fn what(&self, problems: &mut Vec<String>) -> Option<What> {
        match &self.source {
            Source::Url { url } => self.url(url, &self.request, None, problems),
            Source::UrlFile { path } => self.url_file(path, &self.request, problems),
            Source::Replay { url, logs } => {
                let routes = self.connect.routes(problems);
                let target = Target::parse_routed(url, &routes)
                    .map_err(|e| problems.push(e.to_string()))
                    .ok()?;
                let loaded = crate::replay_load::load(logs, &target)
                    .map_err(|e| problems.push(e))
                    .ok()?;
                let replay = crate::replay::prepare(loaded, &self.load)
                    .map_err(|p| problems.extend(p))
                    .ok()?;
                Some(What::Replay {
                    url: url.clone(),
                    target,
                    replay: Box::new(replay),
                })
            }
            Source::Script { url, script, args } => {
                let request = &self.request;
                match self.url(url, request, None, problems) {
                    Some(What::Url(r)) => {
                        match crate::script::load(script, args, &r, request.method.is_some()) {
                            Ok(wrk) => Some(What::Script {
                                request: r,
                                wrk: std::sync::Mutex::new(wrk),
                                file: script.clone(),
                            }),
                            Err(e) => {
                                problems.push(e);
                                None
                            }
                        }
                    }
                    _ => None,
                }
            }
            Source::Workload { path, target } => match compile_workload_at(path, target.as_deref())
            {
                Ok(workload) => {
                    let file = path.clone();
                    Some(What::Workload { workload, file })
                }
                Err(e) => {
                    problems.push(e.to_string());
                    None
                }
            },
        }
    }

    /// The proxy the run's connections go through; http:// needs requests in absolute form,
    /// which a single URL's are.
    fn proxy(&self, what: &What, problems: &mut Vec<String>) -> Option<herd_http::Proxy> {
        let target = match what {
            What::Url(r) | What::Script { request: r, .. } => &r.target,
            What::Replay { target, .. } => target,
            What::UrlFile { workload, .. } | What::Workload { workload, .. } => workload.target(),
        };
        let proxy = self
            .connect
            .proxy(target)
            .map_err(|e| problems.push(e))
            .ok()??;
        let named = match self.connect.proxy {
            Some(_) => "drop --proxy",
            None => {
                "add the host to NO_PROXY (the environment's HTTP_PROXY / HTTPS_PROXY named it)"
            }
        };
        if self.http.http3 {
            problems.push(format!(
                "--http3 cannot go through the proxy {}: QUIC runs over UDP, which an HTTP \
                 forward proxy does not carry; {named}, or drop --http3",
                proxy.shown
            ));
        }
        let h2 =
            self.http.http2 || matches!(what, What::Workload { workload, .. } if workload.http2);
        if h2 && target.scheme() == herd_http::Scheme::Http {
            problems.push(format!(
                "--http2 to an http:// site through the proxy {}: HTTP/2 without TLS (h2c) \
                 cannot go through a forward proxy, which takes HTTP/1.1 requests; use https:// \
                 (HTTP/2 then runs end to end through the proxy's CONNECT tunnel), or {named}",
                proxy.shown
            ));
        }
        let absolute = matches!(what, What::Url(_));
        if target.scheme() == herd_http::Scheme::Http && !absolute {
            problems.push(format!(
                "an http:// site through the proxy {}: only a single URL can go through it for \
                 now (https:// sites go through CONNECT for every kind of run)",
                proxy.shown
            ));
        }
        Some(proxy)
    }

    /// A URL and the request flags, in the order users fix them: the URL, the headers and body,
    /// the plan, then whether the request can be written at all.
    fn url(
        &self,
        url: &str,
        request: &RequestFlags,
        file: Option<(Workload, PathBuf)>,
        problems: &mut Vec<String>,
    ) -> Option<What> {
        let routes = self.connect.routes(problems);
        let target = match Target::parse_routed(url, &routes) {
            Ok(t) => Some(t),
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        };
        let mut spec = request_spec(request, problems);
        let grpc = request.grpc.as_ref().and_then(|c| {
            let (c, tls) = self.reflect_at_target(c, target.as_ref());
            call(&c, tls, &mut spec, problems)
        });
        let body_file = body_file(request, problems);
        let names = file.as_ref().map_or(1, |(w, _)| w.names().len());
        let plan = url_plan(&self.load.at(self.level, self.length), names);
        if let Err(e) = plan.validate() {
            problems.extend(e.0);
        }
        if let Some(t) = &target {
            let others = [
                (request.method.is_some(), "-m/--method"),
                (
                    request.body.is_some() || request.body_file.is_some(),
                    "--body/--body-file",
                ),
                (!request.form.is_empty(), "-F/--form"),
                (request.llm, "--sse"),
                (self.load.pipeline.is_some(), "--pipeline"),
                (self.load.calls_per_conn.is_some(), "--calls-per-conn"),
                (self.http.http3, "--http3"),
                (matches!(self.source, Source::Script { .. }), "-s/--script"),
            ];
            let rate = self.load.rate.is_some();
            request.ws.check(t.websocket(), rate, &others, problems);
        }
        let target = target?;
        let ws = target.websocket().then(|| {
            let mut ws =
                herd_http::ws::WebSocket::new(&target, &spec.headers, request.ws.matching());
            ws.ping_interval = request.ws.ping_interval;
            (std::sync::Arc::new(ws), request.ws.clone())
        });
        // A connection's last request asks the server to close (`--calls-per-conn`), so the
        // TIME_WAIT lands on the server's side, as with ab and httperf.
        let made = match body_file {
            Some(file) => file.prepare(&target, &spec),
            None => prepare(&target, &spec),
        };
        let mut bytes = match made {
            Ok(r) if self.load.calls_per_conn.is_some() => with_closing(r),
            Ok(r) => r,
            Err(e) => {
                problems.push(e.to_string());
                Request::new(Vec::new())
            }
        };
        bytes.llm = request.llm;
        // The body lives in the request's bytes alone (`UrlRequest::body`): one copy.
        spec.body = Vec::new();
        if let Some(p) = self.load.pipeline {
            let idempotent = matches!(
                spec.method.as_str(),
                "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
            );
            if p.depth > 1 && !idempotent && !p.any_method {
                problems.push(format!(
                    "--pipeline sends {} requests before the first is answered: if the server \
                     closes the connection, the others may or may not have been acted on, so \
                     HTTP says not to pipeline a {} (it is not idempotent); add \
                     --pipeline-any-method to pipeline it anyway",
                    p.depth, spec.method
                ));
            }
        }
        let request = UrlRequest {
            target,
            body_len: bytes.parts.as_ref().map_or(0, |p| p.body.len()) as u64,
            spec,
            request: bytes,
            shown_url: request.redact.url(url),
            headers: request.redact.headers(&request.headers),
            secrets_shown: request.redact.shows(),
            ws,
            grpc,
        };
        Some(match file {
            None => What::Url(request),
            Some((workload, file)) => What::UrlFile {
                request,
                workload,
                file,
            },
        })
    }

    /// A URL file read with the request flags as every line's defaults.
    fn url_file(
        &self,
        path: &Path,
        request: &RequestFlags,
        problems: &mut Vec<String>,
    ) -> Option<What> {
        let read = |d: &UrlDefaults| Workload::url_file(path, d).map_err(|d| d.to_string());
        let workload = match read(&UrlDefaults::default()) {
            Ok(w) => w,
            Err(e) => {
                problems.push(e);
                // The flags are still checked, so every problem shows at once.
                let _ = request_spec(request, problems);
                let _ = body_file(request, problems);
                return None;
            }
        };
        let url = workload.target().to_string();
        let what = self.url(&url, request, Some((workload, path.to_owned())), problems)?;
        let What::UrlFile {
            request: r,
            workload,
            file,
        } = what
        else {
            unreachable!("a URL file makes a URL file run")
        };
        if !request.given() || !problems.is_empty() {
            return Some(What::UrlFile {
                request: r,
                workload,
                file,
            });
        }
        match read(&UrlDefaults {
            method: Some(r.spec.method.clone()),
            headers: r.spec.headers.clone(),
            body: r.body().to_vec(),
        }) {
            Ok(workload) => Some(What::UrlFile {
                request: r,
                workload,
                file,
            }),
            Err(e) => {
                problems.push(e);
                None
            }
        }
    }
}

impl RunSpec {
    /// A call whose types are to come by server reflection asks the target: over TLS (ALPN h2)
    /// for `https://`, trusting what the run trusts (`--cacert`, `--skipTLS`) and with its
    /// client certificate (a file that cannot be read is told with the run's TLS flags).
    fn reflect_at_target(
        &self,
        c: &herd_grpc::CallSpec,
        target: Option<&Target>,
    ) -> (herd_grpc::CallSpec, herd_grpc::ReflectTls) {
        let mut c = c.clone();
        let by_reflection = c.proto.is_none() && c.protoset.is_none() && c.reflect.is_none();
        let Some(t) = target.filter(|_| by_reflection) else {
            return (c, None);
        };
        let mut tls = None;
        if matches!(t.scheme(), Scheme::Https) {
            let options = TlsOptions {
                insecure: self.insecure,
                source: None,
                files: self.connect.tls_files(&mut Vec::new()),
            };
            match herd_http::h2_client_config(&options) {
                Ok(config) => tls = Some(config),
                Err(_) => return (c, None),
            }
        }
        c.reflect = Some(match t.host().contains(':') {
            true => format!("[{}]:{}", t.host(), t.port()),
            false => format!("{}:{}", t.host(), t.port()),
        });
        (c, tls)
    }
}

/// The request the flags describe; their problems are added to `problems`.
/// A gRPC call checked and made the request: a POST to its path with its fields and framed
/// message.
fn call(
    c: &herd_grpc::CallSpec,
    tls: herd_grpc::ReflectTls,
    spec: &mut RequestSpec,
    problems: &mut Vec<String>,
) -> Option<std::sync::Arc<herd_grpc::Call>> {
    let call = c.compile_with(tls).map_err(|p| problems.extend(p)).ok()?;
    spec.method = "POST".into();
    spec.path = call.path.clone();
    spec.headers.extend(call.headers.iter().cloned());
    spec.body = call.body.clone();
    Some(std::sync::Arc::new(call))
}

fn request_spec(r: &RequestFlags, problems: &mut Vec<String>) -> RequestSpec {
    let mut headers = Vec::new();
    for h in &r.headers {
        match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                headers.push((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => problems.push(format!(
                "header `{h}` is not `Name: value`, e.g. -H 'Accept: text/html'"
            )),
        }
    }
    // A body file is read straight into the request (`BodyFile::prepare`).
    let mut body = r.body.clone().unwrap_or_default().into_bytes();
    if !r.form.is_empty() {
        match form_body(r, &mut headers) {
            Ok(b) => body = b,
            Err(e) => problems.extend(e),
        }
    }
    let has_body = r.body.is_some() || r.body_file.is_some() || !r.form.is_empty();
    let method = r
        .method
        .clone()
        .map(|m| m.to_ascii_uppercase())
        .unwrap_or_else(|| if has_body { "POST" } else { "GET" }.to_owned());
    RequestSpec {
        method,
        path: String::new(),
        headers,
        body,
    }
}

/// Whether `--bind` names an address of this machine: binding a socket to it is what every
/// connection will do, so a foreign address fails here once rather than on every request.
fn local_address(ip: std::net::IpAddr) -> Result<(), String> {
    std::net::UdpSocket::bind((ip, 0)).map(drop).map_err(|e| {
        format!(
            "--bind {ip}: connections cannot be made from it ({e}): give an address of this machine (see `ip addr`), e.g. 127.0.0.2 for a loopback target"
        )
    })
}

/// `--body-file` opened and checked (the form's fields build the body instead, or are
/// refused beside it).
fn body_file(r: &RequestFlags, problems: &mut Vec<String>) -> Option<BodyFile> {
    let path = r
        .body_file
        .as_ref()
        .filter(|_| r.body.is_none() && r.form.is_empty())?;
    BodyFile::open(path).map_err(|e| problems.push(e)).ok()
}

/// The `multipart/form-data` body of `-F` fields, its Content-Type added to `headers` unless
/// one is given.
fn form_body(
    r: &RequestFlags,
    headers: &mut Vec<(String, String)>,
) -> Result<Vec<u8>, Vec<String>> {
    use herd_http::multipart::{boundary, encode, FormField};
    let mut problems = Vec::new();
    if r.body.is_some() || r.body_file.is_some() {
        problems.push(
            "-F/--form builds the body: it cannot be combined with --body or --body-file"
                .to_owned(),
        );
    }
    let fields: Vec<FormField> = r
        .form
        .iter()
        .filter_map(|f| FormField::parse(f).map_err(|e| problems.push(e)).ok())
        .collect();
    // The boundary follows from the fields, so a run's body (and a shard's plan hash) is the
    // same every time.
    let seed = r.form.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, f| {
        f.bytes()
            .fold(h, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    });
    let (content_type, body) = match encode(&fields, &boundary(seed)) {
        Ok(x) => x,
        Err(e) => {
            problems.push(e);
            return Err(problems);
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("Content-Type".to_owned(), content_type));
    }
    Ok(body)
}

/// The plan a URL's (or URL file's) load flags describe.
pub(crate) fn url_plan(f: &LoadFlags, names: usize) -> Plan {
    let depth = f.pipeline.map_or(1, |p| p.depth);
    let mut connections = None;
    let load = match f.rate {
        Some(rate) => Load::Open {
            rate,
            max_connections: f.connections.unwrap_or(crate::DEFAULT_OPEN_CAP),
        },
        None => {
            // h2load's -c and -m: the connections each carry a window of users' requests.
            let c = f.connections.unwrap_or(crate::DEFAULT_CONNECTIONS);
            if depth > 1 {
                connections = Some(c);
            }
            Load::Closed {
                users: c.saturating_mul(depth as u64),
            }
        }
    };
    let duration = match (f.duration, f.requests) {
        (None, None) => Some(crate::DEFAULT_DURATION),
        (d, _) => d,
    };
    Plan {
        load,
        duration,
        requests: f.requests,
        warmup: f.warmup.unwrap_or_default(),
        threads: f.threads.unwrap_or_else(threads_default),
        timeout: f.timeout.unwrap_or(crate::DEFAULT_TIMEOUT),
        event_timeout: f.event_timeout,
        calls_per_conn: f.calls_per_conn,
        connections,
        pipeline: depth,
        names,
        stages: Vec::new(),
        shard: None,
        late: std::time::Duration::ZERO,
        arrivals: None,
        arrivals_period: None,
        process: f.arrivals.unwrap_or_default(),
        seed: f.seed.unwrap_or(herd_engine::process::DEFAULT_SEED),
        in_turn: false,
    }
}

pub(crate) fn threads_default() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Reads and compiles a workload file; its problems as `herd validate` shows them.
pub fn compile_workload(file: &Path) -> Result<Workload, RunError> {
    compile_workload_at(file, None)
}

/// [`compile_workload`] sent to `target` rather than the file's own (`--target`).
pub fn compile_workload_at(file: &Path, target: Option<&str>) -> Result<Workload, RunError> {
    Workload::load_at(file, target).map_err(|d| {
        let n = d.problems.len();
        let problems = if n == 1 {
            "1 problem".to_owned()
        } else {
            format!("{n} problems")
        };
        RunError::Invalid(vec![format!(
            "{}: {problems}, nothing was sent\n{d}",
            file.display()
        )])
    })
}

/// The workload file a target argument names, if it names one rather than a URL: no `://`, and
/// a `.yaml`/`.yml` name or an existing file (`herd run`, `herd sweep` and `herd capacity`).
pub fn workload_path(arg: &str) -> Option<PathBuf> {
    if arg.contains("://") {
        return None;
    }
    let p = Path::new(arg);
    let yaml = matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
    (yaml || p.is_file()).then(|| p.to_owned())
}

/// What a workload whose users open WebSockets beside their requests cannot be run with: the
/// sockets open with HTTP/1.1's Upgrade, on connections of their own.
fn sockets_refuse(spec: &RunSpec, workload: &Workload, proxy: bool, problems: &mut Vec<String>) {
    for (given, flag) in [(spec.http.http2, "--http2"), (spec.http.http3, "--http3")] {
        if given {
            problems.push(format!(
                "{flag}: this workload's `ws: {{ connect }}` steps open their sockets with \
                 HTTP/1.1's Upgrade; drop {flag}"
            ));
        }
    }
    if proxy && workload.target().scheme() == Scheme::Http {
        problems.push(
            "--proxy: this workload's WebSockets would need a tunnel through the proxy beside \
             its plain http:// requests, which herd does not open yet; drop --proxy, or make \
             the target https://"
                .into(),
        );
    }
}
