//! `herd compare BASE NEW...`: runs side by side; exit 3 when a key metric regressed beyond the
//! threshold and beyond noise, so a CI job can stop a release that got slower.

use crate::exit::{self, Exit};
use crate::report_format::{emit, format_for, Format};
use clap::Args;
use herd_compare::{baseline_label, compare, read_runs};
use herd_report::{html, render_compare_text};
use herd_result::{write_json_file, RunResult};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The base run's JSON, then the runs to compare with it (with --baseline: only the runs
    /// to compare)
    #[arg(value_name = "RESULT.json", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,

    /// Compare with stored runs instead of a base file: those with these labels
    /// (KEY=VALUE,KEY=VALUE) and the same load, from --store or $HERD_STORE; the run pinned by
    /// `herd history baseline set`, or with --last N the last N merged exactly
    #[arg(long, value_name = "LABELS")]
    pub baseline: Option<String>,

    /// With --baseline: the last N matching runs, merged into one base
    #[arg(long, value_name = "N", requires = "baseline", value_parser = crate::values::count::<usize>)]
    pub last: Option<usize>,

    /// The store --baseline reads: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL", requires = "baseline")]
    pub store: Option<String>,

    /// How much worse a key metric may get before it counts as a regression (when beyond
    /// noise too), e.g. 10% or 5
    #[arg(long, value_name = "PERCENT", default_value = "10%", value_parser = crate::values::threshold)]
    pub threshold: f64,

    /// Also write the runs overlaid in one report: HTML, or PDF for a .pdf file
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the comparison and its verdict as JSON (schema/compare.schema.json)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn cmd(a: &CompareArgs) -> Result<i32, Exit> {
    let mut runs = read_runs(&a.files).map_err(Exit::bad_input)?;
    match &a.baseline {
        Some(selector) => runs.insert(0, baseline(a, selector, &runs[0].1)?),
        None if runs.len() < 2 => {
            return Err(Exit::bad_input(
                "compare needs a base run and a run to compare with it: give two files, or --baseline LABELS to compare with stored runs",
            ))
        }
        None => {}
    }
    let named: Vec<(String, &RunResult)> = runs.iter().map(|(l, r)| (l.clone(), r)).collect();
    let comparison = compare(&named, a.threshold);
    let mut text = String::new();
    let _ = render_compare_text(&comparison, &mut text);
    print!("{text}");
    if let Some(out) = &a.output {
        let format = match format_for(None, Some(out)) {
            Format::Pdf => Format::Pdf,
            _ => Format::Html,
        };
        let results: Vec<&RunResult> = runs.iter().map(|(_, r)| r).collect();
        emit(
            &html::render_compare(&comparison, &results),
            format,
            Some(out),
        )?;
    }
    if let Some(path) = &a.json {
        write_json_file(&comparison.document(), path).map_err(Exit::bad_input)?;
    }
    Ok(if comparison.passed() {
        exit::OK
    } else {
        exit::THRESHOLDS_FAILED
    })
}

/// The base from the store: the pinned run, or the last N matching runs merged exactly.
fn baseline(
    a: &CompareArgs,
    selector: &str,
    like: &RunResult,
) -> Result<(String, RunResult), Exit> {
    let (mut store, _) = crate::store_cmd::open(a.store.as_deref())?;
    let (base, ids) = store
        .baseline_run(selector, a.last, like)
        .map_err(|e| Exit::bad_input(e.to_string()))?;
    let label = baseline_label(selector, &ids);
    Ok((label, base))
}
