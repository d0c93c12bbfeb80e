//! A toxic as toxiproxy's API shows it: name, type, stream, toxicity and attributes.
//!
//! Attributes are read as toxiproxy's Go server reads them (`encoding/json` into a struct):
//! unknown keys are ignored, missing ones keep their value (zero for a new toxic, the old
//! value on an update), and a value of the wrong type is refused with a message.

use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::h2_fault::H2Fault;
use crate::http_fault::HttpFault;

/// Which way the bytes a toxic acts on travel: toxiproxy's `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Client to server.
    Upstream,
    /// Server to client (toxiproxy's default).
    Downstream,
}

impl Stream {
    pub fn parse(s: &str) -> Option<Stream> {
        match s.to_ascii_lowercase().as_str() {
            "upstream" | "up" => Some(Stream::Upstream),
            "downstream" | "down" => Some(Stream::Downstream),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Upstream => "upstream",
            Stream::Downstream => "downstream",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Stream::Upstream => 0,
            Stream::Downstream => 1,
        }
    }
}

/// What a toxic does, with toxiproxy's attribute names and units (milliseconds unless said).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Each chunk waits `latency` ± `jitter` ms after it arrived.
    Latency { latency: i64, jitter: i64 },
    /// At most `rate` KB/s (1 KB = 1000 bytes); 0 means no limit.
    Bandwidth { rate: i64 },
    /// The close waits `delay` ms.
    SlowClose { delay: i64 },
    /// Data is dropped; after `timeout` ms (0: never) the connection is closed.
    Timeout { timeout: i64 },
    /// At the first data, wait `timeout` ms then reset the connection (TCP RST).
    ResetPeer { timeout: i64 },
    /// Chunks cut into slices of `average_size` ± `size_variation` bytes, `delay` µs apart.
    Slicer {
        average_size: i64,
        size_variation: i64,
        delay: i64,
    },
    /// The connection is closed once `bytes` went through.
    LimitData { bytes: i64 },
    /// Each chunk is dropped with `loss_rate`, plus `correlation` after a dropped one.
    PacketLoss { loss_rate: f64, correlation: f64 },
    /// herd's own: HTTP/1.1-aware faults on responses, by method and path (`http_fault`).
    Http(Box<HttpFault>),
    /// herd's own: HTTP/2 (h2c) stream resets and GOAWAY, by method and path (`h2_fault`).
    Http2(Box<H2Fault>),
}

impl Kind {
    /// A new toxic of a type, before its attributes are read; `None` for an unknown type.
    pub fn of_type(name: &str) -> Option<Kind> {
        Some(match name {
            "latency" => Kind::Latency {
                latency: 0,
                jitter: 0,
            },
            "bandwidth" => Kind::Bandwidth { rate: 0 },
            "slow_close" => Kind::SlowClose { delay: 0 },
            "timeout" => Kind::Timeout { timeout: 0 },
            "reset_peer" => Kind::ResetPeer { timeout: 0 },
            "slicer" => Kind::Slicer {
                average_size: 0,
                size_variation: 0,
                delay: 0,
            },
            "limit_data" => Kind::LimitData { bytes: 0 },
            "packet_loss" => Kind::PacketLoss {
                loss_rate: 0.1,
                correlation: 0.0,
            },
            "http" => Kind::Http(Box::default()),
            "http2" => Kind::Http2(Box::default()),
            _ => return None,
        })
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Latency { .. } => "latency",
            Kind::Bandwidth { .. } => "bandwidth",
            Kind::SlowClose { .. } => "slow_close",
            Kind::Timeout { .. } => "timeout",
            Kind::ResetPeer { .. } => "reset_peer",
            Kind::Slicer { .. } => "slicer",
            Kind::LimitData { .. } => "limit_data",
            Kind::PacketLoss { .. } => "packet_loss",
            Kind::Http(_) => "http",
            Kind::Http2(_) => "http2",
        }
    }

    /// Reads the attributes given over the current values.
    pub fn apply(&mut self, attrs: &Map<String, Value>) -> Result<(), ApiError> {
        let int = |key: &str, slot: &mut i64| -> Result<(), ApiError> {
            match attrs.get(key) {
                None | Some(Value::Null) => Ok(()),
                Some(v) => match v.as_i64().or_else(|| whole(v)) {
                    Some(n) => {
                        *slot = n;
                        Ok(())
                    }
                    None => Err(ApiError::bad_body(format!(
                        "attribute {key} must be a whole number, got {v}"
                    ))),
                },
            }
        };
        let float = |key: &str, slot: &mut f64| -> Result<(), ApiError> {
            match attrs.get(key) {
                None | Some(Value::Null) => Ok(()),
                Some(v) => match v.as_f64() {
                    Some(n) if (0.0..=1.0).contains(&n) => {
                        *slot = n;
                        Ok(())
                    }
                    _ => Err(ApiError::bad_body(format!(
                        "attribute {key} must be a number from 0 to 1, got {v}"
                    ))),
                },
            }
        };
        match self {
            Kind::Latency { latency, jitter } => {
                int("latency", latency)?;
                int("jitter", jitter)
            }
            Kind::Bandwidth { rate } => int("rate", rate),
            Kind::SlowClose { delay } => int("delay", delay),
            Kind::Timeout { timeout } | Kind::ResetPeer { timeout } => int("timeout", timeout),
            Kind::Slicer {
                average_size,
                size_variation,
                delay,
            } => {
                int("average_size", average_size)?;
                int("size_variation", size_variation)?;
                int("delay", delay)
            }
            Kind::LimitData { bytes } => int("bytes", bytes),
            Kind::PacketLoss {
                loss_rate,
                correlation,
            } => {
                float("loss_rate", loss_rate)?;
                float("correlation", correlation)
            }
            Kind::Http(fault) => fault.apply(attrs),
            Kind::Http2(fault) => fault.apply(attrs),
        }
    }

    pub fn attributes(&self) -> Value {
        match self {
            Kind::Latency { latency, jitter } => json!({"latency": latency, "jitter": jitter}),
            Kind::Bandwidth { rate } => json!({ "rate": rate }),
            Kind::SlowClose { delay } => json!({ "delay": delay }),
            Kind::Timeout { timeout } | Kind::ResetPeer { timeout } => {
                json!({ "timeout": timeout })
            }
            Kind::Slicer {
                average_size,
                size_variation,
                delay,
            } => json!({
                "average_size": average_size,
                "size_variation": size_variation,
                "delay": delay
            }),
            Kind::LimitData { bytes } => json!({ "bytes": bytes }),
            Kind::PacketLoss {
                loss_rate,
                correlation,
            } => json!({"loss_rate": loss_rate, "correlation": correlation}),
            Kind::Http(fault) => fault.attributes(),
            Kind::Http2(fault) => fault.attributes(),
        }
    }
}

fn whole(v: &Value) -> Option<i64> {
    v.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        .map(|f| f as i64)
}

/// A toxic on a proxy.
#[derive(Clone, Debug, PartialEq)]
pub struct Toxic {
    pub name: String,
    pub stream: Stream,
    /// Probability that a connection gets this toxic, drawn once per connection.
    pub toxicity: f32,
    pub kind: Kind,
}

impl Toxic {
    /// A toxic from the body of `POST /proxies/{p}/toxics` (or a populate file's entry), with
    /// toxiproxy's defaults: downstream, toxicity 1, name `{type}_{stream}`.
    pub fn from_json(body: &Value) -> Result<Toxic, ApiError> {
        let obj = body
            .as_object()
            .ok_or_else(|| ApiError::bad_body("a toxic is a JSON object".into()))?;
        let text = |key: &str| -> Result<Option<&str>, ApiError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(v) => Err(ApiError::bad_body(format!(
                    "{key} must be a string, got {v}"
                ))),
            }
        };
        let stream_text = text("stream")?.unwrap_or("downstream");
        let stream = Stream::parse(stream_text).ok_or_else(ApiError::invalid_stream)?;
        let type_name = text("type")?.unwrap_or("");
        let mut kind = Kind::of_type(type_name).ok_or_else(|| ApiError::invalid_type(type_name))?;
        let toxicity = toxicity(obj.get("toxicity"))?.unwrap_or(1.0);
        let name = match text("name")? {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("{type_name}_{}", stream.as_str()),
        };
        if let Some(attrs) = attributes(obj)? {
            kind.apply(attrs)?;
        }
        if matches!(kind, Kind::Http(_) | Kind::Http2(_)) && stream == Stream::Upstream {
            return Err(ApiError::bad_body(format!(
                "an {} toxic acts on responses: its stream is downstream",
                kind.type_name()
            )));
        }
        Ok(Toxic {
            name,
            stream,
            toxicity,
            kind,
        })
    }

    /// `POST/PATCH /proxies/{p}/toxics/{t}`: new attributes and toxicity over the old ones.
    pub fn update(&mut self, body: &Value) -> Result<(), ApiError> {
        let obj = body
            .as_object()
            .ok_or_else(|| ApiError::bad_body("a toxic is a JSON object".into()))?;
        let mut kind = self.kind.clone();
        if let Some(attrs) = attributes(obj)? {
            kind.apply(attrs)?;
        }
        if let Some(t) = toxicity(obj.get("toxicity"))? {
            self.toxicity = t;
        }
        self.kind = kind;
        Ok(())
    }

    pub fn to_json(&self) -> Value {
        json!({
            "attributes": self.kind.attributes(),
            "name": self.name,
            "type": self.kind.type_name(),
            "stream": self.stream.as_str(),
            "toxicity": self.toxicity,
        })
    }
}

fn attributes(obj: &Map<String, Value>) -> Result<Option<&Map<String, Value>>, ApiError> {
    match obj.get("attributes") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(ApiError::bad_body(format!(
            "attributes must be an object, got {v}"
        ))),
    }
}

fn toxicity(v: Option<&Value>) -> Result<Option<f32>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => Ok(Some(t as f32)),
            _ => Err(ApiError::bad_body(format!(
                "toxicity must be a number from 0 to 1, got {v}"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_toxiproxys() {
        let t =
            Toxic::from_json(&json!({"type": "latency", "attributes": {"latency": 50}})).unwrap();
        assert_eq!(t.name, "latency_downstream");
        assert_eq!(t.stream, Stream::Downstream);
        assert_eq!(t.toxicity, 1.0);
        assert_eq!(
            t.kind,
            Kind::Latency {
                latency: 50,
                jitter: 0
            }
        );
        assert_eq!(
            t.to_json(),
            json!({"attributes": {"latency": 50, "jitter": 0}, "name": "latency_downstream",
                   "type": "latency", "stream": "downstream", "toxicity": 1.0})
        );
    }

    #[test]
    fn update_keeps_what_is_not_given() {
        let mut t = Toxic::from_json(
            &json!({"type": "latency", "stream": "upstream", "attributes": {"latency": 50, "jitter": 5}}),
        )
        .unwrap();
        t.update(&json!({"attributes": {"latency": 80}})).unwrap();
        assert_eq!(
            t.kind,
            Kind::Latency {
                latency: 80,
                jitter: 5
            }
        );
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        let e = Toxic::from_json(&json!({"type": "lag"})).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.message.contains("invalid toxic type"), "{}", e.message);
        let e = Toxic::from_json(&json!({"type": "latency", "stream": "sideways"})).unwrap_err();
        assert!(e.message.contains("stream was invalid"), "{}", e.message);
        let e = Toxic::from_json(&json!({"type": "latency", "attributes": {"latency": "50ms"}}))
            .unwrap_err();
        assert!(
            e.message.contains("latency must be a whole number"),
            "{}",
            e.message
        );
        let e = Toxic::from_json(&json!({"type": "latency", "toxicity": 2})).unwrap_err();
        assert!(e.message.contains("toxicity"), "{}", e.message);
        let e = Toxic::from_json(&json!({"type": "http2", "stream": "upstream"})).unwrap_err();
        assert!(
            e.message.contains("an http2 toxic acts on responses"),
            "{}",
            e.message
        );
        let e = Toxic::from_json(&json!({"type": "http2", "attributes": {"action": "boom"}}))
            .unwrap_err();
        assert!(e.message.contains("rst_stream"), "{}", e.message);
    }
}
