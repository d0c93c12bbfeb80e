//! What can go wrong with a store, and how a store is named in messages.

/// What went wrong with a store, said so a user can act on it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Open(String),
    #[error("the store failed: {0}")]
    Db(String),
    #[error("{0}")]
    Bad(String),
    #[error("{0}")]
    NotFound(String),
}

/// A PostgreSQL URL with its password masked, for messages.
pub fn redact_url(location: &str) -> String {
    match (location.find("://"), location.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &location[s + 3..at];
            match creds.find(':') {
                Some(c) => format!(
                    "{}{}:***{}",
                    &location[..s + 3],
                    &creds[..c],
                    &location[at..]
                ),
                None => location.to_owned(),
            }
        }
        _ => location.to_owned(),
    }
}
