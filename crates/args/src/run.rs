//! Flags of `herd run`, as users know them from wrk, hey, ab and httperf, and the groups every
//! command that sends load shares (the request, how the target is reached); the one place a
//! `RunSpec` is filled from flags (`ReachArgs::spec`).

use clap::Args;
use herd_run::{HttpFlags, LoadFlags, RequestFlags, RunSpec, Source};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(mut_args = crate::short_help::run)]
pub struct RunArgs {
    /// The URL to load, e.g. http://127.0.0.1:8080/ (https:// verifies certificates; ws:// and
    /// wss:// send WebSocket messages, see --send), or a workload file (shop.yaml: scenarios, data, stages, thresholds; see docs/workload.md)
    #[arg(required_unless_present = "urls_file", value_name = "URL|FILE.yaml")]
    pub url: Option<String>,

    /// Load the URLs of a siege URL file, one `URL [POST data]` per line, each user walking
    /// them in order; the load comes from the flags as for one URL
    #[arg(
        short = 'f',
        long = "file",
        value_name = "URLS.txt",
        conflicts_with = "url"
    )]
    pub urls_file: Option<PathBuf>,

    /// A workload file's requests go to this URL instead of its `target:` (Artillery's
    /// --target), e.g. herd run shop.yaml --target http://staging:8080
    #[arg(long = "target", value_name = "URL")]
    pub target: Option<String>,

    #[command(flatten)]
    pub load: crate::load::LoadArgs,

    #[command(flatten)]
    pub request: RequestArgs,

    /// A multipart/form-data field, curl's syntax: name=value, name=@file (an upload;
    /// ;type=T and ;filename=F after it) or name=<file (its text); repeatable, POST by default
    #[arg(short = 'F', long = "form", value_name = "NAME=VALUE", conflicts_with_all = ["body", "body_file"])]
    pub form: Vec<String>,

    /// A ws:// or wss:// URL's message, sent on each socket; {{seq}} is the message's number
    /// in the run. Each reply is timed from its message's intended send
    #[arg(long, value_name = "TEXT")]
    pub send: Option<String>,

    /// WebSocket: messages per second on each of the -c sockets, on a fixed schedule (the
    /// open model); without it each socket sends, awaits the reply, sends again
    #[arg(long = "message-rate", value_name = "R", value_parser = crate::values::rate)]
    pub message_rate: Option<f64>,

    /// WebSocket: a reply answers the message whose JSON field FIELD has the same value
    /// (e.g. id) [default: the oldest message waiting]
    #[arg(long = "match", value_name = "FIELD")]
    pub matching: Option<String>,

    /// WebSocket: each open socket pings the server every D (e.g. 1s); each pong's round trip
    /// is timed from its ping's intended instant (the summary's and JSON's ping RTT)
    #[arg(long = "ping-interval", value_name = "D", value_parser = crate::values::duration)]
    pub ping_interval: Option<std::time::Duration>,

    /// Drive the run with a wrk Lua script (wrk's scripting API: setup, init, delay, request,
    /// response, done); arguments after `--` go to its init(args). See docs/scripting.md
    #[arg(
        short = 's',
        long = "script",
        value_name = "SCRIPT.lua",
        conflicts_with = "urls_file"
    )]
    pub script: Option<PathBuf>,

    /// Arguments for the script's init(args), after `--` (as with wrk)
    #[arg(last = true, value_name = "ARGS", requires = "script")]
    pub script_args: Vec<String>,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,

    #[command(flatten)]
    pub reach: ReachArgs,

    // Back under the first heading: the shard flags before it set their own.
    #[command(flatten, next_help_heading = None::<&str>)]
    pub http: crate::http::HttpArgs,

    /// A value for {{env.NAME}} in a workload file (and os.getenv in a script), NAME=VALUE,
    /// so secrets stay out of files (repeatable; k6's -e)
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
}

impl RunArgs {
    /// The workload file the argument names, if it names one rather than a URL.
    pub fn workload_file(&self) -> Option<PathBuf> {
        herd_run::workload_path(self.url.as_deref()?)
    }

    /// What the flags refuse together before any file is read: a script aimed at a workload
    /// file, a workload's --target given with a URL.
    pub fn refused(&self) -> Option<String> {
        let file = self.workload_file();
        if let (Some(file), true) = (&file, self.script.is_some()) {
            return Some(format!(
                "-s/--script drives a URL, not a workload file ({}): give the URL the script \
                 loads",
                file.display()
            ));
        }
        if let (None, Some(url)) = (file, &self.target) {
            return Some(format!(
                "--target {url} aims a workload file at another host: give the file (herd run \
                 shop.yaml --target {url}), or give a URL alone"
            ));
        }
        None
    }

    /// The run the flags describe: a workload file, a URL file, a script or a URL (no shard
    /// yet: the CLI resolves it from the environment).
    pub fn spec(&self) -> RunSpec {
        let file = self.workload_file();
        let source = match (&file, &self.urls_file) {
            (Some(path), _) => Source::Workload {
                path: path.clone(),
                target: self.target.clone(),
            },
            (None, None) if self.script.is_some() => Source::Script {
                url: self.url.clone().unwrap_or_default(),
                script: self.script.clone().unwrap_or_default(),
                args: self.script_args.clone(),
            },
            (None, Some(path)) => Source::UrlFile { path: path.clone() },
            (None, None) => Source::Url {
                url: self.url.clone().unwrap_or_default(),
            },
        };
        let mut spec = self
            .reach
            .spec(source, &self.request, self.load.flags(), self.http.flags());
        spec.request.form = self.form.clone();
        spec.request.ws = herd_run::WsFlags {
            send: self.send.clone(),
            message_rate: self.message_rate,
            matching: self.matching.clone(),
            ping_interval: self.ping_interval,
        };
        spec
    }
}

/// The request every run of a URL sends (curl's and wrk's flags), shared by `run`, `sweep`
/// and `capacity`.
#[derive(Args, Debug, Clone, Default)]
pub struct RequestArgs {
    /// HTTP method [default: GET, or POST when a body is given]
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,

    /// A request header, 'Name: value' (repeatable); 'User-Agent:' or 'Accept:' with no value
    /// removes that default header, as in curl
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// The request body
    #[arg(long, value_name = "STRING", conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Read the request body from a file
    #[arg(long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// How a text/event-stream response is read (always as events as they arrive): `events`
    /// times every event; `llm` an OpenAI-compatible chat completion's tokens: the first
    /// content is the time to first token, gaps are inter-token latency, a stream must end
    /// with `data: [DONE]` (else error `sse_no_done`) [default: events]
    #[arg(long, value_name = "MODE", value_parser = crate::values::sse_mode)]
    pub sse: Option<bool>,

    /// The longest an event stream may go without an event (from the send to its first, then
    /// between events): a stream quiet for longer ends as error `sse_stalled`, apart from a
    /// missing `data: [DONE]`; --timeout still bounds the whole stream; wins over a workload
    /// file's `defaults: event_timeout` [default: none]
    #[arg(long = "event-timeout", value_name = "TIME", value_parser = crate::values::event_timeout)]
    pub event_timeout: Option<std::time::Duration>,
}

impl RequestArgs {
    /// The request flags, credentials in them masked as `redact` says.
    pub fn flags(&self, redact: herd_result::redact::Redaction) -> RequestFlags {
        RequestFlags {
            method: self.method.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
            body_file: self.body_file.clone(),
            redact,
            llm: self.sse == Some(true),
            ..RequestFlags::default()
        }
    }
}

/// How herd reaches the target, and what else each run of it carries besides its request, its
/// load and its protocol: TLS verification, the local address, routes and identity (curl's
/// flags), secrets, the server watched and the shard. Shared by `run`, `replay`, `sweep`,
/// `capacity` and `grpc` (which speaks HTTP/2 alone, so the protocol flags are apart:
/// `HttpArgs`); `demo` gives none of them (the default).
#[derive(Args, Debug, Clone, Default)]
pub struct ReachArgs {
    /// Do not verify TLS certificates (self-signed test servers)
    #[arg(short = 'k', long)]
    pub insecure: bool,

    /// Make connections from this local address (ab's -B), e.g. 127.0.0.2: shards on one
    /// machine, each from its own address, do not compete for local ports
    #[arg(long, value_name = "IP")]
    pub bind: Option<std::net::IpAddr>,

    #[command(flatten)]
    pub connect: ConnectArgs,

    #[command(flatten)]
    pub secrets: crate::secrets::SecretArgs,

    #[command(flatten)]
    pub watch: crate::watch::WatchArgs,

    #[command(flatten)]
    pub shard: crate::shard::ShardArgs,
}

impl ReachArgs {
    /// The one place a [`RunSpec`] is filled from flags (`run`, `replay`, `demo`, `grpc` and
    /// each run of a series): `source` played with `request`'s request at `load` over `http`,
    /// reached as these flags say (no shard yet: a series gives each of its targets its own
    /// start instants).
    pub fn spec(
        &self,
        source: Source,
        request: &RequestArgs,
        load: LoadFlags,
        http: HttpFlags,
    ) -> RunSpec {
        RunSpec {
            request: request.flags(self.secrets.redaction()),
            load: LoadFlags {
                event_timeout: request.event_timeout,
                ..load
            },
            insecure: self.insecure,
            bind: self.bind,
            connect: self.connect.flags(),
            watch: self.watch.plan(),
            http,
            ..RunSpec::new(source)
        }
    }
}

/// curl's connection flags: where connections go, and the TLS identity they carry.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConnectArgs {
    /// Connect to ADDR for HOST:PORT instead of resolving HOST (curl's --resolve), e.g.
    /// shop.example:443:127.0.0.1; the Host header and TLS name stay the URL's (repeatable)
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,

    /// Send connections for HOST:PORT to ADDR:PORT2 (curl's --connect-to; an empty field
    /// matches any), e.g. shop.example:443:10.0.0.7:8443 (repeatable)
    #[arg(long = "connect-to", value_name = "HOST:PORT:ADDR:PORT2")]
    pub connect_to: Vec<String>,

    /// Send connections through this forward proxy, http://host:port (user:password@ before the host when it asks for credentials): http://
    /// sites in absolute form, https:// and WebSockets through a CONNECT tunnel [default: $https_proxy or
    /// $http_proxy, unless $no_proxy names the host; never for loopback]
    #[arg(short = 'x', long, value_name = "URL")]
    pub proxy: Option<String>,

    /// A client certificate (PEM, chain after it) for servers that ask for one
    #[arg(long, value_name = "CERT.pem")]
    pub cert: Option<PathBuf>,

    /// The client certificate's private key (PEM) [default: in the --cert file]
    #[arg(long, value_name = "KEY.pem", requires = "cert")]
    pub key: Option<PathBuf>,

    /// Check the server's certificate against these CA certificates (PEM) instead of
    /// Mozilla's roots
    #[arg(long, value_name = "CA.pem")]
    pub cacert: Option<PathBuf>,
}

impl ConnectArgs {
    pub fn flags(&self) -> herd_run::ConnectFlags {
        herd_run::ConnectFlags {
            resolve: self.resolve.clone(),
            connect_to: self.connect_to.clone(),
            proxy: self.proxy.clone(),
            cert: self.cert.clone(),
            key: self.key.clone(),
            cacert: self.cacert.clone(),
        }
    }
}
