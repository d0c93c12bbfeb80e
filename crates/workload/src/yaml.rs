//! The YAML layer: a document parsed into a tree whose every node knows its line and column, so
//! each later problem can point at the place in the file that caused it. Typed reading happens
//! elsewhere (the `read` module); this module knows nothing of workloads.

use crate::diag::{Diag, Pos};
use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A YAML node and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub at: Pos,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A scalar as written; `quoted` scalars are always strings, plain ones may be numbers,
    /// booleans or null.
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// Keys in file order (duplicates are reported by the reader).
    Map(Vec<(Node, Node)>),
}

impl Node {
    pub fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// A plain `null`, `~` or empty scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, quoted: false }
            if text.is_empty() || text == "~" || text == "null")
    }

    /// Where character `offset` of a scalar's text is in the file, when the scalar sits on one
    /// line (plain or quoted): template problems point at the `{{`, not at the scalar's start.
    pub fn pos_in_scalar(&self, offset: usize, text: &str) -> Pos {
        let quoted = matches!(&self.value, Value::Scalar { quoted: true, .. });
        if text[..offset.min(text.len())].contains('\n') {
            return self.at;
        }
        let chars = text[..offset.min(text.len())].chars().count();
        Pos {
            line: self.at.line,
            col: self.at.col + chars + usize::from(quoted),
        }
    }

    /// What kind of node this is, for messages.
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } if self.is_null() => "nothing",
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Parses one YAML document. A syntax error is a single diagnostic: past it the parser cannot
/// tell what was meant.
pub fn parse(src: &str) -> Result<Node, Diag> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(src);
    if let Err(e) = parser.load(&mut b, false) {
        let m = e.marker();
        return Err(Diag::new(pos(m), format!("YAML syntax: {}", e.info())));
    }
    b.root.ok_or_else(|| {
        Diag::new(Pos { line: 1, col: 1 }, "the file is empty")
            .hint("start with `target: http://host:port` and `scenarios:`")
    })
}

fn pos(m: &Marker) -> Pos {
    // yaml-rust2 counts lines from 1 and columns from 0.
    Pos {
        line: m.line().max(1),
        col: m.col() + 1,
    }
}

#[derive(Default)]
struct Builder {
    stack: Vec<(Node, Option<Node>, usize)>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
}

impl Builder {
    fn push_value(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some((parent, pending_key, _)) => match &mut parent.value {
                Value::Seq(items) => items.push(node),
                Value::Map(entries) => match pending_key.take() {
                    None => *pending_key = Some(node),
                    Some(k) => entries.push((k, node)),
                },
                Value::Scalar { .. } => unreachable!("only collections are on the stack"),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let at = pos(&mark);
        match ev {
            Event::Scalar(text, style, anchor, _) => {
                let node = Node {
                    at,
                    value: Value::Scalar {
                        text,
                        quoted: style != TScalarStyle::Plain,
                    },
                };
                if anchor > 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                self.push_value(node);
            }
            Event::SequenceStart(anchor, _) => self.stack.push((
                Node {
                    at,
                    value: Value::Seq(Vec::new()),
                },
                None,
                anchor,
            )),
            Event::MappingStart(anchor, _) => self.stack.push((
                Node {
                    at,
                    value: Value::Map(Vec::new()),
                },
                None,
                anchor,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, _, anchor)) = self.stack.pop() {
                    if anchor > 0 {
                        self.anchors.insert(anchor, node.clone());
                    }
                    self.push_value(node);
                }
            }
            Event::Alias(id) => {
                let node = self.anchors.get(&id).cloned().unwrap_or(Node {
                    at,
                    value: Value::Scalar {
                        text: String::new(),
                        quoted: false,
                    },
                });
                self.push_value(node);
            }
            _ => {}
        }
    }
}

/// The node as JSON, for checking a file against the JSON Schema in tests and for `json:`
/// bodies: plain scalars become numbers, booleans and null where YAML reads them so.
pub fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Scalar { text, quoted: true } => J::String(text.clone()),
        Value::Scalar {
            text,
            quoted: false,
        } => plain_scalar(text),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.scalar().unwrap_or_default().to_owned(), to_json(v)))
                .collect(),
        ),
    }
}

/// YAML 1.2 core schema reading of a plain scalar.
pub fn plain_scalar(text: &str) -> serde_json::Value {
    use serde_json::Value as J;
    match text {
        "" | "~" | "null" | "Null" | "NULL" => J::Null,
        "true" | "True" | "TRUE" => J::Bool(true),
        "false" | "False" | "FALSE" => J::Bool(false),
        _ => {
            if let Ok(i) = text.parse::<i64>() {
                J::from(i)
            } else if let Some(n) = text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && text.bytes().any(|b| b.is_ascii_digit()))
                .and_then(serde_json::Number::from_f64)
            {
                J::Number(n)
            } else {
                J::String(text.to_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_know_their_line_and_column() {
        let doc = parse("a: 1\nlist:\n  - x\n  - { k: 'v' }\n").unwrap();
        let Value::Map(entries) = &doc.value else {
            panic!("a map")
        };
        assert_eq!(entries[0].0.at, Pos { line: 1, col: 1 });
        assert_eq!(entries[0].1.at, Pos { line: 1, col: 4 });
        let Value::Seq(items) = &entries[1].1.value else {
            panic!("a list")
        };
        assert_eq!(items[0].at, Pos { line: 3, col: 5 });
        let Value::Map(inner) = &items[1].value else {
            panic!("a map")
        };
        assert_eq!(inner[0].1.at, Pos { line: 4, col: 10 });
        assert_eq!(
            inner[0].1.value,
            Value::Scalar {
                text: "v".into(),
                quoted: true
            }
        );
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.message.starts_with("YAML syntax"), "{e:?}");
        assert!(e.at.line >= 1);
    }

    #[test]
    fn aliases_copy_the_anchored_node() {
        let doc = parse("a: &x { k: 1 }\nb: *x\n").unwrap();
        assert_eq!(
            to_json(&doc),
            serde_json::json!({ "a": { "k": 1 }, "b": { "k": 1 } })
        );
    }

    #[test]
    fn plain_scalars_read_as_yaml_does() {
        assert_eq!(plain_scalar("12"), serde_json::json!(12));
        assert_eq!(plain_scalar("1.5"), serde_json::json!(1.5));
        assert_eq!(plain_scalar("true"), serde_json::json!(true));
        assert_eq!(plain_scalar("~"), serde_json::Value::Null);
        assert_eq!(plain_scalar("30s"), serde_json::json!("30s"));
        assert_eq!(plain_scalar("inf"), serde_json::json!("inf"));
    }
}
