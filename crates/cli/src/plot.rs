//! `herd plot FILE -o OUT.png|svg`: bench2graph's successor. Reads herd's TSV/CSV/JSON or the
//! TSV autobench writes; draws with the report crate's plots.

use crate::exit::{self, Exit};
use crate::sweep::write_file;
use clap::Args;
use herd_report::figure::{capacity_figure, sweep_result_figure};
use herd_report::plot::{render, run_figure, sweep_figure, Figure, Format};
use herd_result::sweep::{read_table, Table};
use herd_result::{parse_document, Document};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A sweep table (herd's or autobench's TSV/CSV), or a herd JSON result (sweep, capacity, run)
    pub input: PathBuf,

    /// The picture to write: .png or .svg
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

pub fn cmd(a: &PlotArgs) -> Result<i32, Exit> {
    let format = Format::from_path(&a.output).ok_or_else(|| {
        Exit::bad_input(format!(
            "{}: write .png or .svg (the format follows the extension)",
            a.output.display()
        ))
    })?;
    let text = std::fs::read_to_string(&a.input)
        .map_err(|e| Exit::bad_input(format!("cannot read {}: {e}", a.input.display())))?;
    let figure = figure(&text, &a.input)?;
    let bytes = render(&figure, format).map_err(|e| Exit::bad_input(e.to_string()))?;
    write_file(&a.output, &bytes)?;
    eprintln!("herd plot: wrote {}", a.output.display());
    Ok(exit::OK)
}

fn figure(text: &str, path: &Path) -> Result<Figure, Exit> {
    let origin = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| "sweep".to_owned(), |s| s.to_string_lossy().into_owned());
    let bad = |e: &dyn std::fmt::Display| Exit::bad_input(e.to_string());
    if looks_like_json(text, path) {
        // The reader `report` and `compare` use: the same message for the same file.
        let checked = |t: Table| {
            t.check()
                .map(|()| t)
                .map_err(|e| Exit::bad_input(format!("{origin}: {e}")))
        };
        return Ok(match parse_document(text, &origin).map_err(|e| bad(&e))? {
            Document::Run(r) => run_figure(&r),
            Document::Sweep(r) => {
                checked(r.table())?;
                sweep_result_figure(&r, &stem)
            }
            Document::Capacity(r) => {
                checked(r.table())?;
                capacity_figure(&r)
            }
        });
    }
    let table = read_table(text, &origin, &stem).map_err(|e| bad(&e))?;
    Ok(sweep_figure(&table, &stem))
}

/// JSON by its name or its first character; anything else is read as a table.
fn looks_like_json(text: &str, path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    ext.as_deref() == Some("json") || text.trim_start().starts_with(['{', '['])
}
