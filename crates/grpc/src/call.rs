//! A call as ghz's flags describe it (`--proto`/`--protoset`, `--call`, `-d`/`-D`/`-b`/`-B`,
//! `-m`, `--deadline`), checked into what every request sends: its path, its header fields and
//! its framed message, built once before the run.

use crate::frame;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use std::path::PathBuf;
use std::time::Duration;

/// ghz's call flags, as given.
#[derive(Clone, Debug, Default)]
pub struct CallSpec {
    pub proto: Option<PathBuf>,
    pub import_paths: Vec<PathBuf>,
    pub protoset: Option<PathBuf>,
    /// `package.Service/Method`.
    pub call: String,
    /// `-d`: the request message as JSON (an array: a client stream's messages).
    pub data: Option<String>,
    /// `-D`: the same, from a file.
    pub data_file: Option<PathBuf>,
    /// `-b`: the request message as protobuf bytes (read from stdin by the CLI).
    pub binary: Option<Vec<u8>>,
    /// `-B`: the same, from a file.
    pub binary_file: Option<PathBuf>,
    /// `-m`: metadata as a JSON object of strings.
    pub metadata: Option<String>,
    /// `--deadline`: sent as `grpc-timeout`.
    pub deadline: Option<Duration>,
    /// `--message-rate`: a client stream's messages per second, each after the one before
    /// (none: all at once, with the request).
    pub message_rate: Option<f64>,
    /// Where to ask for the types by server reflection (`host:port`) when neither `proto` nor
    /// `protoset` is given.
    pub reflect: Option<String>,
}

/// The TLS server reflection is asked over (ALPN h2); `None`: plaintext (h2c).
pub type ReflectTls = Option<std::sync::Arc<rustls::ClientConfig>>;

/// A checked call.
#[derive(Clone, Debug)]
pub struct Call {
    pub method: MethodDescriptor,
    /// `/package.Service/Method`: the request's `:path`.
    pub path: String,
    /// `content-type`, `te`, `grpc-timeout` and the metadata, in order.
    pub headers: Vec<(String, String)>,
    /// The request's messages, each with its 5-byte prefix: the request body (with templates
    /// in the data: the first call's).
    pub body: Vec<u8>,
    /// Data with templates (`{{seq}}`): each call's own messages.
    pub data: Option<crate::Data>,
    /// `--message-rate`: the time between a client stream's messages.
    pub interval: Option<Duration>,
}

impl Call {
    /// `package.Service/Method`, as results name the call.
    pub fn name(&self) -> String {
        self.path[1..].to_owned()
    }

    /// The reply's type.
    pub fn reply(&self) -> MessageDescriptor {
        self.method.output()
    }
}

impl CallSpec {
    /// Reads the types and the data and checks them; every problem at once.
    pub fn compile(&self) -> Result<Call, Vec<String>> {
        self.compile_with(None)
    }

    /// [`CallSpec::compile`], server reflection asked over `tls`.
    pub fn compile_with(&self, tls: ReflectTls) -> Result<Call, Vec<String>> {
        let mut problems = Vec::new();
        let pool = match (&self.proto, &self.protoset, &self.reflect) {
            (None, None, Some(addr)) if !self.call.is_empty() => {
                crate::reflect::pool(addr, service(&self.call), Duration::from_secs(5), tls)
            }
            _ => crate::describe::pool(
                self.proto.as_deref(),
                &self.import_paths,
                self.protoset.as_deref(),
            ),
        }
        .map_err(|e| problems.push(e))
        .ok();
        let method = if self.call.is_empty() {
            problems.push(
                "give the method to call: --call package.Service/Method (e.g. \
                 helloworld.Greeter/SayHello)"
                    .into(),
            );
            None
        } else {
            pool.and_then(|p| {
                crate::describe::method(&p, &self.call)
                    .map_err(|e| problems.push(e))
                    .ok()
            })
        };
        let headers = self.headers().map_err(|e| problems.push(e)).ok();
        let interval = method
            .as_ref()
            .and_then(|m| self.interval(m).map_err(|e| problems.push(e)).ok())
            .flatten();
        let body = method
            .as_ref()
            .and_then(|m| self.body(m).map_err(|e| problems.push(e)).ok());
        match (method, headers, body) {
            (Some(method), Some(headers), Some((body, data))) if problems.is_empty() => Ok(Call {
                path: format!("/{}/{}", method.parent_service().full_name(), method.name()),
                method,
                headers,
                body,
                data,
                interval,
            }),
            _ => Err(problems),
        }
    }

    /// `--message-rate` as the time between messages, for a method that takes a stream.
    fn interval(&self, method: &MethodDescriptor) -> Result<Option<Duration>, String> {
        let Some(rate) = self.message_rate else {
            return Ok(None);
        };
        if !method.is_client_streaming() {
            return Err(format!(
                "--message-rate paces a client stream's messages, and {} takes one message: \
                 drop --message-rate",
                method.full_name()
            ));
        }
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!(
                "--message-rate {rate}: give messages per second above 0"
            ));
        }
        Ok(Some(Duration::from_secs_f64(1.0 / rate)))
    }

    fn headers(&self) -> Result<Vec<(String, String)>, String> {
        let mut h = vec![
            ("content-type".to_owned(), "application/grpc".to_owned()),
            ("te".to_owned(), "trailers".to_owned()),
        ];
        if let Some(d) = self.deadline {
            h.push(("grpc-timeout".to_owned(), timeout(d)?));
        }
        if let Some(m) = &self.metadata {
            h.extend(metadata(m)?);
        }
        Ok(h)
    }

    /// The framed request messages, and the data's templates when it has some.
    fn body(&self, method: &MethodDescriptor) -> Result<(Vec<u8>, Option<crate::Data>), String> {
        let input = method.input();
        let given = [
            self.data.is_some(),
            self.data_file.is_some(),
            self.binary.is_some(),
            self.binary_file.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err("give the request message once: -d, -D, -b or -B".into());
        }
        let read = |p: &PathBuf, flag: &str| {
            std::fs::read(p).map_err(|e| format!("cannot read {flag} {}: {e}", p.display()))
        };
        let binary = match (&self.binary, &self.binary_file) {
            (Some(b), _) => Some(b.clone()),
            (None, Some(p)) => Some(read(p, "-B")?),
            _ => None,
        };
        if let Some(bytes) = binary {
            DynamicMessage::decode(input.clone(), bytes.as_slice()).map_err(|e| {
                format!(
                    "the binary data is not a {} message: {e}",
                    input.full_name()
                )
            })?;
            return Ok((frame::encode(&bytes), None));
        }
        let (json, flag) = match (&self.data, &self.data_file) {
            (Some(d), _) => (d.clone(), "-d"),
            (None, Some(p)) => (
                String::from_utf8(read(p, "-D")?)
                    .map_err(|_| format!("-D {}: the data is not UTF-8 text", p.display()))?,
                "-D",
            ),
            (None, None) => ("{}".to_owned(), "-d"),
        };
        match crate::Data::parse(&json, method, flag)? {
            Some(data) => Ok((data.first()?, Some(data))),
            None => Ok((crate::message::encode_json(method, &json, flag)?, None)),
        }
    }
}

/// The service a call names (`helloworld.Greeter` of `helloworld.Greeter/SayHello`).
fn service(call: &str) -> &str {
    let at = call
        .rfind('/')
        .or_else(|| call.rfind('.'))
        .unwrap_or(call.len());
    call[..at].trim_start_matches('/')
}

/// `grpc-timeout`: at most 8 digits and a unit (gRPC over HTTP/2), the finest that fits.
fn timeout(d: Duration) -> Result<String, String> {
    if d.is_zero() {
        return Err("--deadline must be above 0 (e.g. --deadline 500ms)".into());
    }
    let units = [
        (d.as_nanos(), "n"),
        (d.as_micros(), "u"),
        (d.as_millis(), "m"),
        (u128::from(d.as_secs()), "S"),
    ];
    let (n, unit) = units
        .into_iter()
        .find(|(n, _)| *n < 100_000_000)
        .unwrap_or((u128::from(d.as_secs() / 3600).min(99_999_999), "H"));
    Ok(format!("{n}{unit}"))
}

/// `-m '{"key": "value"}'`: each pair a header field, names in lower case.
fn metadata(text: &str) -> Result<Vec<(String, String)>, String> {
    let bad = |why: &str| {
        format!("-m {text:?}: {why}; give a JSON object of strings, e.g. -m '{{\"authorization\": \"Bearer x\"}}'")
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let serde_json::Value::Object(map) = value else {
        return Err(bad("not a JSON object"));
    };
    map.into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.to_ascii_lowercase(), s)),
            other => Ok((k.to_ascii_lowercase(), other.to_string())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{tempdir, GREETER};

    fn spec(data: &str) -> CallSpec {
        let dir = tempdir();
        let proto = dir.join("helloworld.proto");
        std::fs::write(&proto, GREETER).unwrap();
        CallSpec {
            proto: Some(proto),
            call: "helloworld.Greeter/SayHello".into(),
            data: Some(data.into()),
            ..CallSpec::default()
        }
    }

    #[test]
    fn json_data_becomes_one_framed_message() {
        let call = spec(r#"{"name": "x", "times": 3}"#).compile().unwrap();
        assert_eq!(call.path, "/helloworld.Greeter/SayHello");
        assert_eq!(call.name(), "helloworld.Greeter/SayHello");
        // field 1 "x", field 2 varint 3
        assert_eq!(call.body, [0, 0, 0, 0, 5, 0x0a, 1, b'x', 0x10, 3]);
        assert_eq!(call.headers[0].1, "application/grpc");
        assert_eq!(call.reply().full_name(), "helloworld.HelloReply");
    }

    #[test]
    fn bad_data_says_what_is_wrong() {
        let e = spec(r#"{"nome": "x"}"#).compile().unwrap_err();
        assert!(
            e[0].contains("not a helloworld.HelloRequest message"),
            "{e:?}"
        );
        let e = spec("{name").compile().unwrap_err();
        assert!(e[0].contains("not JSON"), "{e:?}");
        let e = spec("[{}]").compile().unwrap_err();
        assert!(e[0].contains("takes one message"), "{e:?}");
        let e = spec(r#"{"name": "{{uuid()}}"}"#).compile().unwrap_err();
        assert!(e[0].contains("is not a template"), "{e:?}");
        let mut s = spec("{}");
        s.binary = Some(vec![0xff]);
        assert!(s.compile().unwrap_err()[0].contains("once"));
        s.data = None;
        assert!(s.compile().unwrap_err()[0].contains("binary data is not"));
        s.binary = Some(vec![0x0a, 1, b'y']);
        assert_eq!(s.compile().unwrap().body, [0, 0, 0, 0, 3, 0x0a, 1, b'y']);
    }

    #[test]
    fn metadata_and_deadline_are_header_fields() {
        let mut s = spec("{}");
        s.metadata = Some(r#"{"Authorization": "Bearer t", "n": 1}"#.into());
        s.deadline = Some(Duration::from_millis(250));
        let call = s.compile().unwrap();
        let h: Vec<(&str, &str)> = call
            .headers
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert!(h.contains(&("authorization", "Bearer t")), "{h:?}");
        assert!(h.contains(&("n", "1")) && h.contains(&("te", "trailers")));
        assert!(h.contains(&("grpc-timeout", "250000u")), "{h:?}");
        s.metadata = Some("[1]".into());
        assert!(s.compile().unwrap_err()[0].contains("JSON object"));
        assert_eq!(
            timeout(Duration::from_secs(3600 * 24 * 365 * 10)).unwrap(),
            "87600H"
        );
        assert_eq!(timeout(Duration::from_secs(20)).unwrap(), "20000000u");
        assert!(timeout(Duration::ZERO).is_err());
    }

    #[test]
    fn a_missing_call_and_a_missing_proto_are_both_told() {
        let s = CallSpec::default();
        let e = s.compile().unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
    }
}
