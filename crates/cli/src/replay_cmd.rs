//! `herd replay LOG... --target URL`: a log's requests sent with their recorded timing (herd-run
//! reads the logs and plays them as any run, with every output of `herd run`); `--dry-run`
//! prints what would be sent and its per-second shape.

use crate::args::RequestArgs;
use crate::exit::{self, Exit};
use clap::Args;
use herd_logs::replay::ReplayOptions;
use herd_logs::replay_preview::preview;
use herd_run::{ReplayLogs, Source};

/// `herd run`'s load and reach flags, in a replay's words where they differ
/// (`load_args::REPLAY`).
#[derive(Args, Debug)]
#[command(mut_args = crate::load_args::replay)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub files: crate::logs_cmd::LogFiles,

    /// Where to send them (not used by --dry-run): the log's paths go to this host; its
    /// User-Agent and Referer are sent, Host is the target's
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

    #[command(flatten)]
    pub load: crate::load_args::LoadArgs,

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
    pub reach: crate::args::ReachArgs,

    #[command(flatten, next_help_heading = None::<&str>)]
    pub http: crate::http_args::HttpArgs,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

pub fn cmd(a: &ReplayArgs) -> Result<i32, Exit> {
    let options = ReplayOptions::from_words(
        a.speed,
        &a.include,
        &a.exclude,
        a.from.as_deref(),
        a.to.as_deref(),
        &a.methods,
    )
    .map_err(Exit::bad_input)?;
    let format = a.files.spec()?;
    if a.dry_run {
        let files = &a.files;
        let preview = preview(
            &files.logs,
            &format,
            files.fields.as_deref(),
            &options,
            a.show,
        )
        .map_err(|e| Exit::bad_input(e.to_string()))?;
        print!("{}", preview.shown);
        crate::logs_cmd::warn_bad(&preview.stats);
        print!("{}", preview.shape(a.speed));
        return Ok(exit::OK);
    }
    let Some(url) = a.target.clone() else {
        return Err(Exit::bad_input(
            "give --target URL (where to send the log's requests), or --dry-run to see them",
        ));
    };
    // The requests are built for the site the URL names; a shard's own --resolve or
    // --connect-to says where its connections go.
    let logs = ReplayLogs {
        paths: a.files.logs.clone(),
        format,
        fields: a.files.fields.clone(),
        repeat: a.repeat,
        options,
    };
    let source = Source::Replay {
        url,
        logs: Box::new(logs),
    };
    let load = a.load.flags();
    let mut spec = a
        .reach
        .spec(source, &RequestArgs::default(), load, a.http.flags());
    spec.shard = a.reach.shard.resolve()?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    let read = prepared.replay_read().cloned().unwrap_or_default();
    crate::logs_cmd::warn_bad(&read.stats);
    let (code, result) = crate::run::play_keeping(&prepared, &a.outputs)?;
    if let Some(table) = herd_report::render_replay_comparison(&result) {
        print!("{table}");
    }
    println!("{}", read.skipped.line(read.invalid));
    Ok(code)
}
