//! autobench's TSV (and the same as CSV): written so that spreadsheets and scripts made for
//! autobench keep working, and read back from herd or from autobench itself.
//!
//! The first column is the level (`dem_req_rate`, or `users` in the closed model); then for each
//! target autobench's nine columns, suffixed `_NAME` (autobench's `_testhost`) when there are
//! several targets or the one target has a name ([`Table::named`]); then herd's own columns for
//! each target.

use super::row::{implausible, Extra, Row, Table, TableStep};
use crate::{GeneratorVerdict, Model};
use std::fmt::Write;

/// autobench's columns after the level, in its order.
pub const COLUMNS: [&str; 9] = [
    "req_rate",
    "con_rate",
    "min_rep_rate",
    "avg_rep_rate",
    "max_rep_rate",
    "stddev_rep_rate",
    "resp_time",
    "net_io",
    "errors",
];

/// herd's columns after all of autobench's.
pub const EXTRA_COLUMNS: [&str; 7] = [
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "p99.9_ms",
    "ok",
    "failed",
    "generator",
];

/// Where `errors` (a percentage) is in [`COLUMNS`].
const ERRORS: usize = 8;

const OPEN_LEVEL: &str = "dem_req_rate";
const CLOSED_LEVEL: &str = "users";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Separator {
    Tab,
    Comma,
}

impl Separator {
    fn char(self) -> char {
        match self {
            Separator::Tab => '\t',
            Separator::Comma => ',',
        }
    }
}

/// A table file that cannot be read, with the line to look at.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{origin}{}: {reason}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct TableError {
    pub origin: String,
    pub line: Option<usize>,
    pub reason: String,
}

/// The header line and one line per step, each ending in a newline.
pub fn write_table(t: &Table, sep: Separator) -> String {
    let sep = sep.char();
    let suffix = |name: &str| {
        if t.targets.len() > 1 || t.named {
            format!("_{name}")
        } else {
            String::new()
        }
    };
    let mut header = vec![level_column(t.model).to_owned()];
    for name in &t.targets {
        header.extend(COLUMNS.iter().map(|c| format!("{c}{}", suffix(name))));
    }
    for name in &t.targets {
        header.extend(EXTRA_COLUMNS.iter().map(|c| format!("{c}{}", suffix(name))));
    }
    let mut out = header.join(&sep.to_string());
    out.push('\n');
    for step in &t.steps {
        let mut cells = vec![num(step.level, 3)];
        for r in &step.rows {
            cells.extend(
                [
                    r.req_rate,
                    r.con_rate,
                    r.min_rep_rate,
                    r.avg_rep_rate,
                    r.max_rep_rate,
                    r.stddev_rep_rate,
                ]
                .iter()
                .map(|x| num(*x, 1)),
            );
            // Microseconds: a loopback server answers in a fraction of httperf's 0.1 ms.
            cells.push(num(r.resp_time, 3));
            cells.push(num(r.net_io, 1));
            cells.push(num(r.errors, 4));
        }
        for r in &step.rows {
            match &r.extra {
                Some(x) => {
                    cells.extend([x.p50, x.p95, x.p99, x.p999].iter().map(|v| num(*v, 3)));
                    cells.push(x.ok.to_string());
                    cells.push(x.failed.to_string());
                    cells.push(verdict_name(x.generator).to_owned());
                }
                None => cells.resize(cells.len() + EXTRA_COLUMNS.len(), String::new()),
            }
        }
        let _ = writeln!(out, "{}", cells.join(&sep.to_string()));
    }
    out
}

fn level_column(m: Model) -> &'static str {
    match m {
        Model::Open => OPEN_LEVEL,
        Model::Closed => CLOSED_LEVEL,
    }
}

fn verdict_name(v: GeneratorVerdict) -> &'static str {
    match v {
        GeneratorVerdict::Ok => "ok",
        GeneratorVerdict::GeneratorLimited => "generator-limited",
    }
}

/// `x` with at most `decimals` decimals and no trailing zeros: "199.3", "200", "0.016".
fn num(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return "0".to_owned();
    }
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    if s == "-0" {
        "0".to_owned()
    } else {
        s
    }
}

/// Reads a table written by [`write_table`] or by autobench. Fields are separated by tabs,
/// commas or runs of spaces; a header wrapped over several lines (as pasted from a web page)
/// is joined up to the first line of numbers. A target without a suffix is named
/// `default_name`. `origin` names the text in errors.
pub fn read_table(text: &str, origin: &str, default_name: &str) -> Result<Table, TableError> {
    let err = |line: Option<usize>, reason: String| TableError {
        origin: origin.to_owned(),
        line,
        reason,
    };
    let problem = |(line, reason): Problem| err(line, reason);
    let (header, data) = split_lines(text).map_err(problem)?;
    let Some(level) = header.first() else {
        return Err(err(
            None,
            "it is empty: expected a header such as `dem_req_rate req_rate con_rate ...`".into(),
        ));
    };
    let model = match level.as_str() {
        OPEN_LEVEL => Model::Open,
        CLOSED_LEVEL => Model::Closed,
        other => {
            return Err(err(
                Some(1),
                format!(
                "the first column is `{other}`, not `{OPEN_LEVEL}` or `{CLOSED_LEVEL}`: not an autobench or herd sweep table"
            ),
            ))
        }
    };
    let (targets, slots, named) = read_header(&header, default_name).map_err(problem)?;
    let all = COLUMNS.len() + EXTRA_COLUMNS.len();
    // Each target's columns as the header spells them, to name one in an error.
    let mut column = vec![vec![""; all]; targets.len()];
    for (slot, cell) in slots.iter().zip(&header) {
        if let Some((t, c)) = *slot {
            column[t][c] = cell.as_str();
        }
    }
    let mut steps = Vec::with_capacity(data.len());
    for (line, cells) in data {
        steps.push(read_step(line, &cells, &header, &slots, &column).map_err(problem)?);
    }
    Ok(Table {
        model,
        targets,
        named,
        steps,
    })
}

/// A problem of a table: its line (if one is to blame) and what is wrong.
type Problem = (Option<usize>, String);

/// The header's cells (over as many lines as it was wrapped on) and each row of numbers with
/// its line number.
#[allow(clippy::type_complexity)]
fn split_lines(text: &str) -> Result<(Vec<String>, Vec<(usize, Vec<String>)>), Problem> {
    let split = |l: &str| -> Vec<String> {
        l.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut header: Vec<String> = Vec::new();
    let mut data: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let cells = split(line);
        let Some(first) = cells.first() else { continue };
        if first.parse::<f64>().is_ok() {
            data.push((i + 1, cells));
        } else if data.is_empty() {
            header.extend(cells);
        } else {
            return Err((
                Some(i + 1),
                format!("expected a row of numbers, found `{first}`"),
            ));
        }
    }
    Ok((header, data))
}

/// The targets the header names, which (target, column) each header cell is (`None`: not
/// ours), and whether the targets were named; every target must have every column.
#[allow(clippy::type_complexity)]
fn read_header(
    header: &[String],
    default_name: &str,
) -> Result<(Vec<String>, Vec<Option<(usize, usize)>>, bool), Problem> {
    // For each header cell: which column of which target (None = not ours, ignored).
    let mut targets: Vec<String> = Vec::new();
    let mut slots: Vec<Option<(usize, usize)>> = vec![None];
    let mut named = false;
    for cell in &header[1..] {
        let slot = parse_column(cell).map(|(col, name)| {
            named |= name.is_some();
            let name = name.unwrap_or(default_name).to_owned();
            let t = match targets.iter().position(|t| *t == name) {
                Some(t) => t,
                None => {
                    targets.push(name);
                    targets.len() - 1
                }
            };
            (t, col)
        });
        slots.push(slot);
    }
    let all = COLUMNS.len() + EXTRA_COLUMNS.len();
    for (t, name) in targets.iter().enumerate() {
        let has = |c: usize| slots.iter().flatten().any(|&(tt, cc)| tt == t && cc == c);
        let missing: Vec<&str> = (0..COLUMNS.len())
            .filter(|&c| !has(c))
            .map(|c| COLUMNS[c])
            .collect();
        if !missing.is_empty() {
            return Err((
                Some(1),
                format!("target `{name}` has no column {}", missing.join(", ")),
            ));
        }
        let extras = (COLUMNS.len()..all).filter(|&c| has(c)).count();
        if extras != 0 && extras != EXTRA_COLUMNS.len() {
            return Err((
                Some(1),
                format!("target `{name}` has only some of herd's columns"),
            ));
        }
    }
    if targets.is_empty() {
        return Err((Some(1), "the header names no columns of a target".into()));
    }
    Ok((targets, slots, named))
}

/// One row of numbers: the level, and each target's row.
fn read_step(
    line: usize,
    cells: &[String],
    header: &[String],
    slots: &[Option<(usize, usize)>],
    column: &[Vec<&str>],
) -> Result<TableStep, Problem> {
    let all = COLUMNS.len() + EXTRA_COLUMNS.len();
    if cells.len() != header.len() {
        return Err((
            Some(line),
            format!(
                "{} fields, but the header has {} columns",
                cells.len(),
                header.len()
            ),
        ));
    }
    let mut values = vec![vec![None::<&str>; all]; column.len()];
    for (slot, cell) in slots.iter().zip(cells).skip(1) {
        if let Some((t, c)) = *slot {
            values[t][c] = Some(cell.as_str());
        }
    }
    let number = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| (Some(line), format!("`{s}` is not a number")))
    };
    let measured = |name: &str, s: &str, percent: bool| {
        let x = number(s)?;
        match implausible(x, percent) {
            None => Ok(x),
            Some(why) => Err((Some(line), format!("`{name}` is {s}: {why}"))),
        }
    };
    let level = measured(&header[0], &cells[0], false)?;
    let mut rows = Vec::with_capacity(column.len());
    for (v, names) in values.iter().zip(column) {
        let f = |c: usize| {
            let cell = v[c].expect("every column was checked in the header");
            measured(names[c], cell, c == ERRORS)
        };
        let extra = match v[COLUMNS.len()] {
            None => None,
            Some(_) => {
                let g = v[all - 1].unwrap_or_default();
                let generator = match g {
                    "ok" => GeneratorVerdict::Ok,
                    "generator-limited" => GeneratorVerdict::GeneratorLimited,
                    other => {
                        return Err((
                            Some(line),
                            format!("generator is `{other}`, not `ok` or `generator-limited`"),
                        ))
                    }
                };
                Some(Extra {
                    p50: f(9)?,
                    p95: f(10)?,
                    p99: f(11)?,
                    p999: f(12)?,
                    ok: f(13)? as u64,
                    failed: f(14)? as u64,
                    generator,
                })
            }
        };
        rows.push(Row {
            req_rate: f(0)?,
            con_rate: f(1)?,
            min_rep_rate: f(2)?,
            avg_rep_rate: f(3)?,
            max_rep_rate: f(4)?,
            stddev_rep_rate: f(5)?,
            resp_time: f(6)?,
            net_io: f(7)?,
            errors: f(8)?,
            extra,
        });
    }
    Ok(TableStep { level, rows })
}

/// `req_rate` -> (0, None); `req_rate_testhost` -> (0, Some("testhost")); unknown -> None.
fn parse_column(cell: &str) -> Option<(usize, Option<&str>)> {
    let names = COLUMNS.iter().chain(EXTRA_COLUMNS.iter()).enumerate();
    let mut best: Option<(usize, Option<&str>, usize)> = None;
    for (i, name) in names {
        if cell == *name {
            return Some((i, None));
        }
        if let Some(rest) = cell.strip_prefix(name).and_then(|r| r.strip_prefix('_')) {
            // `p99.9_ms_x` must not read as `p99` of a target `.9_ms_x`: the longest name wins.
            let longer = match best {
                Some(b) => name.len() > b.2,
                None => true,
            };
            if !rest.is_empty() && longer {
                best = Some((i, Some(rest), name.len()));
            }
        }
    }
    best.map(|(i, t, _)| (i, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lose_trailing_zeros_only() {
        let table = [
            (199.3, 1, "199.3"),
            (200.0, 1, "200"),
            (0.016025641, 4, "0.016"),
            (0.0, 4, "0"),
            (-0.0, 1, "0"),
            (1234.56, 1, "1234.6"),
            (f64::NAN, 1, "0"),
        ];
        for (x, d, want) in table {
            assert_eq!(num(x, d), want, "{x}");
        }
    }

    #[test]
    fn columns_are_split_from_target_names() {
        let table = [
            ("req_rate", Some((0, None))),
            ("req_rate_testhost", Some((0, Some("testhost")))),
            ("errors_my_host", Some((8, Some("my_host")))),
            ("p99_ms_a", Some((11, Some("a")))),
            ("p99.9_ms_a", Some((12, Some("a")))),
            ("generator_b", Some((15, Some("b")))),
            ("req_rate_", None),
            ("latency", None),
        ];
        for (cell, want) in table {
            assert_eq!(parse_column(cell), want, "{cell}");
        }
    }
}
