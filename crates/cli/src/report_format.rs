//! Where a rendered report goes (`herd report`, `herd compare`, `herd history show`):
//! standard output, or herd-report's `write_report` into a file or a PDF.

use crate::exit::Exit;
pub use herd_report::output::Format;
use std::path::Path;

/// The format asked for, or the one the output file's extension names.
pub fn format_for(format: Option<Format>, output: Option<&Path>) -> Format {
    Format::for_output(format, output)
}

/// Writes a rendered report where it was asked to go: standard output, a file, or a PDF.
pub fn emit(content: &str, format: Format, output: Option<&Path>) -> Result<(), Exit> {
    let Some(path) = output else {
        print!("{content}");
        return Ok(());
    };
    herd_report::output::write_report(content, format, path).map_err(Exit::bad_input)?;
    eprintln!("herd: wrote {}", path.display());
    Ok(())
}
