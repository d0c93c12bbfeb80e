//! A step's `multipart:` body: curl's `-F` fields in a mapping (`name: value`, `name: "@file"`
//! with `;type=` and `;filename=`, `name: "<file"`), files relative to the workload file. The
//! parts are written by herd-http's encoder, so a step sends what `herd run -F` and curl send;
//! a text value may hold `{{ }}` holes, a file is read once, when the file is compiled.

use crate::diag::Diag;
use crate::hole::Escape;
use crate::read::Reader;
use crate::template::Template;
use crate::yaml::Node;
use herd_http::multipart::{boundary, encode, FieldValue, FormField};

/// Appends the parts of `node` to `body`; returns the Content-Type to send with them.
pub fn read(
    r: &mut Reader,
    node: &Node,
    body: &mut Template,
    diags: &mut Vec<Diag>,
) -> Option<String> {
    let fields = r.map(node, "multipart")?;
    let mut parts = Vec::new();
    for (k, v) in fields.entries() {
        let (Some(name), Some(text)) = (k.scalar(), r.string(v, "a multipart field")) else {
            continue;
        };
        match FormField::parse(&format!("{name}={text}")) {
            Ok(mut field) => {
                if let FieldValue::Upload(p) | FieldValue::Contents(p) = &mut field.value {
                    *p = r.base.join(&*p);
                }
                parts.push((field, v));
            }
            Err(e) => r.report(
                Diag::new(v.at, e.replacen("-F ", "multipart field ", 1))
                    .hint("e.g. avatar: \"@me.png;type=image/png\", or a plain value"),
            ),
        }
    }
    // The boundary follows from the fields as written, so the body is the same every run.
    let seed = parts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, (f, _)| {
        format!("{f:?}")
            .bytes()
            .fold(h, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    });
    let boundary = boundary(seed);
    let closing = format!("--{boundary}--\r\n");
    for (field, v) in parts {
        let hole = match &field.value {
            FieldValue::Text(t) => Some(Template::parse(v, t, Escape::None, diags)),
            FieldValue::Upload(p) | FieldValue::Contents(p) => {
                if let Err(e) = std::fs::metadata(p) {
                    r.report(
                        Diag::new(v.at, format!("cannot read {}: {e}", p.display()))
                            .hint("a file's path is relative to the workload file"),
                    );
                    continue;
                }
                None
            }
        };
        // One field through the encoder, its closing line cut: the part as `-F` writes it.
        let lone = FormField {
            value: match field.value {
                FieldValue::Text(_) => FieldValue::Text(String::new()),
                other => other,
            },
            ..field
        };
        let bytes = match encode(std::slice::from_ref(&lone), &boundary) {
            Ok((_, bytes)) => bytes,
            Err(e) => {
                r.error(v.at, e.replacen("-F ", "multipart field ", 1));
                continue;
            }
        };
        let Ok(part) = String::from_utf8(bytes) else {
            r.report(
                Diag::new(
                    v.at,
                    "this file is binary: a workload file's bodies are text for now",
                )
                .hint("send it with `herd run -F name=@file URL`"),
            );
            continue;
        };
        let part = part.strip_suffix(&closing).unwrap_or(&part);
        match hole {
            Some(t) => {
                // The empty value's line end comes after the value.
                body.push_lit(part.strip_suffix("\r\n").unwrap_or(part));
                body.append(t);
                body.push_lit("\r\n");
            }
            None => body.push_lit(part),
        }
    }
    body.push_lit(&closing);
    Some(format!("multipart/form-data; boundary={boundary}"))
}
