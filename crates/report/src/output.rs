//! Where a rendered report goes (`herd report`, `herd compare`, `herd history show`): a file,
//! or a PDF printed from the page, in the format asked or the one the file's extension names.

use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Html,
    Pdf,
}

impl Format {
    /// The names a user gives (`--format`).
    pub const NAMES: [&'static str; 3] = ["text", "html", "pdf"];

    pub fn named(name: &str) -> Option<Format> {
        match name {
            "text" => Some(Format::Text),
            "html" => Some(Format::Html),
            "pdf" => Some(Format::Pdf),
            _ => None,
        }
    }

    /// The format asked for, or the one the output file's extension names.
    pub fn for_output(asked: Option<Format>, output: Option<&Path>) -> Format {
        if let Some(f) = asked {
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
}

/// A run's report in `format`: the text summary, or its HTML page (a PDF is printed from the
/// page by [`write_report`]).
pub fn run_report(r: &herd_result::RunResult, format: Format) -> String {
    match format {
        Format::Text => {
            let mut text = String::new();
            let _ = crate::render_text(r, &mut text);
            text
        }
        Format::Html | Format::Pdf => crate::html::render_run(r),
    }
}

/// The text a run ends with on standard output: its summary, then what a wrk script printed
/// (init's lines, done's report), as wrk prints them after its own.
pub fn run_summary(r: &herd_result::RunResult) -> String {
    let mut text = run_report(r, Format::Text);
    if let Some(out) = r.extra.get("script").and_then(|s| s["output"].as_str()) {
        text.push_str(out);
    }
    text
}

/// Writes a rendered report to `path`: a PDF printed by a headless Chromium (the `pdf`
/// feature), anything else as it is.
pub fn write_report(content: &str, format: Format, path: &Path) -> Result<(), String> {
    if format == Format::Pdf {
        #[cfg(feature = "pdf")]
        return crate::pdf::print(content, path).map_err(|e| e.to_string());
        #[cfg(not(feature = "pdf"))]
        return Err("this herd was built without PDF output (herd-report's `pdf` feature)".into());
    }
    std::fs::write(path, content)
        .map_err(|e| format!("cannot write the report to {}: {e}", path.display()))
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
                Format::for_output(flag, out.map(Path::new)),
                want,
                "{flag:?} {out:?}"
            );
        }
        let named: Vec<Option<Format>> = Format::NAMES.iter().map(|n| Format::named(n)).collect();
        assert_eq!(
            named,
            [Some(Format::Text), Some(Format::Html), Some(Format::Pdf)]
        );
    }
}
