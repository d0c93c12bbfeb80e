//! `herd merge shard-*.json -o total.json`: the shards of a run added up exactly
//! (`herd_result::merge`), judged once on the whole.

use crate::exit::{self, Exit};
use herd_args::merge::MergeArgs;
use herd_report::output::{run_report, Format};
use herd_result::merge::{merge_files, partial_run, partial_sweep, Merged};
use herd_result::sweep::SweepResult;
use herd_result::{write_json_file, RunResult};
use std::path::Path;

pub fn cmd(a: &MergeArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("-o", a.output.as_deref())?;
    match merge_files(&a.files).map_err(Exit::bad_input)? {
        Merged::Run(merged) => conclude(&merged, a.output.as_deref()),
        Merged::Sweep(merged) => conclude_sweep(&merged, a.output.as_deref()),
    }
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
        write_json_file(merged, path).map_err(Exit::bad_input)?;
    }
    let partial = partial_sweep(merged);
    if let Some(p) = &partial {
        eprintln!("herd: {p}");
    }
    let ended = herd_series::sweep::conclude(merged, partial.is_some(), answered);
    Ok(exit::code(ended))
}

/// Prints the merged summary, writes it, and picks the exit code: generator-limited (4, naming
/// the shards) before thresholds (3), as for a single run.
pub fn conclude(merged: &RunResult, output: Option<&Path>) -> Result<i32, Exit> {
    print!("{}", run_report(merged, Format::Text));
    if let Some(path) = output {
        write_json_file(merged, path).map_err(Exit::bad_input)?;
    }
    if let Some(p) = partial_run(merged) {
        eprintln!("herd: {p}");
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
