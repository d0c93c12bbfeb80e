//! `herd plot FILE -o OUT`: a file read as herd's JSON (a run, a sweep, a capacity search) or
//! a sweep table (herd's or autobench's TSV/CSV), drawn into a PNG or SVG file.

use super::{render, sweep_figure, Figure, Format};
use crate::figure::{capacity_figure, run_figure, sweep_result_figure};
use herd_result::sweep::{read_table, Table};
use herd_result::{parse_document, Document};
use std::path::Path;

/// Draws `input` into `output`, its format from its extension; messages name the file.
pub fn plot_file(input: &Path, output: &Path) -> Result<(), String> {
    let format = Format::from_path(output).ok_or_else(|| {
        format!(
            "{}: write .png or .svg (the format follows the extension)",
            output.display()
        )
    })?;
    let text = std::fs::read_to_string(input)
        .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let figure = figure(&text, input)?;
    let bytes = render(&figure, format).map_err(|e| e.to_string())?;
    std::fs::write(output, &bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))
}

/// The figure of a file's text: JSON through the reader `report` and `compare` use (the same
/// message for the same file), anything else as a table.
pub fn figure(text: &str, path: &Path) -> Result<Figure, String> {
    let origin = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| "sweep".to_owned(), |s| s.to_string_lossy().into_owned());
    if looks_like_json(text, path) {
        let checked = |t: Table| t.check().map_err(|e| format!("{origin}: {e}"));
        return Ok(
            match parse_document(text, &origin).map_err(|e| e.to_string())? {
                Document::Run(r) => run_figure(&r),
                Document::Sweep(r) => {
                    checked(r.table())?;
                    sweep_result_figure(&r, &stem)
                }
                Document::Capacity(r) => {
                    checked(r.table())?;
                    capacity_figure(&r)
                }
            },
        );
    }
    let table = read_table(text, &origin, &stem).map_err(|e| e.to_string())?;
    Ok(sweep_figure(&table, &stem))
}

/// JSON by its name or its first character; anything else is read as a table.
fn looks_like_json(text: &str, path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    ext.as_deref() == Some("json") || text.trim_start().starts_with(['{', '['])
}
