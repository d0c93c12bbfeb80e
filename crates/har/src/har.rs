//! HAR 1.2 (the W3C draft every browser's developer tools export): the parts a workload needs.
//! Fields the spec marks optional, and those exporters leave out or fill with `null`, default
//! to empty; what a step cannot do without (an entry's time, method, URL and status) is required,
//! and a file that lacks it is refused with the JSON path and line of the first problem.

use serde::{Deserialize, Deserializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a HAR file: {path}: {source} (a HAR file is the JSON a browser's developer tools export: {{\"log\": {{\"entries\": [...]}}}})")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("log.entries[{entry}].startedDateTime: `{value}` is not an ISO 8601 date and time (e.g. 2026-11-25T19:47:00.123Z)")]
    Time { entry: usize, value: String },
    #[error("log.entries[{entry}].request.url: `{value}` is not an absolute http(s) URL")]
    Url { entry: usize, value: String },
}

#[derive(Debug, Deserialize)]
pub struct Har {
    pub log: Log,
}

#[derive(Debug, Deserialize)]
pub struct Log {
    #[serde(default, deserialize_with = "or_default")]
    pub creator: Creator,
    #[serde(default, deserialize_with = "or_default")]
    pub pages: Vec<Page>,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Creator {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub version: String,
}

#[derive(Debug, Deserialize)]
pub struct Page {
    #[serde(default, deserialize_with = "or_default")]
    pub id: String,
    #[serde(default, deserialize_with = "or_default")]
    pub title: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[serde(default, deserialize_with = "or_default")]
    pub pageref: Option<String>,
    pub started_date_time: String,
    /// Milliseconds from the start to the end of the exchange; -1 or absent when unknown.
    #[serde(default, deserialize_with = "or_default")]
    pub time: f64,
    pub request: Request,
    pub response: Response,
    /// What the browser loaded it as (`document`, `xhr`, `stylesheet`...): Chromium's exports
    /// write it; a `document` is a navigation, the start of a page.
    #[serde(default, rename = "_resourceType", deserialize_with = "or_default")]
    pub resource_type: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub method: String,
    pub url: String,
    #[serde(default, deserialize_with = "or_default")]
    pub headers: Vec<Header>,
    #[serde(default, deserialize_with = "or_default")]
    pub post_data: Option<PostData>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostData {
    #[serde(default, deserialize_with = "or_default")]
    pub mime_type: String,
    #[serde(default, deserialize_with = "or_default")]
    pub text: Option<String>,
    /// Form fields, when the exporter parsed them (the text is preferred: it keeps their order
    /// and encoding exactly as sent).
    #[serde(default, deserialize_with = "or_default")]
    pub params: Vec<Param>,
}

#[derive(Debug, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub value: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// 0 when the browser got no response (blocked, aborted, failed to connect).
    pub status: u16,
    #[serde(default, deserialize_with = "or_default")]
    pub headers: Vec<Header>,
    #[serde(default, deserialize_with = "or_default")]
    pub content: Content,
    #[serde(default, deserialize_with = "or_default")]
    pub redirect_url: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    #[serde(default, deserialize_with = "or_default")]
    pub mime_type: String,
    #[serde(default, deserialize_with = "or_default")]
    pub text: Option<String>,
    #[serde(default, deserialize_with = "or_default")]
    pub encoding: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Header {
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub value: String,
}

/// `null` where a value may be left out reads as the value's default (exporters write both).
fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Reads a HAR file's bytes.
pub fn read(bytes: &[u8]) -> Result<Har, ReadError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let har: Har = serde_path_to_error::deserialize(&mut de).map_err(|e| ReadError::Json {
        path: match e.path().to_string() {
            p if p == "." => "the file".to_owned(),
            p => p,
        },
        source: e.into_inner(),
    })?;
    de.end().map_err(|e| ReadError::Json {
        path: "after the HAR document".into(),
        source: e,
    })?;
    Ok(har)
}

impl Entry {
    /// When the request started, in Unix milliseconds.
    pub fn start_ms(&self, index: usize) -> Result<f64, ReadError> {
        let t = OffsetDateTime::parse(self.started_date_time.trim(), &Rfc3339).map_err(|_| {
            ReadError::Time {
                entry: index,
                value: self.started_date_time.clone(),
            }
        })?;
        Ok(t.unix_timestamp_nanos() as f64 / 1e6)
    }

    /// The response body as text, when the file holds it (base64 is decoded when it is UTF-8).
    pub fn body(&self) -> Option<String> {
        let c = &self.response.content;
        let text = c.text.as_deref()?;
        if c.encoding.as_deref() == Some("base64") {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .ok()?;
            return String::from_utf8(bytes).ok();
        }
        Some(text.to_owned())
    }
}

impl Header {
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_files_say_where() {
        let e = read(b"{\"log\": {\"entries\": [{\"startedDateTime\": 5}]}}").unwrap_err();
        let m = e.to_string();
        assert!(m.contains("log.entries[0].startedDateTime"), "{m}");
        assert!(m.contains("line 1"), "{m}");
        let m = read(b"<html>").unwrap_err().to_string();
        assert!(
            m.starts_with("not a HAR file: the file: expected value"),
            "{m}"
        );
        let m = read(b"{\"log\": {}}").unwrap_err().to_string();
        assert!(m.contains("missing field `entries`"), "{m}");
        let m = read(b"{\"log\": {\"entries\": []}} x")
            .unwrap_err()
            .to_string();
        assert!(m.contains("trailing characters"), "{m}");
    }

    #[test]
    fn nulls_read_as_left_out() {
        let h = read(
            br#"{"log": {"pages": null, "entries": [{"startedDateTime": "2026-01-02T03:04:05.5+01:00",
            "time": null, "pageref": null, "request": {"method": "GET", "url": "http://a/", "headers": null},
            "response": {"status": 200, "content": {"text": "aGk=", "encoding": "base64"}}}]}}"#,
        )
        .unwrap();
        let e = &h.log.entries[0];
        assert_eq!(e.body().as_deref(), Some("hi"));
        assert_eq!(e.start_ms(0).unwrap(), 1_767_319_445_500.0);
        assert!(Entry::start_ms(
            &Entry {
                started_date_time: "yesterday".into(),
                ..read_one()
            },
            3
        )
        .unwrap_err()
        .to_string()
        .starts_with("log.entries[3].startedDateTime: `yesterday`"));
    }

    fn read_one() -> Entry {
        read(br#"{"log": {"entries": [{"startedDateTime": "2026-01-02T03:04:05Z", "request": {"method": "GET", "url": "http://a/"}, "response": {"status": 200}}]}}"#)
            .unwrap()
            .log
            .entries
            .remove(0)
    }
}
