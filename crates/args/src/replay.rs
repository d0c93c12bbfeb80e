//! `herd replay LOG... --target URL`'s flags: the logs, the window and pace they are played
//! in, and `herd run`'s load, reach and outputs; the run they make (herd-run reads the logs).

use crate::run::RequestArgs;
use clap::Args;
use herd_logs::replay::ReplayOptions;
use herd_logs::source::FormatSpec;
use herd_run::{ReplayLogs, RunSpec, Source};

/// `herd run`'s load and reach flags, in a replay's words where they differ
/// (`load::REPLAY`).
#[derive(Args, Debug)]
#[command(mut_args = crate::load::replay)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub files: crate::logs::LogFiles,

    /// Where to send them (not used by --dry-run): the log's paths go to this host; its
    /// User-Agent and Referer are sent, Host is the target's
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

    #[command(flatten)]
    pub load: crate::load::LoadArgs,

    /// Play the log again and again until --duration ends, each round after the last
    #[arg(long = "loop", requires = "duration")]
    pub repeat: bool,

    /// Play faster (2 = twice as fast) or slower (0.5)
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    pub speed: f64,

    /// Only requests whose path and query match this regex (repeatable)
    #[arg(long, value_name = "REGEX")]
    pub include: Vec<String>,

    /// Never requests whose path and query match this regex (repeatable)
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<String>,

    /// Start of the window, ISO 8601 (2026-11-24T10:00:00Z) or as the log writes it
    /// (24/Nov/2026:10:00:00 +0000)
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,

    /// End of the window (excluded)
    #[arg(long, value_name = "TIME")]
    pub to: Option<String>,

    /// Methods sent; others are skipped and counted (only idempotent ones by default)
    #[arg(
        long,
        value_name = "METHODS",
        default_value = "GET,HEAD",
        value_delimiter = ','
    )]
    pub methods: Vec<String>,

    /// Print what would be sent and the per-second shape; send nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Requests listed by --dry-run
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub show: usize,

    #[command(flatten)]
    pub reach: crate::run::ReachArgs,

    #[command(flatten, next_help_heading = None::<&str>)]
    pub http: crate::http::HttpArgs,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

impl ReplayArgs {
    /// Which requests are played and how fast (--speed, --include, --exclude, --from, --to,
    /// --methods).
    pub fn options(&self) -> Result<ReplayOptions, String> {
        ReplayOptions::from_words(
            self.speed,
            &self.include,
            &self.exclude,
            self.from.as_deref(),
            self.to.as_deref(),
            &self.methods,
        )
    }

    /// The run of the logs against `url`, read as `format` says (no shard yet). The requests
    /// are built for the site the URL names; a shard's own --resolve or --connect-to says where
    /// its connections go.
    pub fn spec(&self, url: String, format: FormatSpec, options: ReplayOptions) -> RunSpec {
        let logs = ReplayLogs {
            paths: self.files.logs.clone(),
            format,
            fields: self.files.fields.clone(),
            repeat: self.repeat,
            options,
        };
        let source = Source::Replay {
            url,
            logs: Box::new(logs),
        };
        self.reach.spec(
            source,
            &RequestArgs::default(),
            self.load.flags(),
            self.http.flags(),
        )
    }
}
