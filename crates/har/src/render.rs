//! The workload file: YAML written by hand (as `herd model` does for logs) so every choice
//! carries a comment saying where it came from.

use crate::secret::secret_field;
use crate::select::LeftOut;
use crate::step::{Body, Extract, Extraction, Json, Piece, Step, Text};
use std::fmt::Write;

/// A YAML scalar that reads back as exactly `s`: single-quoted when it can be, else
/// double-quoted with escapes (line breaks and control characters).
pub fn quote(s: &str) -> String {
    if s.chars().all(|c| !c.is_control()) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            '\t' => q.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A text as herd's template: literal `{{` (which would open a hole) is written as a call
/// that gives it back.
pub fn template(t: &Text) -> String {
    let mut s = String::new();
    for p in &t.0 {
        match p {
            Piece::Lit(l) => s.push_str(&l.replace("{{", "{{ concat(\"{\", \"{\") }}")),
            Piece::Var(v) => {
                let _ = write!(s, "{{{{{v}}}}}");
            }
            Piece::Env(v) => {
                let _ = write!(s, "{{{{env.{v}}}}}");
            }
        }
    }
    s
}

fn json(j: &Json, out: &mut String) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Num(n) => out.push_str(&n.to_string()),
        Json::Str(t) => out.push_str(&quote(&template(t))),
        Json::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json(x, out);
            }
            out.push(']');
        }
        Json::Obj(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(k));
                out.push_str(": ");
                json(x, out);
            }
            out.push('}');
        }
    }
}

/// The first characters of a recorded value, enough to recognise it in the HAR file.
/// The recorded value of an extraction, for its comment: a credential's (named like one, or
/// sent again in a header that carries one) only by its length, never in part.
fn recorded(x: &Extraction, arg: &str, user: &Step) -> String {
    let in_secret_header = user.headers.iter().any(|(name, t)| {
        crate::secret::secret_header(name)
            && t.0
                .iter()
                .any(|p| matches!(p, Piece::Var(v) if *v == x.var))
    });
    if in_secret_header || secret_field(&x.var) || secret_field(arg) {
        format!("a credential of {} characters", x.value.chars().count())
    } else {
        format!("'{}'", short(&x.value))
    }
}

fn short(v: &str) -> String {
    if v.chars().count() <= 12 {
        return v.to_owned();
    }
    format!("{}...", v.chars().take(10).collect::<String>())
}

/// A comment on an anti-forgery token sent as recorded: no response of the recording showed
/// where it came from, so a new session will be refused it.
fn stale(name: &str, t: &Text) -> &'static str {
    let n = name.to_ascii_lowercase();
    if (n.contains("csrf") || n.contains("xsrf")) && t.literal().is_some_and(|v| !v.is_empty()) {
        "   # as recorded: no response showed where it came from; extract it by hand (docs/har.md)"
    } else {
        ""
    }
}

pub fn step(w: &mut String, s: &Step, steps: &[Step], defaults: &[(String, String)]) {
    if let Some((n, title)) = &s.page {
        let _ = writeln!(
            w,
            "      # page {n}{}",
            if title.is_empty() {
                String::new()
            } else {
                format!(": {title}")
            }
        );
    }
    if let Some(ms) = s.think_ms {
        let _ = writeln!(
            w,
            "      - think: {ms}ms   # the pause before this page in the recording"
        );
    }
    let _ = writeln!(
        w,
        "      - {}: {}",
        s.method.to_ascii_lowercase(),
        quote(&template(&s.path))
    );
    let headers: Vec<_> = s
        .headers
        .iter()
        .filter(|(n, t)| {
            !defaults
                .iter()
                .any(|(dn, dv)| dn == n && t.literal() == Some(dv.as_str()))
        })
        .collect();
    if !headers.is_empty() {
        let _ = writeln!(w, "        headers:");
        for (n, t) in headers {
            let _ = writeln!(
                w,
                "          {}: {}{}",
                quote(n),
                quote(&template(t)),
                stale(n, t)
            );
        }
    }
    match &s.body {
        Body::None => {}
        Body::Form(f) => {
            let _ = writeln!(w, "        form:");
            for (n, t) in f {
                let _ = writeln!(
                    w,
                    "          {}: {}{}",
                    quote(n),
                    quote(&template(t)),
                    stale(n, t)
                );
            }
        }
        Body::Json(j) => {
            let mut b = String::new();
            json(j, &mut b);
            let _ = writeln!(w, "        json: {b}");
        }
        Body::Raw(t) => {
            let _ = writeln!(w, "        body: {}", quote(&template(t)));
        }
    }
    if s.follow {
        let _ = writeln!(
            w,
            "        follow_redirects: true   # the browser followed its redirects"
        );
    }
    if !s.extracts.is_empty() {
        let _ = writeln!(w, "        extract:");
        for x in &s.extracts {
            let (kind, arg) = match &x.how {
                Extract::Json(p) => ("json", p),
                Extract::Regex(r) => ("regex", r),
                Extract::Header(h) => ("header", h),
                Extract::Cookie(c) => ("cookie", c),
            };
            let _ = writeln!(
                w,
                "          {}: {{ {kind}: {} }}   # {} in the recording, sent again by {}",
                x.var,
                quote(arg),
                recorded(x, arg, &steps[x.used_by]),
                steps[x.used_by].label()
            );
        }
    }
    let _ = writeln!(w, "        check: {{ status: {} }}", s.status);
}

fn examples(v: &[String]) -> String {
    let mut e: Vec<&str> = Vec::new();
    for x in v {
        if !e.contains(&x.as_str()) && e.len() < 4 {
            e.push(x);
        }
    }
    let more = if v.len() > e.len() { ", ..." } else { "" };
    format!("{}{more}", e.join(", "))
}

pub fn left_out(w: &mut String, l: &LeftOut, assets: bool) {
    let n = l.assets.len() + l.other_hosts.len() + l.no_response.len() + l.methods.len();
    if n == 0 && l.hops == 0 {
        return;
    }
    let _ = writeln!(w, "# Left out of the steps:");
    if !l.assets.is_empty() {
        let why = if assets {
            ""
        } else {
            " (browsers cache them, CDNs serve them; --assets keeps them)"
        };
        let _ = writeln!(
            w,
            "#   {} static files{why}: {}",
            l.assets.len(),
            examples(&l.assets)
        );
    }
    if !l.other_hosts.is_empty() {
        let _ = writeln!(
            w,
            "#   {} requests to other hosts (a workload has one target): {}",
            l.other_hosts.len(),
            examples(&l.other_hosts)
        );
    }
    if !l.no_response.is_empty() {
        let _ = writeln!(
            w,
            "#   {} requests that got no response (blocked or cancelled): {}",
            l.no_response.len(),
            examples(&l.no_response)
        );
    }
    if !l.methods.is_empty() {
        let _ = writeln!(
            w,
            "#   {} requests with a method a workload cannot send: {}",
            l.methods.len(),
            examples(&l.methods)
        );
    }
    if l.hops > 0 {
        let _ = writeln!(
            w,
            "#   {} redirect hops: the step before each follows them (follow_redirects)",
            l.hops
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_as_written() {
        assert_eq!(quote("it's"), "'it''s'");
        assert_eq!(quote("a\nb\u{1}\"\\"), "\"a\\nb\\u0001\\\"\\\\\"");
        let t = Text(vec![
            Piece::Lit("{{x}} ".into()),
            Piece::Var("id".into()),
            Piece::Env("HAR_A".into()),
        ]);
        assert_eq!(
            template(&t),
            r#"{{ concat("{", "{") }}x}} {{id}}{{env.HAR_A}}"#
        );
    }
}
