//! `herd merge shard-*.json -o total.json`: the shards of a run added up exactly
//! (`herd_result::merge`), judged once on the whole.

use crate::exit::{self, Exit};
use clap::Args;
use herd_report::render_text;
use herd_result::sweep::SweepResult;
use herd_result::{write_json, Document, RunResult};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' result files (herd run, herd replay or herd sweep with --shard I/N --json
    /// FILE), or merged ones
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged result as JSON (herd report, compare and plot read it like any run)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn cmd(a: &MergeArgs) -> Result<i32, Exit> {
    check_output(a.output.as_deref())?;
    let mut merge = herd_result::merge::Merge::new();
    let mut sweeps = Vec::new();
    let mut unreadable = Vec::new();
    for f in &a.files {
        let name = f.display().to_string();
        match herd_result::read_document(f) {
            Ok(Document::Run(r)) => merge.add(&name, *r),
            Ok(Document::Sweep(s)) => sweeps.push((name, *s)),
            Ok(Document::Capacity(_)) => unreadable.push(format!(
                "{name} is a capacity search: its shards would have searched apart, so herd capacity is not sharded; merge runs or sweeps"
            )),
            Err(e) => unreadable.push(format!("{name}: {e}")),
        }
    }
    if !sweeps.is_empty() {
        if sweeps.len() != a.files.len() || !unreadable.is_empty() {
            unreadable.insert(0, "a sweep's shards merge only with each other: give the files of one herd sweep --shard I/N".to_owned());
            return Err(Exit::bad_input(format!(
                "nothing merged:\n{}",
                unreadable.join("\n")
            )));
        }
        let merged = herd_result::merge::merge_sweeps(sweeps)
            .map_err(|e| Exit::bad_input(format!("nothing merged:\n{e}")))?;
        return conclude_sweep(&merged, a.output.as_deref());
    }
    let merged = merge.finish();
    let mut problems = unreadable;
    if let Err(e) = &merged {
        problems.extend(e.0.iter().cloned());
    }
    if !problems.is_empty() {
        return Err(Exit::bad_input(format!(
            "nothing merged:\n{}",
            problems.join("\n")
        )));
    }
    conclude(&merged.expect("no problems"), a.output.as_deref())
}

/// A merged sweep: its table and knees as `herd sweep` prints them, the file, the exit code.
fn conclude_sweep(merged: &SweepResult, output: Option<&Path>) -> Result<i32, Exit> {
    let table = merged.table();
    print!(
        "{}",
        herd_result::sweep::write_table(&table, herd_result::sweep::Separator::Tab)
    );
    let answered = crate::sweep::summary(merged);
    if let Some(path) = output {
        let mut buf = Vec::new();
        write_json(merged, &mut buf).map_err(|e| Exit::bad_input(e.to_string()))?;
        crate::sweep::write_file(path, &buf)?;
    }
    let partial: Vec<String> = merged
        .steps
        .iter()
        .flat_map(|s| &s.runs)
        .filter_map(|r| {
            r.shard
                .as_ref()
                .filter(|h| h.is_partial())
                .map(|h| h.label())
        })
        .collect();
    if let Some(p) = partial.first() {
        eprintln!("herd: partial result: only shards {p} of some steps (nothing was scaled up to stand for the rest)");
    }
    let ended = herd_series::sweep::conclude(merged, !partial.is_empty(), answered);
    Ok(exit::code(ended))
}

/// Refuses an output path that cannot be written before any work is done (the one check every
/// command's outputs get).
pub fn check_output(path: Option<&Path>) -> Result<(), Exit> {
    match path {
        Some(p) => herd_live::paths::check_writable("-o", p).map_err(Exit::bad_input),
        None => Ok(()),
    }
}

/// Prints the merged summary, writes it, and picks the exit code: generator-limited (4, naming
/// the shards) before thresholds (3), as for a single run.
pub fn conclude(merged: &RunResult, output: Option<&Path>) -> Result<i32, Exit> {
    let mut text = String::new();
    let _ = render_text(merged, &mut text);
    print!("{text}");
    if let Some(path) = output {
        let file = std::fs::File::create(path)
            .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))?;
        write_json(merged, std::io::BufWriter::new(file))
            .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(h) = merged.shard.as_ref().filter(|h| h.is_partial()) {
        let missing: Vec<String> = h
            .missing
            .iter()
            .map(|i| format!("{i}/{}", h.count))
            .collect();
        eprintln!(
            "herd: partial result: shard {} missing (nothing was scaled up to stand for it)",
            missing.join(", ")
        );
    }
    let ended = herd_run::conclude_merged(merged);
    if ended == herd_run::Conclusion::GeneratorLimited {
        eprintln!(
            "herd: the measurement is generator-limited: {}",
            merged.generator.reasons.join("; ")
        );
    }
    Ok(exit::code(ended))
}
