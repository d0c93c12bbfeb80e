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

    #[error("{origin} is not JSON: {source}")]
    NotJson {
        origin: String,
        source: serde_json::Error,
    },

    #[error("{origin} is not a herd result: {reason}")]
    NotHerd { origin: String, reason: String },

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

    #[error("histogram is not valid base64: {0}")]
    HistogramBase64(#[from] base64::DecodeError),

    #[error("histogram is not a valid HdrHistogram V2 encoding: {0}")]
    HistogramEncoding(#[from] hdrhistogram::serialization::DeserializeError),
}
