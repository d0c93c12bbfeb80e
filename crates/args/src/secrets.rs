//! The flags that say which request headers are credentials: they are masked in every output
//! (the summary, the JSON, the HTML report, pods' logs) unless the user asks to see them.

use clap::Args;
use herd_result::redact::Redaction;

#[derive(Args, Debug, Clone, Default)]
pub struct SecretArgs {
    /// Also mask this header in every output, as Authorization, Proxy-Authorization, Cookie,
    /// Set-Cookie and headers named like a token, key or secret always are (repeatable), e.g.
    /// --redact X-Customer-Id
    #[arg(long = "redact", value_name = "HEADER")]
    pub redact: Vec<String>,

    /// Write credentials (secret headers, URL passwords) into outputs as given, unmasked
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,
}

impl SecretArgs {
    pub fn redaction(&self) -> Redaction {
        Redaction::new(&self.redact, self.show_secrets)
    }
}
