//! Log formats as a list of parts: literal text and fields. Common and Combined are Apache
//! `LogFormat` strings like any other; an nginx `log_format` line compiles to the same parts, so
//! one byte-level matcher ([`crate::parse`]) reads them all.

use crate::LogError;

/// What a field of a line holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Client,
    /// `[10/Oct/2000:13:55:36 -0700]` without the brackets (`%t`, `$time_local`).
    TimeApache,
    /// `$time_iso8601`.
    TimeIso,
    /// Seconds since the epoch with a fraction (`$msec`).
    TimeEpoch,
    /// The request line, `GET /path?q HTTP/1.1` (`%r`, `$request`).
    Request,
    Method,
    /// The path without the query (`%U`, `$uri`).
    Path,
    /// The query, with or without its `?` (`%q`, `$args`).
    Query,
    /// Path and query (`$request_uri`).
    PathQuery,
    Status,
    /// Response bytes, `-` for none (`%b`, `%B`, `$body_bytes_sent`, `$bytes_sent`).
    Bytes,
    Referer,
    UserAgent,
    /// Time taken in microseconds (`%D`, `%{us}T`).
    TakenUs,
    /// In milliseconds (`%{ms}T`).
    TakenMs,
    /// In seconds, maybe with a fraction (`%T`, `$request_time`).
    TakenS,
    /// `$upstream_response_time`: seconds, `-`, or a list when several upstreams were tried.
    Upstream,
    /// Present but not used.
    Skip,
}

/// A piece of a format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Lit(Vec<u8>),
    Field(Field),
}

/// Apache's Common Log Format.
pub const COMMON: &str = "%h %l %u %t \"%r\" %>s %b";
/// Apache's (and nginx's default) Combined Log Format.
pub const COMBINED: &str = "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\"";

/// Compiles an Apache `LogFormat` string (the format itself, quotes as in the config unescaped).
pub fn apache(fmt: &str) -> Result<Vec<Part>, LogError> {
    let b = fmt.as_bytes();
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && i + 1 < b.len() {
            // `\"` in a config file is a quote in the log; `\t` a tab
            lit.push(match b[i + 1] {
                b't' => b'\t',
                b'n' => b'\n',
                other => other,
            });
            i += 2;
            continue;
        }
        if c != b'%' {
            lit.push(c);
            i += 1;
            continue;
        }
        i += 1;
        // modifiers: `%>s`, `%<s`, `%400,501{User-agent}i`, `%!200r`
        while i < b.len()
            && (b[i] == b'>'
                || b[i] == b'<'
                || b[i] == b'!'
                || b[i] == b','
                || b[i].is_ascii_digit())
        {
            i += 1;
        }
        let mut arg = "";
        if i < b.len() && b[i] == b'{' {
            let end = fmt[i..]
                .find('}')
                .ok_or_else(|| LogError::Format(format!("`{fmt}`: `%{{` without its `}}`")))?;
            arg = &fmt[i + 1..i + end];
            i += end + 1;
        }
        let Some(&d) = b.get(i) else {
            return Err(LogError::Format(format!("`{fmt}` ends with a lone `%`")));
        };
        i += 1;
        if d == b'%' {
            lit.push(b'%');
            continue;
        }
        let field = match (d, arg.to_ascii_lowercase().as_str()) {
            (b'h' | b'a', _) => Field::Client,
            (b't', "") => Field::TimeApache,
            (b'r', _) => Field::Request,
            (b'm', _) => Field::Method,
            (b'U', _) => Field::Path,
            (b'q', _) => Field::Query,
            (b's', _) => Field::Status,
            (b'b' | b'B' | b'O', _) => Field::Bytes,
            (b'D', _) => Field::TakenUs,
            (b'T', "" | "s") => Field::TakenS,
            (b'T', "ms") => Field::TakenMs,
            (b'T', "us") => Field::TakenUs,
            (b'i', "referer") => Field::Referer,
            (b'i', "user-agent") => Field::UserAgent,
            _ => Field::Skip,
        };
        push_field(&mut parts, &mut lit, field, fmt)?;
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    check(parts, fmt)
}

/// Compiles an nginx `log_format` line: `log_format main '$remote_addr - ...';`, or just the
/// quoted strings, or the format text itself.
pub fn nginx(line: &str) -> Result<Vec<Part>, LogError> {
    let text = nginx_text(line);
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            lit.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let braced = b.get(i) == Some(&b'{');
        if braced {
            i += 1;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = &text[start..i];
        if braced {
            if b.get(i) != Some(&b'}') {
                return Err(LogError::Format(format!(
                    "`{line}`: `${{{name}` without its `}}`"
                )));
            }
            i += 1;
        }
        if name.is_empty() {
            lit.push(b'$');
            continue;
        }
        let field = match name {
            "remote_addr"
            | "binary_remote_addr"
            | "realip_remote_addr"
            | "http_x_forwarded_for" => Field::Client,
            "time_local" => Field::TimeApache,
            "time_iso8601" => Field::TimeIso,
            "msec" => Field::TimeEpoch,
            "request" => Field::Request,
            "request_method" => Field::Method,
            "uri" | "document_uri" => Field::Path,
            "args" | "query_string" => Field::Query,
            "request_uri" => Field::PathQuery,
            "status" => Field::Status,
            "body_bytes_sent" | "bytes_sent" => Field::Bytes,
            "http_referer" => Field::Referer,
            "http_user_agent" => Field::UserAgent,
            "request_time" => Field::TakenS,
            "upstream_response_time" => Field::Upstream,
            _ => Field::Skip,
        };
        push_field(&mut parts, &mut lit, field, line)?;
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    check(parts, line)
}

/// The format text of a `log_format` directive: the quoted strings joined, the name and
/// `escape=` dropped. Text without quotes is taken as the format itself.
pub fn nginx_text(line: &str) -> String {
    let t = line.trim().trim_end_matches(';');
    if !(t.starts_with("log_format") || t.starts_with('\'') || t.starts_with('"')) {
        return t.to_owned();
    }
    let mut out = String::new();
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            for d in chars.by_ref() {
                if d == c {
                    break;
                }
                out.push(d);
            }
        }
    }
    out
}

/// Whether an nginx `log_format` line writes JSON (`escape=json`, or a format starting with `{`).
pub fn nginx_is_json(line: &str) -> bool {
    line.contains("escape=json") || nginx_text(line).trim_start().starts_with('{')
}

fn push_field(
    parts: &mut Vec<Part>,
    lit: &mut Vec<u8>,
    f: Field,
    fmt: &str,
) -> Result<(), LogError> {
    if lit.is_empty() {
        if let Some(Part::Field(_)) = parts.last() {
            return Err(LogError::Format(format!(
                "`{fmt}`: two fields with nothing between them cannot be told apart (put a space or other text between them)"
            )));
        }
    } else {
        parts.push(Part::Lit(std::mem::take(lit)));
    }
    parts.push(Part::Field(f));
    Ok(())
}

fn check(parts: Vec<Part>, fmt: &str) -> Result<Vec<Part>, LogError> {
    let has = |f: Field| parts.contains(&Part::Field(f));
    let mut missing = Vec::new();
    if !has(Field::TimeApache) && !has(Field::TimeIso) && !has(Field::TimeEpoch) {
        missing.push("a time (%t, $time_local, $time_iso8601 or $msec)");
    }
    if !has(Field::Request) && !has(Field::PathQuery) && !has(Field::Path) {
        missing.push("the request (%r, $request, $request_uri or $uri)");
    }
    if !missing.is_empty() {
        return Err(LogError::Format(format!(
            "`{fmt}` has no {}: herd needs them to read a log",
            missing.join(" and no ")
        )));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_compiles_to_fields_between_literals() {
        let p = apache(COMBINED).unwrap();
        assert_eq!(p[0], Part::Field(Field::Client));
        assert_eq!(p[1], Part::Lit(b" ".to_vec()));
        assert!(p.contains(&Part::Field(Field::UserAgent)));
        assert_eq!(p.last(), Some(&Part::Lit(b"\"".to_vec())));
    }

    #[test]
    fn nginx_line_with_request_time() {
        let p = nginx(
            r#"log_format timed '$remote_addr - $remote_user [$time_local] "$request" '
            '$status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';"#,
        )
        .unwrap();
        assert_eq!(p.last(), Some(&Part::Field(Field::TakenS)));
        assert!(p.contains(&Part::Field(Field::TimeApache)));
    }

    #[test]
    fn a_format_without_time_is_refused_with_what_is_missing() {
        let e = apache("%h %r").unwrap_err().to_string();
        assert!(e.contains("no a time"), "{e}");
        let e = apache("%h%u %t %r").unwrap_err().to_string();
        assert!(e.contains("nothing between"), "{e}");
    }
}
