//! A step as the model builds it: a recorded request whose texts are pieces (literal text, an
//! extracted variable, an environment value), so values found to be reused or secret are
//! replaced in place and rendering escapes only what the browser sent literally.

/// One piece of a templated text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    /// `{{name}}`: a variable an earlier step extracts.
    Var(String),
    /// `{{env.NAME}}`: a secret the user passes with `-e NAME=...`.
    Env(String),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text(pub Vec<Piece>);

/// Characters a generated value (an id, a token) is made of: a value is only replaced where
/// the text around it is not one of these, so `12` in `/a/12/b` is, and in `/a/123` is not.
pub fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '~' | '+' | '%')
}

impl Text {
    pub fn lit(s: impl Into<String>) -> Text {
        Text(vec![Piece::Lit(s.into())])
    }

    /// The text when nothing in it was replaced.
    pub fn literal(&self) -> Option<&str> {
        match self.0.as_slice() {
            [] => Some(""),
            [Piece::Lit(s)] => Some(s),
            _ => None,
        }
    }

    /// Replaces every occurrence of `value` standing on its own (see [`token_char`]) in the
    /// literal pieces with `with`; true when any was replaced.
    pub fn replace(&mut self, value: &str, with: &Piece) -> bool {
        if value.is_empty() {
            return false;
        }
        let mut out = Vec::with_capacity(self.0.len());
        let mut any = false;
        for p in self.0.drain(..) {
            let Piece::Lit(s) = p else {
                out.push(p);
                continue;
            };
            let mut rest = 0;
            let mut from = 0;
            while let Some(i) = s[from..].find(value).map(|i| from + i) {
                let end = i + value.len();
                let before = s[..i].chars().next_back().is_none_or(|c| !token_char(c));
                let after = s[end..].chars().next().is_none_or(|c| !token_char(c));
                if before && after {
                    if i > rest {
                        out.push(Piece::Lit(s[rest..i].to_owned()));
                    }
                    out.push(with.clone());
                    rest = end;
                    any = true;
                }
                from = i + value[..].chars().next().map_or(1, char::len_utf8);
            }
            if rest < s.len() {
                out.push(Piece::Lit(s[rest..].to_owned()));
            }
        }
        self.0 = out;
        any
    }

    /// The text's literal pieces, for finding values in them.
    pub fn literals(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Lit(s) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// A JSON body whose strings may hold templates.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(Text),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// Read in the order the browser sent the keys (`serde_json::Value` would sort them).
impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Num(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Num(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Num)
                    .ok_or_else(|| E::custom("not a JSON number"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::Str(Text::lit(s)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Arr(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(kv) = a.next_entry()? {
                    v.push(kv);
                }
                Ok(Json::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Json {
    /// Every string in the body with the key it stands under (`None` in an array).
    pub fn strings_mut<'a>(
        &'a mut self,
        key: Option<&'a str>,
        out: &mut Vec<(Option<&'a str>, &'a mut Text)>,
    ) {
        match self {
            Json::Str(t) => out.push((key, t)),
            Json::Arr(a) => a.iter_mut().for_each(|j| j.strings_mut(None, out)),
            Json::Obj(o) => o.iter_mut().for_each(|(k, j)| j.strings_mut(Some(k), out)),
            _ => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    None,
    /// `application/x-www-form-urlencoded` fields, decoded, in the order sent.
    Form(Vec<(String, Text)>),
    Json(Json),
    /// Anything else, as sent; its `Content-Type` stays among the headers.
    Raw(Text),
}

/// How an earlier step takes a value from its response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extract {
    Json(String),
    Regex(String),
    Header(String),
    Cookie(String),
}

#[derive(Clone, Debug)]
pub struct Extraction {
    pub var: String,
    pub how: Extract,
    /// The value in the recording, and the step that sends it again (for the comment).
    pub value: String,
    pub used_by: usize,
}

#[derive(Clone, Debug)]
pub struct Step {
    /// The entry of the request, and of the final response when redirects were followed.
    pub entry: usize,
    pub last: usize,
    pub method: String,
    /// Path and query, as sent.
    pub path: Text,
    pub headers: Vec<(String, Text)>,
    pub body: Body,
    /// The final status the browser saw.
    pub status: u16,
    pub follow: bool,
    /// The pause before this step: the gap between the pages.
    pub think_ms: Option<u64>,
    /// The page the step opens, when it is the first of one: its number and title.
    pub page: Option<(usize, String)>,
    pub extracts: Vec<Extraction>,
}

impl Step {
    /// Every text of the request a value may be found in, with the name it stands under (a
    /// header, a form field, a JSON key; `None` for the path and a raw body).
    pub fn texts_mut(&mut self) -> Vec<(Option<&str>, &mut Text)> {
        let mut out: Vec<(Option<&str>, &mut Text)> = vec![(None, &mut self.path)];
        for (n, t) in &mut self.headers {
            out.push((Some(n.as_str()), t));
        }
        match &mut self.body {
            Body::None => {}
            Body::Form(f) => out.extend(f.iter_mut().map(|(n, t)| (Some(n.as_str()), t))),
            Body::Json(j) => j.strings_mut(None, &mut out),
            Body::Raw(t) => out.push((None, t)),
        }
        out
    }

    /// `GET /path`, as herd names the step by default (for comments).
    pub fn label(&self) -> String {
        let path: String = self
            .path
            .0
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.clone(),
                Piece::Var(v) => format!("{{{{{v}}}}}"),
                Piece::Env(v) => format!("{{{{env.{v}}}}}"),
            })
            .collect();
        format!("{} {path}", self.method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_replaced_only_where_they_stand_alone() {
        let v = Piece::Var("id".into());
        let mut t = Text::lit("/orders/981/items?o=981&x=9810");
        assert!(t.replace("981", &v));
        assert_eq!(
            t.0,
            vec![
                Piece::Lit("/orders/".into()),
                v.clone(),
                Piece::Lit("/items?o=".into()),
                v.clone(),
                Piece::Lit("&x=9810".into())
            ]
        );
        assert!(!Text::lit("a1981").replace("981", &v));
        let mut t = Text::lit("Bearer abc.def");
        assert!(t.replace("abc.def", &v));
        assert_eq!(t.literal(), None);
        assert!(!Text::lit("x").replace("", &v));
    }
}
