//! Request types: a request's method and path with its variable parts replaced, so
//! `/items/123` and `/items/456` are one type, `GET /items/{id}`. Segments that look like ids
//! (numbers, UUIDs, hashes, long tokens) become `{id}`; every query value becomes `{q}`: the
//! words users searched for are the type's data ([`crate::params`]), not types of their own, or
//! a log's mix falls apart into `GET /search?q=bag`, `GET /search?q=gloves`, ... `herd logs`,
//! `herd model`, `herd logs --against` and `herd replay` all name a request by this one
//! function. Or the user names the types with `--pattern`.

/// A user's pattern, `/items/{id}` or `GET /search?q={q}`: `{...}` matches one path segment,
/// a trailing `*` the rest of the path.
#[derive(Clone, Debug)]
pub struct UserPattern {
    pub text: String,
    method: Option<String>,
    segments: Vec<String>,
    rest: bool,
}

impl UserPattern {
    pub fn parse(text: &str) -> UserPattern {
        let (method, path) = match text.split_once(' ') {
            Some((m, p)) if m.chars().all(|c| c.is_ascii_uppercase()) => (Some(m.to_owned()), p),
            _ => (None, text),
        };
        let path = path.split('?').next().unwrap_or(path);
        let mut segments: Vec<String> = path.split('/').map(str::to_owned).collect();
        let rest = segments.last().is_some_and(|s| s == "*");
        if rest {
            segments.pop();
        }
        UserPattern {
            text: text.to_owned(),
            method,
            segments,
            rest,
        }
    }

    pub fn matches(&self, method: &[u8], path: &[u8]) -> bool {
        if self
            .method
            .as_deref()
            .is_some_and(|m| m.as_bytes() != method)
        {
            return false;
        }
        let mut segs = path.split(|&c| c == b'/');
        for want in &self.segments {
            let Some(got) = segs.next() else { return false };
            let wild = want.starts_with('{') && want.ends_with('}');
            if !(wild && !got.is_empty() || want.as_bytes() == got) {
                return false;
            }
        }
        self.rest || segs.next().is_none()
    }
}

/// Whether a path segment is an identifier rather than a name.
pub fn is_id(seg: &[u8]) -> bool {
    if seg.is_empty() {
        return false;
    }
    if seg.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let digits = seg.iter().filter(|c| c.is_ascii_digit()).count();
    if seg.len() == 36
        && seg.iter().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
    {
        return true;
    }
    if seg.len() >= 8 && digits > 0 && seg.iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    // long tokens with digits: base64 ids, slugs ending in a number (`shoe-123`)
    (seg.len() >= 16
        && digits >= 2
        && seg
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_'))
        || (digits > 0
            && seg
                .iter()
                .rposition(|c| !c.is_ascii_digit())
                .is_some_and(|i| seg[i] == b'-' && i + 1 < seg.len()))
}

/// Static files: not a user's step, so left out of sessions and think times.
pub fn is_asset(path: &[u8]) -> bool {
    let Some(dot) = memchr::memrchr(b'.', path) else {
        return false;
    };
    if memchr::memchr(b'/', &path[dot..]).is_some() {
        return false;
    }
    let ext = &path[dot + 1..];
    const ASSETS: [&[u8]; 20] = [
        b"css", b"js", b"png", b"jpg", b"jpeg", b"gif", b"ico", b"svg", b"woff", b"woff2", b"ttf",
        b"eot", b"map", b"webp", b"avif", b"mp4", b"webm", b"otf", b"mjs", b"bmp",
    ];
    ASSETS.iter().any(|a| ext.eq_ignore_ascii_case(a))
}

/// Writes the type key of a request into `key` (`GET /items/{id}?q={q}&sort=asc`) and returns
/// the first id found in the path, if any. Query parameters are sorted by name.
pub fn template<'a>(
    method: &[u8],
    path: &'a [u8],
    query: &[u8],
    key: &mut Vec<u8>,
) -> Option<&'a [u8]> {
    key.clear();
    key.extend_from_slice(method);
    key.push(b' ');
    let mut id = None;
    let mut first = true;
    for seg in path.split(|&c| c == b'/') {
        if !first {
            key.push(b'/');
        }
        first = false;
        if is_id(seg) {
            key.extend_from_slice(b"{id}");
            id.get_or_insert(seg);
        } else {
            key.extend_from_slice(seg);
        }
    }
    if !query.is_empty() {
        let mut names: Vec<&[u8]> = query
            .split(|&c| c == b'&')
            .filter(|p| !p.is_empty())
            .map(|p| &p[..memchr::memchr(b'=', p).unwrap_or(p.len())])
            .collect();
        names.sort_unstable();
        names.dedup();
        for (i, name) in names.iter().enumerate() {
            key.push(if i == 0 { b'?' } else { b'&' });
            key.extend_from_slice(name);
            key.extend_from_slice(b"={q}");
        }
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(m: &str, p: &str, q: &str) -> (String, Option<String>) {
        let mut k = Vec::new();
        let id = template(m.as_bytes(), p.as_bytes(), q.as_bytes(), &mut k)
            .map(|i| String::from_utf8_lossy(i).into_owned());
        (String::from_utf8(k).unwrap(), id)
    }

    #[test]
    fn ids_uuids_and_hashes_become_id() {
        assert_eq!(
            t("GET", "/items/123", ""),
            ("GET /items/{id}".into(), Some("123".into()))
        );
        assert_eq!(
            t("GET", "/u/3f2504e0-4f89-11d3-9a0c-0305e82c3301/x", "").0,
            "GET /u/{id}/x"
        );
        assert_eq!(t("GET", "/c/deadbeef99", "").0, "GET /c/{id}");
        assert_eq!(t("GET", "/p/red-shoe-42", "").0, "GET /p/{id}");
        assert_eq!(t("GET", "/about", "").0, "GET /about");
        assert_eq!(t("GET", "/v2/cafe", "").0, "GET /v2/cafe");
    }

    #[test]
    fn every_query_value_becomes_q() {
        assert_eq!(
            t("GET", "/search", "q=shoes+red&sort=asc&page=2").0,
            "GET /search?page={q}&q={q}&sort={q}"
        );
        assert_eq!(t("GET", "/s", "b=1&a=x").0, "GET /s?a={q}&b={q}");
        assert_eq!(
            t("GET", "/search", "q=bag").0,
            t("GET", "/search", "q=gloves").0
        );
    }

    #[test]
    fn user_patterns_match_segments() {
        let p = UserPattern::parse("/items/{id}");
        assert!(p.matches(b"GET", b"/items/abc"));
        assert!(!p.matches(b"GET", b"/items/abc/x"));
        assert!(UserPattern::parse("GET /static/*").matches(b"GET", b"/static/a/b.css"));
        assert!(!UserPattern::parse("POST /x").matches(b"GET", b"/x"));
    }

    #[test]
    fn assets_are_told_by_extension() {
        assert!(is_asset(b"/static/app.JS"));
        assert!(!is_asset(b"/v1.2/items"));
        assert!(!is_asset(b"/items/1"));
    }
}
