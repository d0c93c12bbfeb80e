//! `herd replay LOG... --target URL`: a log's requests sent with their recorded timing (herd-run
//! reads the logs and plays them as any run, with every output of `herd run`); `--dry-run`
//! prints what would be sent and its per-second shape.

use crate::exit::{self, Exit};
use clap::Args;
use herd_logs::replay::ReplayOptions;
use herd_logs::replay_preview::preview;
use herd_run::{LoadFlags, RunSpec, Source};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub files: crate::logs_cmd::LogFiles,

    /// Where to send them (not used by --dry-run): the log's paths go to this host; its
    /// User-Agent and Referer are sent, Host is the target's
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

    /// Ignore the log's timing: send its requests at this many per second
    #[arg(long, value_name = "R", value_parser = crate::values::rate)]
    pub rate: Option<f64>,

    /// Play the log again and again until --duration ends, each round after the last
    #[arg(long = "loop", requires = "duration")]
    pub repeat: bool,

    /// With --loop: how long to play
    #[arg(short = 'd', long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub duration: Option<std::time::Duration>,

    /// Most connections open at once (arrivals that find none free wait, then are dropped)
    #[arg(short = 'c', long, value_name = "N", default_value_t = 1000, value_parser = crate::values::count::<u64>)]
    pub connections: u64,

    /// Worker threads
    #[arg(short = 't', long, value_name = "N", default_value_t = 1, value_parser = crate::values::count::<usize>)]
    pub threads: usize,

    /// Per-request deadline, connect included [default: 10s]
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub timeout: Option<std::time::Duration>,

    /// Do not verify TLS certificates
    #[arg(short = 'k', long)]
    pub insecure: bool,

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

    /// Make connections from this local address (ab's -B), e.g. 127.0.0.2: shards on one
    /// machine, each from its own address, do not compete for local ports
    #[arg(long, value_name = "IP")]
    pub bind: Option<std::net::IpAddr>,

    #[command(flatten)]
    pub connect: crate::args::ConnectArgs,

    #[command(flatten)]
    pub watch: crate::watch::WatchArgs,

    #[command(flatten)]
    pub shard: crate::shard_args::ShardArgs,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

/// The replay as herd-run prepares every other kind of run; with every problem of the outputs.
fn prepare(
    a: &ReplayArgs,
    url: &str,
    replay: herd_run::Replay,
) -> Result<herd_run::Prepared, Exit> {
    let spec = RunSpec {
        load: LoadFlags {
            connections: Some(a.connections),
            rate: a.rate,
            duration: a.duration,
            timeout: a.timeout,
            threads: Some(a.threads),
            ..LoadFlags::default()
        },
        insecure: a.insecure,
        bind: a.bind,
        connect: a.connect.flags(),
        watch: a.watch.plan(),
        shard: a.shard.resolve()?,
        ..RunSpec::new(Source::Replay {
            url: url.to_owned(),
            replay: Box::new(replay),
        })
    };
    crate::outputs::prepared(spec.prepare(), &a.outputs)
}

pub fn cmd(a: &ReplayArgs) -> Result<i32, Exit> {
    let opts = ReplayOptions::from_words(
        a.speed,
        &a.include,
        &a.exclude,
        a.from.as_deref(),
        a.to.as_deref(),
        &a.methods,
    )
    .map_err(Exit::bad_input)?;
    let spec = a.files.spec()?;
    if !a.dry_run {
        let Some(url) = a.target.as_deref() else {
            return Err(Exit::bad_input(
                "give --target URL (where to send the log's requests), or --dry-run to see them",
            ));
        };
        // The requests are built for the site the URL names; a shard's own --resolve or
        // --connect-to says where its connections go.
        let mut problems = Vec::new();
        let routes = a.connect.flags().routes(&mut problems);
        if !problems.is_empty() {
            return Err(Exit::bad_input(problems.join("\n")));
        }
        let target = herd_http::Target::parse_routed(url, &routes)
            .map_err(|e| Exit::bad_input(e.to_string()))?;
        let problems = a.outputs.check(false, a.shard.given());
        if !problems.is_empty() {
            return Err(Exit::bad_input(format!(
                "{}\nnothing was sent",
                problems.join("\n")
            )));
        }
        let logs = herd_run::replay_load::Logs {
            paths: &a.files.logs,
            format: &spec,
            fields: a.files.fields.as_deref(),
            repeat: a.repeat,
        };
        let read = herd_run::replay_load::load(&logs, &target, &opts).map_err(Exit::bad_input)?;
        crate::logs_cmd::warn_bad(&read.stats);
        let (skipped, invalid) = (read.skipped, read.invalid);
        let prepared = prepare(a, url, read.replay)?;
        let (code, result) = crate::run::play_keeping(&prepared, &a.outputs)?;
        if let Some(table) = herd_report::render_replay_comparison(&result) {
            print!("{table}");
        }
        let by_method: u64 = skipped.methods.values().sum();
        println!(
            "  replay     skipped {by_method} by method, {} by --include/--exclude, {} outside --from/--to, {invalid} not sendable to the target; {} out of order sent at once",
            skipped.filtered, skipped.outside, skipped.late
        );
        return Ok(code);
    }
    let files = &a.files;
    let preview = preview(&files.logs, &spec, files.fields.as_deref(), &opts, a.show)
        .map_err(|e| Exit::bad_input(e.to_string()))?;
    print!("{}", preview.shown);
    crate::logs_cmd::warn_bad(&preview.stats);
    print!("{}", preview.shape(a.speed));
    Ok(exit::OK)
}
