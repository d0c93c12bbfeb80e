//! Credentials stay out of the workload file: an `Authorization` or `Proxy-Authorization`
//! header, a header named like a key or token, a form or JSON field named like a password, and
//! the cookies the site did not set during the recording (a session from before it) become
//! `{{env.HAR_...}}`, which `herd run -e HAR_...=VALUE` fills. Cookies the site set are left to
//! each virtual user's cookie jar, as a browser would.

use crate::har::Entry;
use crate::step::{Body, Piece, Step, Text};
use std::collections::{BTreeMap, HashSet};

pub(crate) fn secret_header(name: &str) -> bool {
    if anti_forgery(name) {
        return false;
    }
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "proxy-authorization"
        || ["token", "api-key", "apikey", "secret", "x-auth", "session"]
            .iter()
            .any(|w| n.contains(w))
}

/// Anti-forgery tokens are the site's, per session, not the person's: taken from a response
/// or flagged where they are sent, never asked for.
fn anti_forgery(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("csrf") || n.contains("xsrf")
}

pub fn secret_field(name: &str) -> bool {
    if anti_forgery(name) {
        return false;
    }
    let n = name.to_ascii_lowercase().replace('-', "_");
    let words = ["pass", "pin", "otp", "pw"];
    [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "credential",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| words.contains(&w))
}

/// The environment values a workload needs, by name, in the order first met.
#[derive(Debug, Default)]
pub struct Secrets {
    /// (name, what it stood for: `header Authorization`, `form field password`).
    pub names: Vec<(String, String)>,
    by_value: BTreeMap<(String, String), String>,
}

impl Secrets {
    fn name_for(&mut self, base: &str, value: &str, what: String) -> String {
        let key = (base.to_owned(), value.to_owned());
        if let Some(n) = self.by_value.get(&key) {
            return n.clone();
        }
        let stem: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("HAR_{}", stem.trim_matches('_'));
        let mut name = stem.clone();
        let mut k = 2;
        while self.names.iter().any(|(n, _)| *n == name) {
            name = format!("{stem}_{k}");
            k += 1;
        }
        self.names.push((name.clone(), what));
        self.by_value.insert(key, name.clone());
        name
    }

    /// Replaces a literal secret text with its environment value.
    fn hide(&mut self, base: &str, text: &mut Text, what: impl FnOnce() -> String) {
        if let Some(v) = text.literal().filter(|v| !v.is_empty()) {
            let name = self.name_for(base, v, what());
            *text = Text(vec![Piece::Env(name)]);
        }
    }
}

/// The cookies of a `Cookie` header that no earlier response set.
fn foreign_cookies(header: &str, set: &HashSet<String>) -> String {
    header
        .split(';')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .filter(|c| !set.contains(c.split('=').next().unwrap_or("").trim()))
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn hide(steps: &mut [Step], entries: &[Entry]) -> Secrets {
    let mut s = Secrets::default();
    // Cookies set by any response (assets and other hosts too) before each step's request.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        let t = |i: usize| entries[i].start_ms(i).unwrap_or(0.0);
        t(a).total_cmp(&t(b))
    });
    for step in steps.iter_mut() {
        let before = order.iter().take_while(|&&i| i != step.entry);
        let set: HashSet<String> = before
            .flat_map(|&i| entries[i].response.headers.iter())
            .filter(|h| h.is("set-cookie"))
            .filter_map(|h| h.value.split('=').next().map(|n| n.trim().to_owned()))
            .collect();
        let cookie = entries[step.entry]
            .request
            .headers
            .iter()
            .filter(|h| h.is("cookie"))
            .map(|h| h.value.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let foreign = foreign_cookies(&cookie, &set);
        if !foreign.is_empty() {
            let name = s.name_for(
                "cookie",
                &foreign,
                "the Cookie header's cookies the site did not set while recording".into(),
            );
            step.headers
                .push(("Cookie".into(), Text(vec![Piece::Env(name)])));
        }
        for (n, t) in step.headers.iter_mut() {
            if secret_header(n) {
                let base = n.clone();
                s.hide(&base, t, || format!("header {base}"));
            }
        }
        match &mut step.body {
            Body::Form(fields) => {
                for (n, t) in fields.iter_mut().filter(|(n, _)| secret_field(n)) {
                    let base = n.clone();
                    s.hide(&base, t, || format!("form field {base}"));
                }
            }
            Body::Json(j) => {
                let mut strings = Vec::new();
                j.strings_mut(None, &mut strings);
                for (key, t) in strings {
                    if let Some(k) = key.filter(|k| secret_field(k)) {
                        let base = k.to_owned();
                        s.hide(&base, t, || format!("JSON field {base}"));
                    }
                }
            }
            Body::Raw(_) | Body::None => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cookies_the_site_did_not_set_are_secrets() {
        let set: HashSet<String> = ["sid".to_owned()].into();
        assert_eq!(
            foreign_cookies("sid=1; pre=abc;  x=y", &set),
            "pre=abc; x=y"
        );
        assert_eq!(foreign_cookies("sid=1", &set), "");
    }

    #[test]
    fn one_name_per_secret() {
        let mut s = Secrets::default();
        let a = s.name_for("password", "p1", "a".into());
        assert_eq!(a, "HAR_PASSWORD");
        assert_eq!(s.name_for("password", "p1", "a".into()), a);
        assert_eq!(s.name_for("password", "p2", "b".into()), "HAR_PASSWORD_2");
        assert_eq!(s.name_for("X-Api-Key", "k", "c".into()), "HAR_X_API_KEY");
        assert!(secret_field("user_password") && secret_field("api_token"));
        assert!(!secret_field("csrfmiddlewaretoken") && !secret_header("X-XSRF-Token"));
        assert!(secret_field("newPassword") && secret_field("pin"));
        assert!(!secret_field("user") && !secret_field("shipping") && !secret_header("Accept"));
    }
}
