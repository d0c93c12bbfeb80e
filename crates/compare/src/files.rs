//! The runs `herd compare` is given: read with the reader every command uses (so a file gets
//! the same message here as from `herd report`), each named by its file name, or its path when
//! two share a name.

use herd_result::{read_document, Document, ReportError, RunResult};
use std::path::{Path, PathBuf};

/// Every file as a named run; every file that is not one said at once.
pub fn read_runs(files: &[PathBuf]) -> Result<Vec<(String, RunResult)>, String> {
    let mut problems = Vec::new();
    let mut runs: Vec<(String, RunResult)> = Vec::new();
    for path in files {
        match read_document(path) {
            Ok(Document::Run(r)) => runs.push((label(path, &runs), *r)),
            Ok(doc) => problems.push(runs_only(path, doc.kind().to_owned())),
            // A kind herd knows but cannot show (a comparison): compare still wants a run.
            Err(ReportError::WrongKind { kind, .. }) => problems.push(runs_only(path, kind)),
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    Ok(runs)
}

/// What compare says of a herd file that is not a run.
fn runs_only(path: &Path, kind: String) -> String {
    ReportError::WrongKind {
        origin: path.display().to_string(),
        kind,
        expected: "a `run` result: compare compares runs (`herd run --json`)".to_owned(),
    }
    .to_string()
}

/// The file name, or the path as given when two runs share a name.
fn label(path: &Path, earlier: &[(String, RunResult)]) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let taken = |l: &str| earlier.iter().any(|(e, _)| e == l);
    if !taken(&name) {
        return name;
    }
    let full = path.display().to_string();
    if !taken(&full) {
        return full;
    }
    format!("{full} (#{})", earlier.len() + 1)
}

/// The name of a base taken from a store: the pinned run, or the last N runs merged.
pub fn baseline_label(selector: &str, ids: &[i64]) -> String {
    match ids {
        [id] => format!("baseline #{id}"),
        _ => format!(
            "baseline {selector} (last {}: #{}..#{})",
            ids.len(),
            ids.first().copied().unwrap_or_default(),
            ids.last().copied().unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_of_one_name_are_told_apart_by_their_paths() {
        let dir = std::env::temp_dir().join(format!("herd-compare-files-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../result/tests/fixtures");
        for d in [&a, &b] {
            std::fs::copy(fixtures.join("run-open.json"), d.join("run.json")).unwrap();
        }
        let runs = read_runs(&[a.join("run.json"), b.join("run.json")]).unwrap();
        assert_eq!(runs[0].0, "run.json");
        assert_eq!(runs[1].0, b.join("run.json").display().to_string());
        let e = read_runs(&[fixtures.join("sweep-open.json")]).unwrap_err();
        assert!(e.contains("compare compares runs"), "{e}");
        assert_eq!(baseline_label("branch=main", &[7]), "baseline #7");
        assert_eq!(
            baseline_label("branch=main", &[3, 4, 5]),
            "baseline branch=main (last 3: #3..#5)"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
