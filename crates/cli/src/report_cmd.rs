//! `herd report FILE`: a stored result as text, a self-contained HTML page, or a PDF.

use crate::exit::{self, Exit};
use crate::pdf;
use clap::{Args, ValueEnum};
use herd_report::{html, render_text};
use herd_result::{read_document, Document};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A result written by `herd run --json` (or a sweep or capacity result, or `herd logs --json`)
    pub file: PathBuf,

    /// Write the report to this file instead of standard output; its extension (.html, .pdf,
    /// .txt) picks the format unless --format says
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// text, html or pdf (pdf prints the HTML with a headless Chromium and needs -o)
    /// [default: from -o's extension, else text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Html,
    Pdf,
}

/// The format asked for, or the one the output file's extension names.
pub fn format_for(format: Option<Format>, output: Option<&Path>) -> Format {
    if let Some(f) = format {
        return f;
    }
    let ext = output
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("pdf") => Format::Pdf,
        Some("txt" | "text") => Format::Text,
        Some(_) => Format::Html,
        None if output.is_some() => Format::Html,
        None => Format::Text,
    }
}

pub fn cmd(a: &ReportArgs) -> Result<i32, Exit> {
    let format = format_for(a.format, a.output.as_deref());
    if format == Format::Pdf && a.output.is_none() {
        return Err(Exit::bad_input(
            "--format pdf needs a file to write: add -o report.pdf",
        ));
    }
    if let Some(logs) = crate::logs_cmd::read_logs_json(&a.file) {
        let out = match format {
            Format::Text => herd_logs::text::render(&logs?, 15),
            Format::Html | Format::Pdf => herd_logs::html::render(&logs?),
        };
        emit(&out, format, a.output.as_deref())?;
        return Ok(exit::OK);
    }
    let doc = read_document(&a.file).map_err(|e| Exit::bad_input(e.to_string()))?;
    let out = match (format, &doc) {
        (Format::Text, Document::Run(r)) => {
            let mut text = String::new();
            let _ = render_text(r, &mut text);
            text
        }
        (Format::Text, doc) => {
            let kind = doc.kind();
            return Err(Exit::bad_input(format!(
                "{} is a `{kind}` result: its report is a page of curves, write it with -o {kind}.html",
                a.file.display()
            )));
        }
        (Format::Html | Format::Pdf, doc) => html::render_document(doc),
    };
    emit(&out, format, a.output.as_deref())?;
    Ok(exit::OK)
}

/// Writes a rendered report where it was asked to go: standard output, a file, or a PDF.
pub fn emit(content: &str, format: Format, output: Option<&Path>) -> Result<(), Exit> {
    match (format, output) {
        (Format::Pdf, Some(path)) => {
            pdf::print(content, path)?;
        }
        (_, Some(path)) => std::fs::write(path, content).map_err(|e| {
            Exit::bad_input(format!(
                "cannot write the report to {}: {e}",
                path.display()
            ))
        })?,
        (_, None) => {
            print!("{content}");
            return Ok(());
        }
    }
    eprintln!(
        "herd: wrote {}",
        output.map_or(String::new(), |p| p.display().to_string())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_picks_the_format() {
        let table = [
            (None, None, Format::Text),
            (None, Some("r.html"), Format::Html),
            (None, Some("r.HTM"), Format::Html),
            (None, Some("r.pdf"), Format::Pdf),
            (None, Some("r.txt"), Format::Text),
            (None, Some("report"), Format::Html),
            (Some(Format::Text), Some("r.html"), Format::Text),
        ];
        for (flag, out, want) in table {
            assert_eq!(
                format_for(flag, out.map(Path::new)),
                want,
                "{flag:?} {out:?}"
            );
        }
    }
}
