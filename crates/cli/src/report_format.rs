//! Where a rendered report goes (`herd report`, `herd compare`): standard output, a file or a
//! PDF, in the format asked or the one the file's extension names.

use crate::exit::Exit;
use clap::ValueEnum;
use std::path::Path;

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

/// Writes a rendered report where it was asked to go: standard output, a file, or a PDF.
pub fn emit(content: &str, format: Format, output: Option<&Path>) -> Result<(), Exit> {
    match (format, output) {
        (Format::Pdf, Some(path)) => {
            herd_report::pdf::print(content, path).map_err(|e| Exit::bad_input(e.to_string()))?;
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
