//! `--otlp URL`: the endpoint's series pushed to an OpenTelemetry collector as OTLP/HTTP
//! protobuf (`POST /v1/metrics`, port 4318 by convention) every few seconds and at the end,
//! cumulative like every other output (a lost push loses nothing). Without the flag the standard
//! variables choose the collector, as an OpenTelemetry SDK's exporter reads them:
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` (plus
//! `/v1/metrics`); `OTEL_EXPORTER_OTLP_HEADERS` and `..._METRICS_HEADERS` add headers (a token)
//! to every push, never shown.

mod convert;
pub mod proto;

pub use convert::{name_of, request, Times};

use super::push::{Endpoint, Format};
use super::pushed::Pushed;
use crate::metrics::exposition::Exposition;
use prost::Message;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const FLAG: &str = "--otlp";

/// How often the series are pushed while the run goes on.
pub const EVERY: Duration = Duration::from_secs(5);

const EXAMPLE: &str = "http://127.0.0.1:4318/v1/metrics";

/// Where the pushes go, and what chose it (the flag, or which variable).
#[derive(Clone, Debug)]
pub struct Target {
    pub endpoint: Endpoint,
    pub from: &'static str,
}

/// The collector to push to: `flag` if given, else the standard variables (read by `var`); none
/// when neither names one or the variables turn metrics export off (`OTEL_SDK_DISABLED=true`,
/// `OTEL_METRICS_EXPORTER=none`). A URL or header that cannot be used is refused, its secrets
/// not repeated.
pub fn target(
    flag: Option<&str>,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Target>, String> {
    let var = |name: &str| {
        var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let (endpoint, from) = match flag {
        Some(url) => (Endpoint::parse(FLAG, url, "/v1/metrics", EXAMPLE)?, FLAG),
        None => {
            let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
                || var("OTEL_METRICS_EXPORTER")
                    .is_some_and(|v| !v.split(',').any(|e| e.trim() == "otlp"));
            let signal = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
            let base = "OTEL_EXPORTER_OTLP_ENDPOINT";
            let found = match (var(signal), var(base)) {
                _ if off => return Ok(None),
                (Some(url), _) => (Endpoint::parse(signal, &url, "/", EXAMPLE)?, signal),
                (None, Some(url)) => {
                    let url = format!("{}/v1/metrics", url.trim_end_matches('/'));
                    (Endpoint::parse(base, &url, "/v1/metrics", EXAMPLE)?, base)
                }
                (None, None) => return Ok(None),
            };
            for name in [
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ] {
                match var(name) {
                    Some(p) if p != "http/protobuf" => {
                        return Err(format!(
                            "{name}={p}: herd pushes OTLP as http/protobuf only; point {} at \
                             the collector's OTLP/HTTP port (4318) and unset {name}",
                            found.1
                        ))
                    }
                    Some(_) => break,
                    None => {}
                }
            }
            found
        }
    };
    let mut endpoint = endpoint;
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        for (k, v) in headers(name, &var(name).unwrap_or_default())? {
            endpoint = endpoint.header(&k, &v);
        }
    }
    Ok(Some(Target { endpoint, from }))
}

/// `key1=value1,key2=value2`, values percent-encoded (the W3C Baggage format the OTel spec
/// names). A refusal says which entry, not what it holds: a value is often a token.
fn headers(var: &str, list: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, entry) in list.split(',').enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| {
            format!(
                "{var}: entry {} {why}; write key1=value1,key2=value2",
                i + 1
            )
        };
        let (k, v) = entry
            .split_once('=')
            .ok_or_else(|| bad("is not key=value"))?;
        let k = k.trim();
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if k.is_empty() || !k.chars().all(token) {
            return Err(bad("does not start with a header name"));
        }
        let v = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8()
            .map_err(|_| bad("is not UTF-8 once decoded"))?;
        if v.chars().any(|c| c.is_control()) {
            return Err(bad("holds a control character"));
        }
        out.push((k.to_owned(), v.into_owned()));
    }
    Ok(out)
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

const FORMAT: Format = Format {
    content_type: "application/x-protobuf",
    complaint: rejected,
};

/// A collector may take a push yet reject some of its points (a partial success): that push
/// did not arrive whole.
fn rejected(answer: &[u8]) -> Option<String> {
    let r = proto::ExportMetricsServiceResponse::decode(answer).ok()?;
    let p = r.partial_success?;
    (p.rejected_data_points > 0 || !p.error_message.is_empty()).then(|| {
        format!(
            "the receiver rejected {} data points: {}",
            p.rejected_data_points,
            p.error_message.chars().take(200).collect::<String>()
        )
    })
}

/// The OTLP output: the endpoint's series pushed as OTLP/HTTP protobuf.
pub fn otlp(to: Endpoint) -> Pushed {
    Pushed::new(FLAG, to, FORMAT, EVERY, body)
}

fn body(e: &Exposition, start: SystemTime) -> Vec<u8> {
    let times = Times {
        start: unix_nanos(start),
        now: unix_nanos(SystemTime::now()),
    };
    request(e, times).encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn url(t: Option<Target>) -> (String, &'static str) {
        let t = t.expect("a target");
        (t.endpoint.url, t.from)
    }

    #[test]
    fn the_flag_beats_the_variables_which_follow_the_spec() {
        let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318/")];
        let flag = target(Some("http://flag:4318"), env(&vars)).unwrap();
        assert_eq!(url(flag), ("http://flag:4318/v1/metrics".to_owned(), FLAG));
        let t = target(None, env(&vars)).unwrap().unwrap();
        assert_eq!(t.endpoint.url, "http://env:4318/v1/metrics");
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/custom"),
        ];
        let t = target(None, env(&vars)).unwrap();
        assert_eq!(
            url(t),
            (
                "http://m:9/custom".to_owned(),
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
            )
        );
        assert!(target(None, env(&[])).unwrap().is_none());
    }

    #[test]
    fn the_variables_can_turn_the_export_off_but_not_the_flag() {
        for off in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ] {
            let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"), off];
            assert!(target(None, env(&vars)).unwrap().is_none(), "{off:?}");
            assert!(target(Some("http://f/"), env(&vars)).unwrap().is_some());
        }
    }

    #[test]
    fn a_partial_success_is_a_failed_push() {
        let answer = |rejected: i64| {
            proto::ExportMetricsServiceResponse {
                partial_success: Some(proto::ExportMetricsPartialSuccess {
                    rejected_data_points: rejected,
                    error_message: if rejected > 0 {
                        "bad unit".into()
                    } else {
                        String::new()
                    },
                }),
            }
            .encode_to_vec()
        };
        assert_eq!(
            rejected(&answer(3)).as_deref(),
            Some("the receiver rejected 3 data points: bad unit")
        );
        assert_eq!(rejected(&answer(0)), None);
        assert_eq!(rejected(b""), None);
    }

    #[test]
    fn grpc_is_refused_with_the_port_to_use() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        let err = target(None, env(&vars)).unwrap_err();
        assert!(
            err.contains("http/protobuf only") && err.contains("4318"),
            "{err}"
        );
    }

    #[test]
    fn headers_are_decoded_and_a_bad_one_is_refused_without_its_value() {
        let vars = [(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=s%20ecret, x-team = load",
        )];
        let t = target(Some("http://c/"), env(&vars)).unwrap().unwrap();
        assert!(t.endpoint.has_header("api-key") && t.endpoint.has_header("x-team"));
        assert_eq!(
            headers("H", "api-key=s%20ecret").unwrap(),
            [("api-key".to_owned(), "s ecret".to_owned())]
        );
        let err = headers("H", "a=1,tokensecret").unwrap_err();
        assert!(err.contains("entry 2") && !err.contains("secret"), "{err}");
        assert!(headers("H", "a=x%0D%0AEvil: 1").is_err());
    }
}
