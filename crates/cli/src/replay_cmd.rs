//! `herd replay LOG... --dry-run`: the requests a replay would send, and its per-second shape.
//! Sending them is the engine's part and is not built yet: without `--dry-run` herd says so.

use crate::exit::{self, Exit};
use clap::Args;
use herd_logs::replay::{arrivals, ReplayOptions};
use herd_logs::source::FormatSpec;
use regex::Regex;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Access logs, merged in time order
    #[arg(value_name = "LOG", required = true)]
    pub logs: Vec<PathBuf>,

    /// The log's format (as `herd logs --format`)
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub format: String,

    /// JSON lines: which key holds what (as `herd logs --fields`)
    #[arg(long, value_name = "ROLE=KEY,...")]
    pub fields: Option<String>,

    /// Where to send them (not used by --dry-run)
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

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
}

fn time(s: &str, what: &str) -> Result<i64, Exit> {
    let mut c = herd_logs::time::Clock::default();
    c.iso8601(s.as_bytes())
        .or_else(|| c.apache(s.as_bytes()))
        .map(|t| t.micros)
        .ok_or_else(|| Exit::bad_input(format!("{what} `{s}` is not a time (write 2026-11-24T10:00:00Z or 24/Nov/2026:10:00:00 +0000)")))
}

fn regexes(list: &[String], what: &str) -> Result<Vec<Regex>, Exit> {
    list.iter()
        .map(|r| Regex::new(r).map_err(|e| Exit::bad_input(format!("{what} `{r}`: {e}"))))
        .collect()
}

pub fn cmd(a: &ReplayArgs) -> Result<i32, Exit> {
    let opts = ReplayOptions {
        speed: a.speed,
        include: regexes(&a.include, "--include")?,
        exclude: regexes(&a.exclude, "--exclude")?,
        from: a.from.as_deref().map(|s| time(s, "--from")).transpose()?,
        to: a.to.as_deref().map(|s| time(s, "--to")).transpose()?,
        methods: a
            .methods
            .iter()
            .map(|m| m.trim().to_ascii_uppercase())
            .filter(|m| !m.is_empty())
            .collect(),
    };
    if !a.dry_run {
        return Err(Exit::bad_input(
            "herd replay cannot send yet (the engine's open-model replay is being built): use --dry-run to see what would be sent",
        ));
    }
    let spec = FormatSpec::parse(&a.format).map_err(|e| Exit::bad_input(e.to_string()))?;
    let mut shown = 0;
    let mut per_second: Vec<u64> = Vec::new();
    let mut total = 0u64;
    let (stats, skipped) = arrivals(&a.logs, &spec, a.fields.as_deref(), &opts, |arr| {
        if shown < a.show {
            println!(
                "{:>10.3} s  {} {}{}",
                arr.offset.as_secs_f64(),
                arr.method,
                arr.path_and_query,
                arr.user_agent
                    .as_deref()
                    .map_or(String::new(), |u| format!("  (User-Agent: {u})"))
            );
            shown += 1;
        }
        let s = arr.offset.as_secs() as usize;
        if per_second.len() <= s {
            per_second.resize(s + 1, 0);
        }
        per_second[s] += 1;
        total += 1;
    })
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    crate::logs_cmd::warn_bad(&stats);
    let skipped_methods: u64 = skipped.methods.values().sum();
    let by_method: Vec<String> = skipped
        .methods
        .iter()
        .map(|(m, n)| format!("{m} {n}"))
        .collect();
    println!(
        "would send {total} requests over {} s at --speed {}; skipped: {skipped_methods} by method ({}), {} by --include/--exclude, {} outside --from/--to; {} lines out of order sent at once",
        per_second.len(),
        a.speed,
        if by_method.is_empty() { "none".into() } else { by_method.join(", ") },
        skipped.filtered,
        skipped.outside,
        skipped.late
    );
    println!("per second:");
    for (i, n) in per_second.iter().enumerate() {
        println!("{i:>6} {n}");
    }
    Ok(exit::OK)
}
