//! `herd compare BASE NEW...`: runs side by side; exit 3 when a key metric regressed beyond the
//! threshold and beyond noise, so a CI job can stop a release that got slower.

use crate::exit::{self, Exit};
use crate::report_format::{emit, format_for, Format};
use herd_args::compare::CompareArgs;
use herd_compare::{baseline_label, compare, read_runs};
use herd_report::{html, render_compare_text};
use herd_result::{write_json_file, RunResult};

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
