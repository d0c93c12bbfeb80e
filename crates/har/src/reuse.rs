//! Values a later request sends that an earlier response gave (a CSRF token in a hidden input,
//! an id in a JSON answer, a cookie a script copies into a header, a `Location`): each becomes
//! an `extract:` on the step whose response held it and a `{{var}}` where it is sent again, so
//! every virtual user sends its own token and ids instead of the recording's.
//!
//! A value counts when it looks generated (see [`generated`]) and no request sent it before the
//! response that gave it (so what the person typed, or what was in a URL already, is not taken
//! for something the site made). When several responses held it, the latest before the request
//! is its source. Every extraction is tried on the recorded response and kept only when it
//! gives the value back.

use crate::har::Entry;
use crate::step::{token_char, Extract, Extraction, Piece, Step};
use regex::Regex;
use std::collections::{HashMap, HashSet};

/// Ids and tokens: at least three characters with a digit, or ten or more without spaces.
/// Words (`true`, `admin`, `en-US`) stay literal.
pub fn generated(v: &str) -> bool {
    let n = v.chars().count();
    (3..=4096).contains(&n)
        && !v.chars().any(char::is_whitespace)
        && (v.chars().any(|c| c.is_ascii_digit()) || n >= 10)
}

/// Where a response holds a value: how to take it and a name for the variable.
#[derive(Clone, Debug)]
struct Source {
    step: usize,
    /// `None`: somewhere in the page's text; a regex is made from what precedes it when a
    /// request sends it again.
    how: Option<Extract>,
    name: String,
}

/// The values of one request worth looking up: whole texts (a header, a field) and the runs of
/// token characters in them (a path segment, a query value, the token after `Bearer `).
fn candidates(step: &mut Step) -> Vec<String> {
    let mut out = Vec::new();
    for (name, t) in step.texts_mut() {
        // The jar sends cookies; the browser writes these itself, from the page's address.
        const OWN: [&str; 6] = [
            "cookie",
            "referer",
            "origin",
            "user-agent",
            "accept",
            "accept-language",
        ];
        if name.is_some_and(|n| OWN.iter().any(|o| n.eq_ignore_ascii_case(o))) {
            continue;
        }
        for lit in t.literals() {
            out.push(lit.to_owned());
            out.extend(
                lit.split(|c| !token_char(c))
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    out.retain(|v| generated(v));
    let mut seen = HashSet::new();
    out.retain(|v| seen.insert(v.clone()));
    out
}

fn var_name(hint: &str) -> String {
    let mut s = herd_logs::model::word_of(hint).trim_matches('_').to_owned();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || s == "env" {
        s = format!("v_{s}");
    }
    s
}

/// The values a response holds, each with how to take it back out.
fn sources(step: usize, e: &Entry, out: &mut HashMap<String, Source>, skip: &HashSet<String>) {
    let mut add = |value: String, how: Option<Extract>, name: &str| {
        if generated(&value)
            && !skip.contains(&value)
            && out.get(&value).is_none_or(|s| s.step != step)
        {
            out.insert(
                value,
                Source {
                    step,
                    how,
                    name: var_name(name),
                },
            );
        }
    };
    for h in &e.response.headers {
        if h.is("set-cookie") {
            if let Some((n, v)) = h.value.split(';').next().and_then(|c| c.split_once('=')) {
                add(
                    v.trim().to_owned(),
                    Some(Extract::Cookie(n.trim().to_owned())),
                    n.trim(),
                );
            }
        } else if h.is("location") {
            add(
                h.value.clone(),
                Some(Extract::Header("Location".into())),
                "location",
            );
        }
    }
    let Some(body) = e.body() else { return };
    let mime = e.response.content.mime_type.to_ascii_lowercase();
    if mime.contains("json") || body.trim_start().starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&body) {
            let mut leaves = Vec::new();
            json_leaves(&v, "$".into(), None, &mut leaves);
            for (path, key, value) in leaves.into_iter().take(10_000) {
                add(value, Some(Extract::Json(path)), &key);
            }
            return;
        }
    }
    if mime.contains("html") {
        for (value, pattern, name) in html_fields(&body) {
            add(value, Some(Extract::Regex(pattern)), &name);
        }
    }
    if mime.starts_with("text/") || mime.contains("javascript") || mime.contains("xml") {
        for token in body.split(|c| !token_char(c)).filter(|t| t.len() >= 8) {
            add(token.to_owned(), None, "value");
        }
    }
}

/// A regex for `v` in a page's text (a token a script holds): the characters before its first
/// occurrence on their own, then the run of the kinds of characters `v` is made of; with the
/// last word before it as the variable's name. `None` when that finds something else first.
fn text_regex(body: &str, v: &str) -> Option<(String, String)> {
    let mut from = 0;
    let at = loop {
        let i = from + body[from..].find(v)?;
        let alone = body[..i].chars().next_back().is_none_or(|c| !token_char(c))
            && body[i + v.len()..]
                .chars()
                .next()
                .is_none_or(|c| !token_char(c));
        if alone {
            break i;
        }
        from = i + v.chars().next().map_or(1, char::len_utf8);
    };
    let line = body[..at].rfind('\n').map_or(0, |n| n + 1);
    let mut start = at.saturating_sub(24).max(line);
    while !body.is_char_boundary(start) {
        start += 1;
    }
    let prefix = body[start..at].trim_start();
    if prefix.trim().chars().count() < 3 {
        return None;
    }
    let mut class = String::from("A-Za-z0-9");
    for c in ['_', '-', '.', '~', '+', '%']
        .into_iter()
        .filter(|c| v.contains(*c))
    {
        class.push_str(&regex::escape(&c.to_string()));
    }
    let pattern = format!("{}([{class}]+)", regex::escape(prefix));
    let found = Regex::new(&pattern).ok()?.captures(body)?.get(1)?.as_str() == v;
    let name = prefix
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .rfind(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .unwrap_or("token");
    found.then(|| (pattern, name.to_owned()))
}

fn json_leaves(
    v: &serde_json::Value,
    path: String,
    key: Option<&str>,
    out: &mut Vec<(String, String, String)>,
) {
    use serde_json::Value as V;
    let key_name = key.unwrap_or("value").to_owned();
    match v {
        V::String(s) => out.push((path, key_name, s.clone())),
        V::Number(n) => out.push((path, key_name, n.to_string())),
        V::Array(a) => {
            // An id in a list is named after the list: `orders[0].id` -> `order_id`.
            for (i, x) in a.iter().enumerate() {
                json_leaves(x, format!("{path}[{i}]"), key, out);
            }
        }
        V::Object(o) => {
            for (k, x) in o {
                let p = if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty()
                {
                    format!("{path}.{k}")
                } else {
                    format!("{path}['{}']", k.replace('\\', "\\\\").replace('\'', "\\'"))
                };
                let name = match (key, k.as_str()) {
                    (Some(parent), "id") => format!("{}_id", parent.trim_end_matches('s')),
                    _ => k.clone(),
                };
                json_leaves(x, p, Some(&name), out);
            }
        }
        _ => {}
    }
}

/// `<input name=... value=...>` and `<meta name=... content=...>`: each value with a regex that
/// finds it by its name, checked to give the value back on this page.
fn html_fields(body: &str) -> Vec<(String, String, String)> {
    let tag = Regex::new(r"(?is)<(input|meta)\b[^>]*>").expect("valid");
    let attr = Regex::new(r#"(?s)([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)')"#)
        .expect("valid");
    let mut out = Vec::new();
    for m in tag.captures_iter(body) {
        let element = m[1].to_ascii_lowercase();
        let want = if element == "meta" {
            "content"
        } else {
            "value"
        };
        let mut name = None;
        let mut value = None;
        for a in attr.captures_iter(&m[0]) {
            let (q, v) = match a.get(2) {
                Some(v) => ('"', v),
                None => ('\'', a.get(3).expect("one of the two")),
            };
            let at = a.get(0).expect("whole").start();
            match a[1].to_ascii_lowercase().as_str() {
                "name" => name = Some((at, q, v.as_str().to_owned())),
                n if n == want => value = Some((at, q, v.as_str().to_owned())),
                _ => {}
            }
        }
        let (Some((n_at, nq, n)), Some((v_at, vq, v))) = (name, value) else {
            continue;
        };
        let named = format!("name={nq}{}{nq}", regex::escape(&n));
        let valued = format!("{want}={vq}([^{vq}]*){vq}");
        let pattern = if n_at < v_at {
            format!("<{element}[^>]*{named}[^>]*{valued}")
        } else {
            format!("<{element}[^>]*{valued}[^>]*{named}")
        };
        let gives = Regex::new(&pattern)
            .ok()
            .and_then(|r| r.captures(body))
            .and_then(|c| c.get(1).map(|g| g.as_str() == v));
        if gives == Some(true) {
            out.push((v, pattern, n));
        }
    }
    out
}

/// Finds the values later requests reuse, adds the extractions and puts the variables in.
pub fn link(steps: &mut [Step], entries: &[Entry]) {
    let mut known: HashMap<String, Source> = HashMap::new();
    let mut sent: HashSet<String> = HashSet::new();
    let mut vars: HashMap<(usize, String), String> = HashMap::new();
    let mut names: HashSet<String> = HashSet::new();
    for t in 0..steps.len() {
        let values = candidates(&mut steps[t]);
        // Longer values first: a token that contains a shorter one is replaced whole.
        let mut found: Vec<(String, Source)> = values
            .iter()
            .filter_map(|v| known.get(v).map(|s| (v.clone(), s.clone())))
            .collect();
        found.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        for (value, src) in found {
            let (how, base) = match src.how {
                Some(how) => (how, src.name),
                None => {
                    let body = entries[steps[src.step].last].body().unwrap_or_default();
                    let Some((pattern, name)) = text_regex(&body, &value) else {
                        continue;
                    };
                    (Extract::Regex(pattern), var_name(&name))
                }
            };
            let var = vars.entry((src.step, value.clone())).or_insert_with(|| {
                let mut name = base.clone();
                let mut k = 2;
                while !names.insert(name.clone()) {
                    name = format!("{base}_{k}");
                    k += 1;
                }
                steps[src.step].extracts.push(Extraction {
                    var: name.clone(),
                    how,
                    value: value.clone(),
                    used_by: t,
                });
                name
            });
            let with = Piece::Var(var.clone());
            for (_, text) in steps[t].texts_mut() {
                text.replace(&value, &with);
            }
        }
        sent.extend(values);
        let last = steps[t].last;
        sources(t, &entries[last], &mut known, &sent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_inputs_and_meta_tags_are_found_by_name() {
        let page = r#"<form><input type="hidden" name="csrf" value="tok123abc"><input name='q' value=''>
            <input value="v9" name="late"></form><meta name="csrf-token" content="m-456">"#;
        let got = html_fields(page);
        let want = [
            ("tok123abc", r#"<input[^>]*name="csrf"[^>]*value="([^"]*)""#),
            ("", r"<input[^>]*name='q'[^>]*value='([^']*)'"),
            ("v9", r#"<input[^>]*value="([^"]*)"[^>]*name="late""#),
            (
                "m-456",
                r#"<meta[^>]*name="csrf\-token"[^>]*content="([^"]*)""#,
            ),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((v, p, _), (wv, wp)) in got.iter().zip(want) {
            assert_eq!((v.as_str(), p.as_str()), (wv, wp));
        }
    }

    #[test]
    fn json_paths_name_what_they_point_at() {
        let v = serde_json::json!({"orders": [{"id": 981, "a b": "x"}], "token": "t0k3n"});
        let mut out = Vec::new();
        json_leaves(&v, "$".into(), None, &mut out);
        let got: Vec<(&str, &str, &str)> = out
            .iter()
            .map(|(p, k, v)| (p.as_str(), k.as_str(), v.as_str()))
            .collect();
        assert!(
            got.contains(&("$.orders[0].id", "order_id", "981")),
            "{got:?}"
        );
        assert!(got.contains(&("$.orders[0]['a b']", "a b", "x")), "{got:?}");
        assert!(got.contains(&("$.token", "token", "t0k3n")), "{got:?}");
    }

    #[test]
    fn a_token_in_a_script_is_found_by_what_precedes_it() {
        let page = "<script>\n  window.csrfToken = \"f00ba4c0ffee-1234\";\n</script>";
        let (p, name) = text_regex(page, "f00ba4c0ffee-1234").unwrap();
        assert_eq!(p, r#"window\.csrfToken = "([A-Za-z0-9\-]+)"#);
        assert_eq!(name, "csrfToken");
        // the same words before another value first: no regex that would take the wrong one
        assert_eq!(
            text_regex("id = 'zzz99999'\nid = 'abc12345'", "abc12345"),
            None
        );
        assert_eq!(
            text_regex("abc12345", "abc12345"),
            None,
            "nothing before it"
        );
    }

    #[test]
    fn words_are_not_taken_for_generated_values() {
        for v in ["981", "a1b", "f3a9c0d2e1", "abcdefghij", "eyJhbGciOi.x.y"] {
            assert!(generated(v), "{v}");
        }
        for v in ["12", "true", "admin", "en-US", "has space 123"] {
            assert!(!generated(v), "{v}");
        }
    }
}
