//! Output paths, checked before the first request: an hour-long soak must not end with "cannot
//! write" and nothing saved. A file that exists is opened for appending (never truncated: a run
//! that fails before its end leaves the user's old result as it was); one that does not exist is
//! created and removed again, which proves the directory exists and takes new files. One check,
//! one wording, for every command that writes.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

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

/// Run `n`'s file (from 1) of a series, where a file is per run: `-n` before the `.csv` (or
/// the last extension): `r.csv.gz` -> `r-2.csv.gz`, `x.hlog` -> `x-2.hlog`.
pub fn numbered(base: &Path, n: usize) -> PathBuf {
    let name = base
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = name
        .find(".csv")
        .or_else(|| name.rfind('.'))
        .unwrap_or(name.len());
    base.with_file_name(format!("{}-{n}{}", &name[..at], &name[at..]))
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
    fn a_runs_file_is_numbered_before_its_extensions() {
        let p = |s: &str| numbered(Path::new(s), 2).display().to_string();
        assert_eq!(p("out/r.csv.gz"), "out/r-2.csv.gz");
        assert_eq!(p("r.csv"), "r-2.csv");
        assert_eq!(p("x.hlog"), "x-2.hlog");
        assert_eq!(p("r.log.gz"), "r.log-2.gz");
        assert_eq!(p("r"), "r-2");
    }
}
