use std::path::PathBuf;

/// Why a result could not be read back.
///
/// `origin` names where the text came from: a file path, or whatever the caller passed to
/// [`crate::parse_json`] (e.g. `"stdin"`).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{origin} is empty: expected a herd result (JSON)")]
    Empty { origin: String },

    #[error(
        "{origin} is cut short: its JSON ends at line {line} before it is complete \
         (was it still being written, or copied in part?)"
    )]
    Truncated { origin: String, line: usize },

    #[error("{origin} is not JSON: {source}")]
    NotJson {
        origin: String,
        source: serde_json::Error,
    },

    #[error("{origin} is not a herd result: {reason}")]
    NotHerd { origin: String, reason: String },

    #[error(
        "{origin} is a herd `{kind}` result, a kind this herd ({ours}) does not know: \
         it reads `run`, `sweep` and `capacity` results (a newer herd may read it)"
    )]
    UnknownKind {
        origin: String,
        kind: String,
        ours: &'static str,
    },

    #[error("{origin} is a herd `{kind}` result; expected {expected}")]
    WrongKind {
        origin: String,
        kind: String,
        expected: String,
    },

    #[error(
        "{origin} was written by herd {found}, which this herd ({ours}) cannot read: \
         results from herd {supported} are supported"
    )]
    UnknownVersion {
        origin: String,
        found: String,
        ours: &'static str,
        supported: String,
    },

    #[error("{origin} looks like a herd {version} result but does not match its format: {source}")]
    Malformed {
        origin: String,
        version: String,
        source: serde_json::Error,
    },

    #[error("{origin}: `{path}` is not a valid histogram ({reason}): the file is damaged")]
    Histogram {
        origin: String,
        /// Where in the document, e.g. `steps[2].runs[0].histograms.latency`.
        path: String,
        reason: String,
    },

    #[error("histogram is not valid base64: {0}")]
    HistogramBase64(#[from] base64::DecodeError),

    #[error("histogram is not a valid HdrHistogram V2 encoding: {0}")]
    HistogramEncoding(#[from] hdrhistogram::serialization::DeserializeError),
}
