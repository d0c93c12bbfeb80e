//! `herd report FILE`'s flags: a stored result as text, a self-contained HTML page, or a PDF.

use clap::Args;
pub use herd_report::output::Format;
use std::path::PathBuf;

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
    #[arg(long, value_name = "FORMAT", value_parser = format_flag())]
    pub format: Option<Format>,
}

/// `--format`'s values, checked by clap against herd-report's names.
pub fn format_flag() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Format::NAMES)
        .map(|s| Format::named(&s).expect("one of the possible values"))
}
