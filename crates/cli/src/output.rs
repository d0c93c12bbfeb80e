//! Output files are checked before the first request: an hour-long soak must not end with "cannot
//! write" and nothing saved. A file that exists is opened for appending (never truncated: a run
//! that fails before its end leaves the user's old result as it was); one that does not exist is
//! created and removed again, which proves the directory exists and takes new files. A report
//! goes where it was asked, in the format asked or the one the file's extension names.

use crate::exit::Exit;
use clap::ValueEnum;
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::Path;

/// Checks that `path`, given to `flag`, can be written at the end of the run. The message names
/// the flag, the path and the fix.
pub fn check_writable(flag: &str, path: &Path) -> Result<(), String> {
    let shown = path.display();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.as_os_str().is_empty() || path.file_name().is_none() {
        return Err(format!(
            "{flag} `{shown}` names no file: give a file name, e.g. {flag} result.json"
        ));
    }
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(format!(
                "{flag} {shown}: {} is not a directory; fix the path",
                dir.display()
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "{flag} {shown}: the directory {} does not exist; create it (mkdir -p {}) or fix the path",
                dir.display(),
                dir.display()
            ))
        }
        Err(e) => return Err(format!("{flag} {shown}: cannot read {}: {e}", dir.display())),
    }
    if path.is_dir() {
        return Err(format!(
            "{flag} {shown} is a directory: give a file name inside it, e.g. {}",
            path.join("result.json").display()
        ));
    }
    let probe = if path.exists() {
        OpenOptions::new().append(true).open(path).map(|_| ())
    } else {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|_| std::fs::remove_file(path))
    };
    probe.map_err(|e| {
        let fix = if e.kind() == ErrorKind::PermissionDenied {
            format!(
                "write somewhere you may write, or change the permissions of {}",
                dir.display()
            )
        } else {
            "fix the path".to_owned()
        };
        format!("{flag} {shown}: cannot write there: {e}; {fix}")
    })
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

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("herd-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_missing_directory_is_named_with_its_fix() {
        let e = check_writable("--json", Path::new("/nonexistent-herd/r.json")).unwrap_err();
        assert!(e.contains("/nonexistent-herd does not exist"), "{e}");
        assert!(e.contains("mkdir -p /nonexistent-herd"), "{e}");
    }

    #[test]
    fn a_new_file_is_probed_and_left_absent_and_an_old_one_kept() {
        let d = scratch("probe");
        let new = d.join("new.json");
        check_writable("--json", &new).unwrap();
        assert!(!new.exists(), "the probe is removed");
        let old = d.join("old.json");
        std::fs::write(&old, "keep me").unwrap();
        check_writable("--json", &old).unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "keep me");
        let e = check_writable("--json", &d).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        let e = check_writable("--json", &old.join("x.json")).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

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
