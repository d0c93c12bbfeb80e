//! Credentials kept out of what people share. A result holds the request headers and the URL as
//! given, and results travel: JSON files mailed around, HTML pages on wikis, pods' logs. So a
//! secret header's value, or a URL's password, is replaced where it enters a result by a short
//! hash: two different tokens still read as different, and neither can be read back.
//!
//! ```
//! use herd_result::redact::Redaction;
//! let r = Redaction::default();
//! let shown = r.header("Authorization: Bearer abc");
//! assert!(shown.starts_with("Authorization: <redacted sha256:"));
//! assert_eq!(r.header("Accept: text/html"), "Accept: text/html");
//! ```

use sha2::{Digest, Sha256};

/// The headers that carry credentials in every request or response.
pub const SECRET_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Which headers are secret (the standard four plus those named with `--redact`), and whether
/// the user asked to see them anyway (`--show-secrets`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redaction {
    extra: Vec<String>,
    show: bool,
}

impl Redaction {
    pub fn new(extra: &[String], show: bool) -> Redaction {
        Redaction {
            extra: extra
                .iter()
                .map(|n| n.trim().to_ascii_lowercase())
                .collect(),
            show,
        }
    }

    /// Whether credentials are shown as given (`--show-secrets`).
    pub fn shows(&self) -> bool {
        self.show
    }

    pub fn is_secret(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        SECRET_HEADERS.contains(&name.as_str())
            || named_like_a_secret(&name)
            || self.extra.contains(&name)
    }

    /// A `Name: value` header as it may be shown.
    pub fn header(&self, line: &str) -> String {
        match line.split_once(':') {
            Some((name, value)) if !self.show && self.is_secret(name) => {
                format!("{name}: {}", mask(value.trim()))
            }
            _ => line.to_owned(),
        }
    }

    pub fn headers(&self, lines: &[String]) -> Vec<String> {
        lines.iter().map(|h| self.header(h)).collect()
    }

    /// A URL as it may be shown: the password of `user:password@host` masked.
    pub fn url(&self, url: &str) -> String {
        if self.show {
            return url.to_owned();
        }
        let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
            return url.to_owned();
        };
        let rest = &url[scheme_end..];
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let Some(at) = rest[..authority_end].rfind('@') else {
            return url.to_owned();
        };
        let Some((user, password)) = rest[..at].split_once(':') else {
            return url.to_owned();
        };
        if is_masked(password) {
            return url.to_owned();
        }
        format!(
            "{}{user}:{}{}",
            &url[..scheme_end],
            mask(password),
            &rest[at..]
        )
    }
}

/// A header named like a token, a key or a secret (`X-Api-Key`, `X-Auth-Token`,
/// `X-Session`), as `herd model --har` treats them (herd-har's `secret_header`): credentials
/// by default, without `--redact`. Anti-forgery tokens (`X-CSRF-Token`) are the site's, not
/// the person's.
fn named_like_a_secret(lower: &str) -> bool {
    if lower.contains("csrf") || lower.contains("xsrf") {
        return false;
    }
    [
        "token", "api-key", "apikey", "api_key", "secret", "x-auth", "session", "password",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// What replaces a secret: enough of its SHA-256 to tell two apart, not to guess one. Masking
/// twice changes nothing, so reading an old result and writing it again is safe.
pub fn mask(secret: &str) -> String {
    if is_masked(secret) {
        return secret.to_owned();
    }
    let digest = Sha256::digest(secret.as_bytes());
    let short: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("<redacted sha256:{short}>")
}

fn is_masked(s: &str) -> bool {
    s.starts_with("<redacted sha256:") && s.ends_with('>')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_masked_and_told_apart() {
        let r = Redaction::new(&["X-Api-Key".to_owned()], false);
        let a = r.header("Authorization: Bearer aaa");
        let b = r.header("authorization: Bearer bbb");
        assert!(!a.contains("aaa") && !b.contains("bbb"), "{a} {b}");
        assert_ne!(a[15..], b[15..]);
        assert!(!r.header("Cookie: sid=42").contains("42"));
        assert!(!r.header("x-api-key: k1").contains("k1"));
        assert_eq!(r.header("Accept: */*"), "Accept: */*");
        assert_eq!(r.header(&a), a, "masking twice changes nothing");
    }

    /// `X-Api-Key` and `X-Auth-Token` were written in clear unless named with `--redact`.
    #[test]
    fn headers_named_like_a_credential_are_masked_by_default() {
        let r = Redaction::default();
        for h in [
            "X-Api-Key: k1k1k1",
            "X-Auth-Token: k1k1k1",
            "Private-Token: k1k1k1",
            "X-Client-Secret: k1k1k1",
            "apikey: k1k1k1",
        ] {
            assert!(!r.header(h).contains("k1k1k1"), "{h}");
        }
        for h in ["X-CSRF-Token: abc", "Accept: text/html", "X-Request-Id: 7"] {
            assert_eq!(r.header(h), h);
        }
        assert_eq!(
            Redaction::new(&[], true).header("X-Api-Key: k1"),
            "X-Api-Key: k1"
        );
    }

    #[test]
    fn url_passwords_are_masked() {
        let r = Redaction::default();
        let u = r.url("http://bob:hunter2@127.0.0.1:8080/a?b=c");
        assert!(u.starts_with("http://bob:<redacted sha256:"), "{u}");
        assert!(
            u.ends_with("@127.0.0.1:8080/a?b=c") && !u.contains("hunter2"),
            "{u}"
        );
        assert_eq!(r.url("http://127.0.0.1/x@y"), "http://127.0.0.1/x@y");
        assert_eq!(r.url(&u), u);
    }

    #[test]
    fn show_secrets_keeps_them() {
        let r = Redaction::new(&[], true);
        assert_eq!(r.header("Cookie: sid=42"), "Cookie: sid=42");
        assert_eq!(r.url("http://a:b@h/"), "http://a:b@h/");
    }
}
