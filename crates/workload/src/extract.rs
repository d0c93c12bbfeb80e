//! Pulling values out of responses: a JSONPath query (RFC 9535), a regular expression's first
//! group, a header, or a cookie the response set.

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
            Extract::Json(path) => path.first_text(&r.body),
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
                .find(|(n, _)| n == name)
                .map(|(_, v)| v),
        }
    }
}

/// A JSONPath query (RFC 9535, by `serde_json_path`): `$.token`, `$.items[0].id`, filters
/// (`$.items[?@.stock > 0].id`), wildcards (`$.items[*].id`) and descendants (`$..id`).
/// Extraction takes the first node the query selects, in document order.
#[derive(Clone, Debug)]
pub struct JsonPath(serde_json_path::JsonPath);

/// Why a JSONPath does not parse, and where: a byte offset into the text as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    pub offset: usize,
    pub message: String,
}

impl JsonPath {
    pub fn parse(s: &str) -> Result<JsonPath, PathError> {
        let lead = s.len() - s.trim_start().len();
        let text = s.trim();
        let hint =
            "a JSONPath (RFC 9535) like $.token, $.items[0].id, $..id or $.items[?@.n > 1].id";
        if !text.starts_with('$') {
            return Err(PathError {
                offset: lead,
                message: format!("`{s}` must start with `$` ({hint})"),
            });
        }
        serde_json_path::JsonPath::parse(text)
            .map(JsonPath)
            .map_err(|e| {
                let mut offset = (lead + e.position()).min(s.len());
                while !s.is_char_boundary(offset) {
                    offset -= 1;
                }
                PathError {
                    offset,
                    message: format!("bad JSONPath `{text}`: {} ({hint})", e.message()),
                }
            })
    }

    /// The first node `body` (JSON) has at this path, as text: a string as it is, `null` as
    /// nothing, anything else as JSON.
    pub fn first_text(&self, body: &[u8]) -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(body).ok()?;
        match self.find(&v)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// The first node selected, in document order.
    pub fn find<'v>(&self, v: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        self.0.query(v).first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(body: &str, headers: &[(&str, &str)]) -> Response {
        Response {
            status: 200,
            body: body.as_bytes().into(),
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
            (" $.token ", Some(json!("abc"))),
        ];
        for (path, want) in table {
            let p = JsonPath::parse(path).unwrap();
            assert_eq!(p.find(&v).cloned(), want, "{path}");
        }
        for bad in ["token", "$.", "$[x]", "$.a[0", "$x"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }

    /// What the hand-written subset could not do: filters, wildcards, descendants, slices.
    #[test]
    fn json_paths_filter_wildcard_and_descend() {
        let v = json!({
            "items": [
                {"id": 7, "stock": 0, "tags": ["old"]},
                {"id": 9, "stock": 3, "tags": ["new", "sale"]},
                {"id": 11, "stock": 5}
            ],
            "user": {"profile": {"csrf": "c-1"}}
        });
        let table = [
            ("$.items[?@.stock > 0].id", json!(9)),
            ("$.items[?@.stock > 4].id", json!(11)),
            ("$.items[*].id", json!(7)),
            ("$..csrf", json!("c-1")),
            ("$.items[-1].id", json!(11)),
            ("$.items[1:].id", json!(9)),
            ("$.items[?length(@.tags) == 2].tags[1]", json!("sale")),
            ("$.items[?@.tags[0] == 'new'].id", json!(9)),
        ];
        for (path, want) in table {
            let p = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e:?}"));
            assert_eq!(p.find(&v).cloned(), Some(want), "{path}");
        }
        assert_eq!(
            JsonPath::parse("$.items[?@.stock > 9].id")
                .unwrap()
                .find(&v),
            None
        );
    }

    #[test]
    fn a_bad_json_path_says_where() {
        let e = JsonPath::parse("$.items[?@.stock >].id").unwrap_err();
        assert!(e.message.contains("bad JSONPath"), "{e:?}");
        assert!(e.offset > 8, "{e:?}");
        let e = JsonPath::parse("  token").unwrap_err();
        assert_eq!(e.offset, 2);
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
