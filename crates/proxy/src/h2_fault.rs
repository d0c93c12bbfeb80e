//! herd's HTTP/2-aware toxic (type `http2`, beyond toxiproxy): on an h2c connection (HTTP/2
//! with prior knowledge), streams chosen by method and path are reset (RST_STREAM with an
//! error code) or end the connection with a GOAWAY, at a rate, after the first N, or for the
//! first N of each connection. How the proxy follows the connection's frames is `h2_follow`.

use rand::rngs::SmallRng;
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::request::{apply_choice, bad_attribute, pattern_matches, Req};

/// What a hit stream gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H2Action {
    /// The server answers; the client gets the response without its end, then RST_STREAM
    /// with the code.
    RstStream,
    /// The client gets GOAWAY naming the last stream the server got; the hit stream and those
    /// after it never reach the server, and the connection closes once the others are answered.
    Goaway,
}

/// The attributes of an `http2` toxic.
#[derive(Clone, Debug, PartialEq)]
pub struct H2Fault {
    /// `rst_stream` or `goaway`.
    pub action: H2Action,
    /// Only requests with this method ("" for any).
    pub method: String,
    /// Only these paths: exact, or a prefix ending in `*` ("" for any).
    pub path: String,
    /// Share of candidate streams hit.
    pub rate: f64,
    /// The first N matching streams of each connection pass untouched.
    pub after: u64,
    /// Only the N matching streams after those are candidates (0: all).
    pub first: u64,
    /// The HTTP/2 error code sent (RFC 9113 section 7); by default INTERNAL_ERROR for a
    /// reset, NO_ERROR for a GOAWAY.
    pub error_code: Option<u32>,
}

impl Default for H2Fault {
    fn default() -> H2Fault {
        H2Fault {
            action: H2Action::RstStream,
            method: String::new(),
            path: String::new(),
            rate: 1.0,
            after: 0,
            first: 0,
            error_code: None,
        }
    }
}

/// What the fault does to one stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct H2Hit {
    pub action: H2Action,
    pub code: u32,
}

/// RFC 9113 section 7's codes by name, as `error_code` may give them.
const CODES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

impl H2Fault {
    pub fn apply(&mut self, attrs: &Map<String, Value>) -> Result<(), ApiError> {
        let bad = bad_attribute;
        for (k, v) in attrs {
            if apply_choice(k, v, &mut self.method, &mut self.path, &mut self.rate)? {
                continue;
            }
            let count = || {
                v.as_u64()
                    .or_else(|| {
                        v.as_f64()
                            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                            .map(|f| f as u64)
                    })
                    .ok_or_else(|| bad(k, "a whole number from 0", v))
            };
            match k.as_str() {
                "action" => {
                    self.action = match v.as_str().map(str::to_ascii_lowercase).as_deref() {
                        Some("rst_stream" | "reset" | "rst") => H2Action::RstStream,
                        Some("goaway") => H2Action::Goaway,
                        _ => return Err(bad(k, "\"rst_stream\" or \"goaway\"", v)),
                    }
                }
                "after" => self.after = count()?,
                "first" => self.first = count()?,
                "error_code" => {
                    self.error_code = error_code(v).ok_or_else(|| {
                        bad(
                            k,
                            "an HTTP/2 error code (a number, or a name such as REFUSED_STREAM)",
                            v,
                        )
                    })?
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub fn attributes(&self) -> Value {
        json!({
            "action": match self.action {
                H2Action::RstStream => "rst_stream",
                H2Action::Goaway => "goaway",
            },
            "method": self.method, "path": self.path, "rate": self.rate,
            "after": self.after, "first": self.first,
            "error_code": self.code(),
        })
    }

    fn code(&self) -> u32 {
        self.error_code.unwrap_or(match self.action {
            H2Action::RstStream => 0x2,
            H2Action::Goaway => 0x0,
        })
    }

    /// Whether a new stream of the connection is hit; `matched` counts the connection's
    /// matching streams so far (this toxic's own count).
    pub(crate) fn choose(&self, req: &Req, matched: &mut u64, rng: &mut SmallRng) -> Option<H2Hit> {
        if !pattern_matches(&self.method, &self.path, req) {
            return None;
        }
        *matched += 1;
        let nth = matched.checked_sub(self.after).filter(|n| *n > 0)?;
        if self.first > 0 && nth > self.first {
            return None;
        }
        (self.rate >= 1.0 || rng.gen::<f64>() < self.rate).then_some(H2Hit {
            action: self.action,
            code: self.code(),
        })
    }
}

/// `null` (the action's default), a number, or a name (any case).
fn error_code(v: &Value) -> Option<Option<u32>> {
    match v {
        Value::Null => Some(None),
        Value::String(s) => CODES
            .iter()
            .position(|c| c.eq_ignore_ascii_case(s))
            .map(|i| Some(i as u32)),
        _ => v.as_u64().and_then(|n| u32::try_from(n).ok()).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn fault(attrs: Value) -> H2Fault {
        let mut f = H2Fault::default();
        f.apply(attrs.as_object().unwrap()).unwrap();
        f
    }

    fn req(m: &str, p: &str) -> Req {
        Req {
            method: m.into(),
            path: p.into(),
        }
    }

    #[test]
    fn after_and_first_pick_streams_by_their_place_on_the_connection() {
        let f = fault(json!({"after": 2, "first": 3, "path": "/api/*"}));
        let mut rng = SmallRng::seed_from_u64(1);
        let mut matched = 0;
        let hits: Vec<bool> = [
            "/api/1", "/x", "/api/2", "/api/3", "/api/4", "/api/5", "/api/6",
        ]
        .iter()
        .map(|p| f.choose(&req("GET", p), &mut matched, &mut rng).is_some())
        .collect();
        assert_eq!(hits, [false, false, false, true, true, true, false]);
    }

    #[test]
    fn a_rate_hits_about_that_share_and_repeats_with_the_seed() {
        let f = fault(json!({"rate": 0.25, "action": "goaway", "error_code": "enhance_your_calm"}));
        let draw = || {
            let mut rng = SmallRng::seed_from_u64(7);
            let mut matched = 0;
            (0..400)
                .filter_map(|_| f.choose(&req("GET", "/"), &mut matched, &mut rng))
                .collect::<Vec<_>>()
        };
        let hits = draw();
        assert!((60..140).contains(&hits.len()), "{}", hits.len());
        assert_eq!(hits, draw());
        assert_eq!(
            hits[0],
            H2Hit {
                action: H2Action::Goaway,
                code: 0xb
            }
        );
    }

    #[test]
    fn bad_attributes_say_what_is_wrong() {
        let mut f = H2Fault::default();
        for (attrs, says) in [
            (json!({"action": "explode"}), "rst_stream"),
            (json!({"error_code": "NOT_A_CODE"}), "HTTP/2 error code"),
            (json!({"rate": 2}), "from 0 to 1"),
            (json!({"after": -1}), "whole number"),
        ] {
            let e = f.apply(attrs.as_object().unwrap()).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
        }
    }
}
