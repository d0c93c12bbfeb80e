//! What reading logs found besides their records: files, lines, and the lines it could not read.

use std::path::Path;

/// A line that could not be read, kept to show the user.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BadLine {
    pub file: String,
    pub line: u64,
    pub reason: String,
    pub text: String,
}

/// What reading found besides the records.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReadStats {
    pub files: Vec<String>,
    /// Bytes of the files as stored (compressed for .gz).
    pub bytes: u64,
    pub lines: u64,
    pub records: u64,
    pub bad: u64,
    /// The first few bad lines.
    pub bad_samples: Vec<BadLine>,
    /// The format used for each file.
    pub formats: Vec<String>,
}

const SAMPLES: usize = 5;

impl ReadStats {
    pub(crate) fn note_bad(&mut self, file: &Path, line: u64, reason: &str, text: &[u8]) {
        self.bad += 1;
        if self.bad_samples.len() < SAMPLES {
            let mut t = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
            if text.len() > 200 {
                t.push_str("...");
            }
            self.bad_samples.push(BadLine {
                file: file.display().to_string(),
                line,
                reason: reason.to_owned(),
                text: t,
            });
        }
    }
}
