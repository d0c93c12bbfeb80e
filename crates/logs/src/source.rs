//! Log files in, records out: gzip by its magic bytes, the format told by the first lines when
//! not given, bad lines counted (the first few kept with their line numbers), several files
//! merged by time. Memory is the read buffer and one line per file.

use crate::format::{self, Part};
use crate::json::JsonParser;
use crate::parse::TextParser;
pub use crate::read_stats::{BadLine, ReadStats};
use crate::record::Record;
use crate::time::Timestamp;
use crate::LogError;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// How lines are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FormatSpec {
    /// Told from the first lines: JSON, Combined or Common, with a time taken after them.
    #[default]
    Auto,
    Common,
    Combined,
    /// An Apache `LogFormat` string.
    Apache(String),
    /// An nginx `log_format` line (JSON when it says `escape=json`).
    Nginx(String),
    /// JSON lines.
    Json,
}

impl FormatSpec {
    /// `auto`, `common`, `combined`, `json`, `apache:FORMAT`, `nginx:LINE`.
    pub fn parse(s: &str) -> Result<FormatSpec, LogError> {
        Ok(match s {
            "auto" => FormatSpec::Auto,
            "common" | "clf" => FormatSpec::Common,
            "combined" => FormatSpec::Combined,
            "json" => FormatSpec::Json,
            _ => {
                if let Some(f) = s.strip_prefix("apache:") {
                    FormatSpec::Apache(f.to_owned())
                } else if let Some(f) = s.strip_prefix("nginx:") {
                    FormatSpec::Nginx(f.to_owned())
                } else if s.contains('%') {
                    FormatSpec::Apache(s.to_owned())
                } else if s.contains('$') {
                    FormatSpec::Nginx(s.to_owned())
                } else {
                    return Err(LogError::Format(format!(
                        "`{s}` is not a log format (give auto, common, combined, json, an Apache LogFormat string like '%h %t \"%r\" %>s %b %D', or an nginx log_format line)"
                    )));
                }
            }
        })
    }
}

/// A compiled line parser.
pub enum Parser {
    Text(TextParser),
    Json(JsonParser),
}

impl Parser {
    pub fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Record<'a>, &'static str> {
        match self {
            Parser::Text(p) => p.parse(line),
            Parser::Json(p) => p.parse(line),
        }
    }
}

/// Builds the parser for a format; `sample` (the first lines) decides `Auto`.
pub fn parser_for(
    spec: &FormatSpec,
    fields: Option<&str>,
    sample: &[Vec<u8>],
) -> Result<(Parser, String), LogError> {
    let text = |parts: Vec<Part>, tail: bool| Parser::Text(TextParser::new(parts, tail));
    Ok(match spec {
        FormatSpec::Common => (text(format::apache(format::COMMON)?, true), "common".into()),
        FormatSpec::Combined => (
            text(format::apache(format::COMBINED)?, true),
            "combined".into(),
        ),
        FormatSpec::Apache(f) => (text(format::apache(f)?, false), format!("apache `{f}`")),
        FormatSpec::Nginx(l) if format::nginx_is_json(l) => (
            Parser::Json(JsonParser::new(fields)?),
            "json (nginx escape=json)".into(),
        ),
        FormatSpec::Nginx(l) => (
            text(format::nginx(l)?, false),
            format!("nginx `{}`", format::nginx_text(l)),
        ),
        FormatSpec::Json => (Parser::Json(JsonParser::new(fields)?), "json".into()),
        FormatSpec::Auto => {
            let lines: Vec<&Vec<u8>> = sample.iter().filter(|l| !l.is_empty()).collect();
            if lines.is_empty() {
                return parser_for(&FormatSpec::Combined, fields, sample);
            }
            if lines.iter().filter(|l| l.first() == Some(&b'{')).count() * 2 >= lines.len() {
                return parser_for(&FormatSpec::Json, fields, sample);
            }
            let mut best = (0, FormatSpec::Combined);
            for spec in [FormatSpec::Combined, FormatSpec::Common] {
                let (mut p, _) = parser_for(&spec, fields, sample)?;
                let ok = lines.iter().filter(|l| p.parse(l).is_ok()).count();
                if ok > best.0 {
                    best = (ok, spec);
                }
            }
            parser_for(&best.1, fields, sample)?
        }
    })
}

/// Opens a log file, decompressing gzip (by its magic bytes, whatever the name).
pub fn open(path: &Path) -> Result<(Box<dyn BufRead>, u64), LogError> {
    let err = |e: std::io::Error| LogError::Read {
        path: path.to_owned(),
        source: e,
    };
    let mut f = File::open(path).map_err(err)?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic).map_err(err)?;
    let f = File::open(path).map_err(err)?;
    let r: Box<dyn Read> = if n == 2 && magic == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            f,
        )))
    } else {
        Box::new(f)
    };
    Ok((Box::new(BufReader::with_capacity(1 << 20, r)), size))
}

/// One open file and its current line.
struct Source {
    path: PathBuf,
    reader: Box<dyn BufRead>,
    parser: Parser,
    line: Vec<u8>,
    line_no: u64,
    /// The first lines, read to tell the format, still to be served.
    pending: std::collections::VecDeque<Vec<u8>>,
}

impl Source {
    fn open(
        path: &Path,
        spec: &FormatSpec,
        fields: Option<&str>,
        stats: &mut ReadStats,
    ) -> Result<Source, LogError> {
        let (mut reader, size) = open(path)?;
        stats.bytes += size;
        let mut pending = std::collections::VecDeque::new();
        for _ in 0..20 {
            let mut l = Vec::new();
            if read_line(&mut reader, &mut l).map_err(|e| LogError::Read {
                path: path.to_owned(),
                source: e,
            })? {
                pending.push_back(l);
            } else {
                break;
            }
        }
        let sample: Vec<Vec<u8>> = pending.iter().cloned().collect();
        let (parser, name) = parser_for(spec, fields, &sample)?;
        stats.files.push(path.display().to_string());
        stats.formats.push(name);
        Ok(Source {
            path: path.to_owned(),
            reader,
            parser,
            line: Vec::new(),
            line_no: 0,
            pending,
        })
    }

    /// Moves to the next line; false at the end.
    fn next_line(&mut self) -> Result<bool, LogError> {
        self.line_no += 1;
        if let Some(l) = self.pending.pop_front() {
            self.line = l;
            return Ok(true);
        }
        read_line(&mut self.reader, &mut self.line).map_err(|e| LogError::Read {
            path: self.path.clone(),
            source: e,
        })
    }

    /// Moves to the next readable line and returns its time; bad lines are counted on the way.
    fn next_time(&mut self, stats: &mut ReadStats) -> Result<Option<Timestamp>, LogError> {
        while self.next_line()? {
            if self.line.is_empty() {
                continue;
            }
            stats.lines += 1;
            match self.parser.parse(&self.line) {
                Ok(r) => return Ok(Some(r.time)),
                Err(reason) => stats.note_bad(&self.path, self.line_no, reason, &self.line),
            }
        }
        Ok(None)
    }
}

/// Reads one line without its line break into `buf`; false at the end of the file.
fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    if r.read_until(b'\n', buf)? == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(true)
}

/// Reads every record of `paths` in time order (files merged when several) and hands each to
/// `each`. Fails when a file cannot be read, or when no line at all could be read.
pub fn read_logs(
    paths: &[PathBuf],
    spec: &FormatSpec,
    fields: Option<&str>,
    mut each: impl FnMut(&Record),
) -> Result<ReadStats, LogError> {
    let mut stats = ReadStats::default();
    if paths.is_empty() {
        return Err(LogError::Format("no log file given".into()));
    }
    let mut sources = Vec::new();
    for p in paths {
        sources.push(Source::open(p, spec, fields, &mut stats)?);
    }
    if sources.len() == 1 {
        // the hot path: one parse per line
        let s = &mut sources[0];
        while s.next_line()? {
            if s.line.is_empty() {
                continue;
            }
            stats.lines += 1;
            match s.parser.parse(&s.line) {
                Ok(r) => {
                    stats.records += 1;
                    each(&r);
                }
                Err(reason) => stats.note_bad(&s.path, s.line_no, reason, &s.line),
            }
        }
    } else {
        // k-way merge by time: each file's current line waits until it is the earliest
        let mut heads: Vec<Option<Timestamp>> = Vec::new();
        for s in &mut sources {
            heads.push(s.next_time(&mut stats)?);
        }
        while let Some((i, _)) = heads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .min_by_key(|(_, t)| *t)
        {
            let s = &mut sources[i];
            if let Ok(r) = s.parser.parse(&s.line) {
                stats.records += 1;
                each(&r);
            }
            heads[i] = s.next_time(&mut stats)?;
        }
    }
    if stats.records == 0 {
        return Err(LogError::NothingRead(Box::new(stats)));
    }
    Ok(stats)
}
