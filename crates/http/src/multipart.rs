//! `multipart/form-data` bodies from curl's `-F` fields (RFC 7578): `name=value`, `name=@file`
//! (an upload: the file's bytes, its name, a content type) and `name=<file` (the file's text as
//! a plain value), with curl's `;type=` and `;filename=` options. The body is built once before
//! the run: every request sends the same bytes.

use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    Text(String),
    /// `@file`: uploaded as a file part.
    Upload(PathBuf),
    /// `<file`: the file's contents as a plain value.
    Contents(PathBuf),
}

/// One `-F` field, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormField {
    pub name: String,
    pub value: FieldValue,
    pub content_type: Option<String>,
    pub filename: Option<String>,
}

impl FormField {
    /// curl's syntax: `name=value`, `name=@path[;type=T][;filename=F]`, `name=<path`.
    pub fn parse(s: &str) -> Result<FormField, String> {
        let Some((name, rest)) = s.split_once('=').filter(|(n, _)| !n.is_empty()) else {
            return Err(format!(
                "-F {s:?}: expected name=value, name=@file or name=<file, e.g. -F avatar=@me.png"
            ));
        };
        let (value, options) = match rest.strip_prefix(['@', '<']) {
            None => return Ok(FormField::text(name, rest)),
            Some(r) => match r.split_once(';') {
                Some((path, opts)) => (path, Some(opts)),
                None => (r, None),
            },
        };
        let mut field = FormField {
            name: name.to_owned(),
            value: if rest.starts_with('@') {
                FieldValue::Upload(value.into())
            } else {
                FieldValue::Contents(value.into())
            },
            content_type: None,
            filename: None,
        };
        for opt in options.into_iter().flat_map(|o| o.split(';')) {
            match opt.split_once('=') {
                Some(("type", t)) => field.content_type = Some(t.to_owned()),
                Some(("filename", f)) => field.filename = Some(f.to_owned()),
                _ => {
                    return Err(format!(
                        "-F {s:?}: unknown option {opt:?} (type= or filename=)"
                    ))
                }
            }
        }
        Ok(field)
    }

    fn text(name: &str, value: &str) -> FormField {
        FormField {
            name: name.to_owned(),
            value: FieldValue::Text(value.to_owned()),
            content_type: None,
            filename: None,
        }
    }
}

/// The body and its `Content-Type` header value; a file that cannot be read is an error naming
/// it.
pub fn encode(fields: &[FormField], boundary: &str) -> Result<(String, Vec<u8>), String> {
    let mut body = Vec::new();
    for f in fields {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let name = quoted(&f.name);
        let read = |p: &Path| {
            std::fs::read(p).map_err(|e| format!("-F {}: cannot read {}: {e}", f.name, p.display()))
        };
        let (disposition, content_type, bytes) = match &f.value {
            FieldValue::Text(t) => (
                format!("form-data; name=\"{name}\""),
                None,
                t.clone().into_bytes(),
            ),
            FieldValue::Contents(p) => (format!("form-data; name=\"{name}\""), None, read(p)?),
            FieldValue::Upload(p) => {
                let filename = f.filename.clone().unwrap_or_else(|| {
                    p.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                });
                let disposition = format!(
                    "form-data; name=\"{name}\"; filename=\"{}\"",
                    quoted(&filename)
                );
                let guessed = guess_type(p);
                (disposition, Some(guessed), read(p)?)
            }
        };
        body.extend_from_slice(format!("Content-Disposition: {disposition}\r\n").as_bytes());
        if let Some(t) = f.content_type.as_deref().or(content_type) {
            body.extend_from_slice(format!("Content-Type: {t}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(&bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), body))
}

/// A boundary for a body: long and hex, from `seed`, so it is all but certain not to occur in
/// the fields (curl's habit).
pub fn boundary(seed: u64) -> String {
    format!("------------------------herd{seed:016x}")
}

/// curl's escaping in a quoted header parameter.
fn quoted(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "%22")
        .replace(['\r', '\n'], " ")
}

/// The content type curl would send for a file, by its extension.
fn guess_type(p: &Path) -> &'static str {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("txt") => "text/plain",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_syntax_parses_into_fields() {
        assert_eq!(
            FormField::parse("a=b=c").unwrap().value,
            FieldValue::Text("b=c".into())
        );
        let f = FormField::parse("doc=@/tmp/x.bin;type=text/x;filename=y.txt").unwrap();
        assert_eq!(f.value, FieldValue::Upload("/tmp/x.bin".into()));
        assert_eq!(f.content_type.as_deref(), Some("text/x"));
        assert_eq!(f.filename.as_deref(), Some("y.txt"));
        assert!(FormField::parse("novalue").is_err());
        assert!(FormField::parse("x=@f;size=3")
            .unwrap_err()
            .contains("unknown option"));
    }

    #[test]
    fn a_text_field_and_an_upload_make_one_body() {
        let dir = std::env::temp_dir().join(format!("herd-mp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("notes.txt");
        std::fs::write(&file, "hello").unwrap();
        let fields = [
            FormField::parse("title=My \"notes\"").unwrap(),
            FormField::parse(&format!("doc=@{}", file.display())).unwrap(),
        ];
        let (ct, body) = encode(&fields, "XYZ").unwrap();
        assert_eq!(ct, "multipart/form-data; boundary=XYZ");
        let want = "--XYZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nMy \"notes\"\r\n\
                    --XYZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\n\
                    Content-Type: text/plain\r\n\r\nhello\r\n--XYZ--\r\n";
        assert_eq!(String::from_utf8(body).unwrap(), want);
        let _ = std::fs::remove_dir_all(dir);
    }
}
