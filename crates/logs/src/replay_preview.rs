//! `herd replay --dry-run`: what a replay would send, sent to no one (the first arrivals as
//! lines, how many over how long, what was skipped, and the shape per second); and the replay's
//! options read from the words a user gives them.

use crate::replay::{arrivals, ReplayOptions, Skipped};
use crate::source::{FormatSpec, ReadStats};
use crate::LogError;
use regex::Regex;
use std::fmt::Write;
use std::path::PathBuf;

impl ReplayOptions {
    /// The options as given on a command line: `--include`/`--exclude` regexes, `--from`/`--to`
    /// as ISO 8601 or as a log writes a time, the methods in any case.
    pub fn from_words(
        speed: f64,
        include: &[String],
        exclude: &[String],
        from: Option<&str>,
        to: Option<&str>,
        methods: &[String],
    ) -> Result<ReplayOptions, String> {
        Ok(ReplayOptions {
            speed,
            include: regexes(include, "--include")?,
            exclude: regexes(exclude, "--exclude")?,
            from: from.map(|s| time(s, "--from")).transpose()?,
            to: to.map(|s| time(s, "--to")).transpose()?,
            methods: methods
                .iter()
                .map(|m| m.trim().to_ascii_uppercase())
                .filter(|m| !m.is_empty())
                .collect(),
        })
    }
}

fn time(s: &str, what: &str) -> Result<i64, String> {
    let mut c = crate::time::Clock::default();
    c.iso8601(s.as_bytes())
        .or_else(|| c.apache(s.as_bytes()))
        .map(|t| t.micros)
        .ok_or_else(|| format!("{what} `{s}` is not a time (write 2026-11-24T10:00:00Z or 24/Nov/2026:10:00:00 +0000)"))
}

fn regexes(list: &[String], what: &str) -> Result<Vec<Regex>, String> {
    list.iter()
        .map(|r| Regex::new(r).map_err(|e| format!("{what} `{r}`: {e}")))
        .collect()
}

/// What a replay would send.
pub struct Preview {
    /// The first arrivals, a line each.
    pub shown: String,
    /// Arrivals per second from the first.
    pub per_second: Vec<u64>,
    pub total: u64,
    pub stats: ReadStats,
    pub skipped: Skipped,
}

/// Reads the logs as a replay would, keeping the first `show` arrivals as lines.
pub fn preview(
    paths: &[PathBuf],
    spec: &FormatSpec,
    fields: Option<&str>,
    o: &ReplayOptions,
    show: usize,
) -> Result<Preview, LogError> {
    let (mut shown, mut listed) = (String::new(), 0);
    let mut per_second: Vec<u64> = Vec::new();
    let mut total = 0u64;
    let (stats, skipped) = arrivals(paths, spec, fields, o, |arr| {
        if listed < show {
            let _ = writeln!(
                shown,
                "{:>10.3} s  {} {}{}",
                arr.offset.as_secs_f64(),
                arr.method,
                arr.path_and_query,
                arr.user_agent
                    .as_deref()
                    .map_or(String::new(), |u| format!("  (User-Agent: {u})"))
            );
            listed += 1;
        }
        let s = arr.offset.as_secs() as usize;
        if per_second.len() <= s {
            per_second.resize(s + 1, 0);
        }
        per_second[s] += 1;
        total += 1;
    })?;
    Ok(Preview {
        shown,
        per_second,
        total,
        stats,
        skipped,
    })
}

impl Preview {
    /// After the lines shown: how many would be sent over how long at `speed`, what was skipped
    /// and why, then the arrivals of each second.
    pub fn shape(&self, speed: f64) -> String {
        let s = &self.skipped;
        let skipped_methods: u64 = s.methods.values().sum();
        let by_method: Vec<String> = s.methods.iter().map(|(m, n)| format!("{m} {n}")).collect();
        let mut out = format!(
            "would send {} requests over {} s at --speed {speed}; skipped: {skipped_methods} by method ({}), {} by --include/--exclude, {} outside --from/--to; {} lines out of order sent at once\nper second:\n",
            self.total,
            self.per_second.len(),
            if by_method.is_empty() { "none".into() } else { by_method.join(", ") },
            s.filtered,
            s.outside,
            s.late
        );
        for (i, n) in self.per_second.iter().enumerate() {
            let _ = writeln!(out, "{i:>6} {n}");
        }
        out
    }
}
