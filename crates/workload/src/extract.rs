//! Pulling values out of responses: a JSONPath subset (`$.a.b[0]`, `$['k']`), a regular
//! expression's first group, a header, or a cookie the response set.

use herd_engine::Response;
use regex::Regex;

#[derive(Clone, Debug)]
pub enum Extract {
    Json(JsonPath),
    Regex(Regex),
    Header(String),
    Cookie(String),
}

impl Extract {
    /// What `extract` finds in a kept response, or `None`.
    pub fn apply(&self, r: &Response) -> Option<String> {
        match self {
            Extract::Json(path) => {
                let v: serde_json::Value = serde_json::from_slice(&r.body).ok()?;
                match path.find(&v)? {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Null => None,
                    other => Some(other.to_string()),
                }
            }
            Extract::Regex(re) => {
                let body = std::str::from_utf8(&r.body).ok()?;
                let caps = re.captures(body)?;
                caps.get(1)
                    .or_else(|| caps.get(0))
                    .map(|m| m.as_str().to_owned())
            }
            Extract::Header(name) => r
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone()),
            Extract::Cookie(name) => r
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
                .filter_map(|(_, v)| crate::cookie::parse_set_cookie(v))
                .find(|c| &c.name == name)
                .map(|c| c.value),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// `$`, then `.key`, `['key']` or `[N]` any number of times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPath(Vec<Seg>);

impl JsonPath {
    pub fn parse(s: &str) -> Result<JsonPath, String> {
        let hint = "a JSONPath like $.token, $.items[0].id or $['a key']";
        let rest = s
            .trim()
            .strip_prefix('$')
            .ok_or_else(|| format!("`{s}` must start with `$` ({hint})"))?;
        let b = rest.as_bytes();
        let mut i = 0;
        let mut segs = Vec::new();
        while i < b.len() {
            match b[i] {
                b'.' => {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                        j += 1;
                    }
                    if j == start {
                        return Err(format!("empty key in `{s}` ({hint})"));
                    }
                    segs.push(Seg::Key(rest[start..j].to_owned()));
                    i = j;
                }
                b'[' => {
                    let close = rest[i..]
                        .find(']')
                        .map(|k| i + k)
                        .ok_or_else(|| format!("`[` is not closed in `{s}` ({hint})"))?;
                    let inner = rest[i + 1..close].trim();
                    if let Some(q) = inner
                        .strip_prefix('\'')
                        .and_then(|x| x.strip_suffix('\''))
                        .or_else(|| inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
                    {
                        segs.push(Seg::Key(q.to_owned()));
                    } else if let Ok(n) = inner.parse::<usize>() {
                        segs.push(Seg::Index(n));
                    } else {
                        return Err(format!(
                            "`[{inner}]` in `{s}` is not an index or a quoted key ({hint})"
                        ));
                    }
                    i = close + 1;
                }
                _ => return Err(format!("unexpected `{}` in `{s}` ({hint})", &rest[i..=i])),
            }
        }
        Ok(JsonPath(segs))
    }

    pub fn find<'v>(&self, v: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        self.0.iter().try_fold(v, |v, seg| match seg {
            Seg::Key(k) => v.get(k.as_str()),
            Seg::Index(i) => v.get(*i),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(body: &str, headers: &[(&str, &str)]) -> Response {
        Response {
            status: 200,
            body: body.as_bytes().to_vec(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..Response::default()
        }
    }

    #[test]
    fn json_paths_find_what_they_name() {
        let v = json!({"token": "abc", "items": [{"id": 7}, {"id": 9}], "a key": true});
        let table = [
            ("$.token", Some(json!("abc"))),
            ("$.items[1].id", Some(json!(9))),
            ("$['a key']", Some(json!(true))),
            ("$.items[5]", None),
            ("$.missing.deeper", None),
            ("$", Some(v.clone())),
        ];
        for (path, want) in table {
            let p = JsonPath::parse(path).unwrap();
            assert_eq!(p.find(&v).cloned(), want, "{path}");
        }
        for bad in ["token", "$.", "$[x]", "$.a[0", "$x"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn extraction_kinds() {
        let r = response(
            r#"<a href="/items/42">next</a> {"#,
            &[("Set-Cookie", "sid=s1; Path=/"), ("X-Req", "r7")],
        );
        let re = Extract::Regex(Regex::new(r#"href="(/items/\d+)""#).unwrap());
        assert_eq!(re.apply(&r).as_deref(), Some("/items/42"));
        assert_eq!(
            Extract::Header("x-req".into()).apply(&r).as_deref(),
            Some("r7")
        );
        assert_eq!(
            Extract::Cookie("sid".into()).apply(&r).as_deref(),
            Some("s1")
        );
        assert_eq!(Extract::Cookie("other".into()).apply(&r), None);
        let json = Extract::Json(JsonPath::parse("$.token").unwrap());
        assert_eq!(json.apply(&r), None, "not JSON");
        let r = response(r#"{"token":"t0","n":3}"#, &[]);
        assert_eq!(json.apply(&r).as_deref(), Some("t0"));
        let n = Extract::Json(JsonPath::parse("$.n").unwrap());
        assert_eq!(n.apply(&r).as_deref(), Some("3"));
        let none = Extract::Regex(Regex::new("nothing(here)").unwrap());
        assert_eq!(none.apply(&r), None);
    }
}
