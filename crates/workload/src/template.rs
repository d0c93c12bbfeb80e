//! Templates: text with `{{source}}`, `{{source.column}}` or `{{variable}}` holes, split once at
//! compile time into literal pieces and holes so rendering is appends, and a template without
//! holes is known to be static (its request is serialized once, before the run).

use crate::diag::Diag;
use crate::expr::{Call, LuaCall, Parsed};
use crate::hole::{Escape, Hole, Lookup, NotSent, Slot};
use crate::yaml::Node;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Lit(String),
    Hole(Hole),
    /// `{{ sha256(users.name) }}`: a function call (crate::expr).
    Call(Call),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template {
    pub pieces: Vec<Piece>,
}

impl Template {
    pub fn literal(text: &str) -> Template {
        let mut t = Template::default();
        t.push_lit(text);
        t
    }

    /// Parses the text of a scalar node; holes are reported at their own column. Literal text
    /// is escaped as the holes' values will be (a form value `a b {{x}}` sends `a%20b%20...`).
    pub fn parse(node: &Node, text: &str, escape: Escape, diags: &mut Vec<Diag>) -> Template {
        let mut t = Template::default();
        let mut rest = 0;
        let lit = |t: &mut Template, s: &str| {
            let mut out = String::new();
            escape_into(s, escape, &mut out);
            t.push_lit(&out);
        };
        while let Some(open) = text[rest..].find("{{").map(|i| rest + i) {
            lit(&mut t, &text[rest..open]);
            let at = node.pos_in_scalar(open, text);
            // An unclosed string in a call swallows the `}}`: then the plain `}}` ends the
            // hole, and the call's parser says which string is open.
            let close = find_close(text, open + 2)
                .or_else(|| text[open + 2..].find("}}").map(|i| open + 2 + i));
            let Some(close) = close else {
                diags.push(
                    Diag::new(at, "`{{` is not closed").hint("write {{name}} or {{source.column}}"),
                );
                return t;
            };
            let inner = text[open + 2..close].trim();
            if inner.contains('(') {
                match crate::expr::parse(node, text, open + 2, close, escape, diags) {
                    Some(Parsed::Call(c)) => t.pieces.push(Piece::Call(c)),
                    Some(Parsed::Value(v)) => lit(&mut t, &v),
                    None => {}
                }
                rest = close + 2;
                continue;
            }
            let (name, field) = match inner.split_once('.') {
                Some((n, f)) => (n.trim(), Some(f.trim().to_owned())),
                None => (inner, None),
            };
            let word = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            };
            if name == "env" {
                // `{{env.NAME}}`: the environment's value (k6's `__ENV`, `herd run -e`), read
                // when the file is compiled, so tokens and passwords stay out of files.
                match field.as_deref().map(|f| (f, std::env::var(f))) {
                    Some((_, Ok(value))) => lit(&mut t, &value),
                    Some((var, Err(_))) => diags.push(
                        Diag::new(at, format!("`{{{{env.{var}}}}}`: {var} is not set"))
                            .hint(format!("export {var}=... or give it with -e {var}=VALUE")),
                    ),
                    None => diags.push(
                        Diag::new(at, "`{{env}}` needs a variable name").hint("write {{env.NAME}}"),
                    ),
                }
                rest = close + 2;
                continue;
            }
            if !word(name) || field.as_deref().is_some_and(|f| !word(f)) {
                diags.push(
                    Diag::new(at, format!("`{{{{{inner}}}}}` is not a variable reference"))
                        .hint("write {{name}} or {{source.column}} with letters, digits, _ or -"),
                );
            } else {
                t.pieces.push(Piece::Hole(Hole {
                    name: name.to_owned(),
                    field,
                    at,
                    escape,
                    slot: Slot::Unresolved,
                }));
            }
            rest = close + 2;
        }
        lit(&mut t, &text[rest..]);
        t
    }

    pub fn push_lit(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(Piece::Lit(last)) = self.pieces.last_mut() {
            last.push_str(s);
        } else {
            self.pieces.push(Piece::Lit(s.to_owned()));
        }
    }

    pub fn append(&mut self, other: Template) {
        for p in other.pieces {
            match p {
                Piece::Lit(s) => self.push_lit(&s),
                h => self.pieces.push(h),
            }
        }
    }

    pub fn is_static(&self) -> bool {
        // A call left after compilation depends on a variable, the clock or the random stream.
        self.pieces.iter().all(|p| matches!(p, Piece::Lit(_)))
    }

    #[cfg(test)]
    pub fn holes(&self) -> impl Iterator<Item = &Hole> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Hole(h) => Some(h),
            _ => None,
        })
    }

    /// Every variable reference, those in function arguments too.
    pub fn holes_mut(&mut self) -> impl Iterator<Item = &mut Hole> {
        let mut out = Vec::new();
        for p in &mut self.pieces {
            match p {
                Piece::Hole(h) => out.push(h),
                Piece::Call(c) => c.holes_mut(&mut out),
                Piece::Lit(_) => {}
            }
        }
        out.into_iter()
    }

    /// Every `lua.NAME(...)` call, nested ones too.
    pub fn lua_mut(&mut self) -> Vec<&mut LuaCall> {
        let mut out = Vec::new();
        for p in &mut self.pieces {
            if let Piece::Call(c) = p {
                c.lua_mut(&mut out);
            }
        }
        out
    }

    /// The text as written, holes included (for default request names).
    pub fn source(&self) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => s.push_str(l),
                Piece::Hole(h) => {
                    s.push_str("{{");
                    s.push_str(&h.written());
                    s.push_str("}}");
                }
                Piece::Call(c) => {
                    s.push_str("{{");
                    s.push_str(&c.written);
                    s.push_str("}}");
                }
            }
        }
        s
    }

    /// Appends the rendered text to `out`, or says why it cannot be: an unset variable or a
    /// script's error.
    pub fn render(&self, vars: &impl Lookup, out: &mut String) -> Result<(), NotSent> {
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Hole(h) => {
                    let v = vars
                        .value(h.slot)
                        .ok_or_else(|| NotSent::Unset(h.written()))?;
                    escape_into(v, h.escape, out);
                }
                Piece::Call(c) => escape_into(&c.eval(vars)?, c.escape, out),
            }
        }
        Ok(())
    }
}

/// The `}}` that closes the hole opened before `from`, past any quoted string in it (a JWT's
/// claims end in `}}` more often than not).
fn find_close(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut quote = None;
    let mut i = from;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (None, c @ (b'\'' | b'"')) if text[from..i].contains('(') => quote = Some(c),
            (None, b'}') if b.get(i + 1) == Some(&b'}') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Form and query values: everything but unreserved characters is percent-encoded.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub fn escape_into(v: &str, escape: Escape, out: &mut String) {
    match escape {
        Escape::None => out.push_str(v),
        Escape::Url => out.extend(utf8_percent_encode(v, COMPONENT)),
        Escape::Json => {
            let quoted = serde_json::to_string(v).expect("a string serializes");
            out.push_str(&quoted[1..quoted.len() - 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Pos;
    use crate::yaml::Value;

    struct Vars(Vec<Option<String>>);
    impl Lookup for Vars {
        fn value(&self, slot: Slot) -> Option<&str> {
            match slot {
                Slot::Extracted(i) => self.0[i].as_deref(),
                _ => None,
            }
        }
        fn random(&self) -> u64 {
            4
        }
    }

    fn node(text: &str, quoted: bool) -> Node {
        Node {
            at: Pos { line: 3, col: 10 },
            value: Value::Scalar {
                text: text.into(),
                quoted,
            },
        }
    }

    fn parse(text: &str, escape: Escape) -> (Template, Vec<Diag>) {
        let mut d = Vec::new();
        let mut t = Template::parse(&node(text, false), text, escape, &mut d);
        for (i, h) in t.holes_mut().enumerate() {
            h.slot = Slot::Extracted(i);
        }
        (t, d)
    }

    #[test]
    fn holes_split_and_render_with_escaping() {
        let (t, d) = parse("/items/{{ item }}?q={{users.name}}", Escape::None);
        assert!(d.is_empty());
        assert!(!t.is_static());
        assert_eq!(t.source(), "/items/{{item}}?q={{users.name}}");
        let (t, _) = parse("/items/{{ item }}?q={{users.name}}", Escape::Url);
        let holes: Vec<_> = t.holes().map(|h| (h.written(), h.at.col)).collect();
        assert_eq!(holes, vec![("item".into(), 17), ("users.name".into(), 30)]);
        let mut out = String::new();
        let vars = Vars(vec![Some("7".into()), Some("a b&c".into())]);
        t.render(&vars, &mut out).unwrap();
        assert_eq!(
            out, "%2Fitems%2F7%3Fq%3Da%20b%26c",
            "literals escaped as values are"
        );
    }

    #[test]
    fn json_escaping_and_unset_variables() {
        let (t, _) = parse("{{x}}", Escape::Json);
        let mut out = String::new();
        t.render(&Vars(vec![Some("say \"hi\"\n".into())]), &mut out)
            .unwrap();
        assert_eq!(out, r#"say \"hi\"\n"#);
        let mut out = String::new();
        assert_eq!(
            t.render(&Vars(vec![None]), &mut out),
            Err(NotSent::Unset("x".into()))
        );
    }

    #[test]
    fn static_text_and_bad_holes() {
        let (t, d) = parse("/plain/path", Escape::None);
        assert!(t.is_static() && d.is_empty());
        let (_, d) = parse("/a/{{oops", Escape::None);
        assert_eq!(d[0].message, "`{{` is not closed");
        assert_eq!(d[0].at, Pos { line: 3, col: 13 });
        let (_, d) = parse("{{a b}}", Escape::None);
        assert!(d[0].message.contains("not a variable reference"), "{d:?}");
    }
}
