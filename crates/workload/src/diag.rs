//! Diagnostics: every problem in a workload file at once, each with its place and, where one
//! can be guessed, a hint (`file:line:col: message (hint)`), as compilers report.

use std::fmt;
use std::path::{Path, PathBuf};

/// A place in the file; lines and columns count from 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// One problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    pub at: Pos,
    pub message: String,
    pub hint: Option<String>,
}

impl Diag {
    pub fn new(at: Pos, message: impl Into<String>) -> Self {
        Diag {
            at,
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn hint_opt(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }
}

/// All problems found in one file, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    pub file: PathBuf,
    pub problems: Vec<Diag>,
}

impl Diagnostics {
    pub fn new(file: &Path, mut problems: Vec<Diag>) -> Self {
        problems.sort_by_key(|d| d.at);
        problems.dedup();
        Diagnostics {
            file: file.to_owned(),
            problems,
        }
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                d.at.line,
                d.at.col,
                d.message
            )?;
            if let Some(h) = &d.hint {
                write!(f, " ({h})")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// "did you mean `steps`?" when `got` is a small edit away from one of `known`.
pub fn did_you_mean<'a>(got: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    // Up to a third of the longer word may differ (at least one edit, at most three).
    let limit = |k: &str| ((got.chars().count().max(k.chars().count()) + 1) / 3).clamp(1, 3);
    known
        .into_iter()
        .map(|k| (edit_distance(&got.to_lowercase(), &k.to_lowercase()), k))
        .filter(|(d, k)| *d <= limit(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| format!("did you mean `{k}`?"))
}

/// Levenshtein distance with adjacent transpositions counted as one edit (`stpes` -> `steps`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_for_near_misses_only() {
        let keys = ["steps", "name", "weight"];
        assert_eq!(
            did_you_mean("stpes", keys).as_deref(),
            Some("did you mean `steps`?")
        );
        assert_eq!(
            did_you_mean("wieght", keys).as_deref(),
            Some("did you mean `weight`?")
        );
        assert_eq!(did_you_mean("colour", keys), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn rendered_as_file_line_col_message_hint() {
        let d = Diagnostics::new(
            Path::new("shop.yaml"),
            vec![
                Diag::new(Pos { line: 9, col: 3 }, "b"),
                Diag::new(Pos { line: 2, col: 5 }, "a").hint("h"),
            ],
        );
        assert_eq!(d.to_string(), "shop.yaml:2:5: a (h)\nshop.yaml:9:3: b");
    }
}
