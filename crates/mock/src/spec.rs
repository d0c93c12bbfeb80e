//! The `--route` mini-language: a path, then `key=value` options separated by spaces.
//!
//! ```text
//! spec       = path *( " " option )
//! path       = "/" ...            exact path, or a prefix when it ends in "*"  (/api/*, /*)
//! option     = "method=" METHOD                   GET, POST, ... (case-insensitive)
//!            | "latency=" latency
//!            | "size=" INT [ "b" | "kb" | "kib" | "mb" | "mib" ]   kb = 1000 B, kib = 1024 B
//!            | "status=" 200..599
//!            | "error-rate=" ( 0..1 | PERCENT "%" )
//!            | "fault=" ( "reset" | "close" | "stall" | "garbage" | "truncate" | "refuse" )
//!            | "header=" NAME ":" VALUE           repeatable; VALUE has no spaces
//!            | "echo"                             answer with the request itself
//!            | "auth=hmac:" KEY                   401 unless `Authorization: Bearer JWT`, an
//!                                                 HS256 JWT signed with KEY (exp honoured)
//!            | "goaway-after=" INT                 HTTP/2: GOAWAY after INT of its requests
//!            | "max-streams=" INT                  HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS
//!            | "close-after=" INT                  HTTP/1.1: after INT answers on a connection,
//!                                                 close it under the next request, unanswered
//!                                                 and unannounced (tinyproxy, a keep-alive race)
//!            | "sse" | "sse=llm"                  HTTP/1.1: answer with Server-Sent Events, or
//!                                                 an OpenAI-style streamed chat completion
//!            | "ttft=" latency                    with sse: before the first event
//!            | "itl=" latency                     with sse: between events
//!            | "tokens=" INT                      with sse: events per stream (default 10)
//!            | "slots=" INT                       with sse: streams generating at once, server-
//!                                                 wide; the rest wait for a slot before their
//!                                                 first event (a model server's batch)
//!            | "grpc"                             match gRPC calls to the path (and only them):
//!                                                 /herd.echo.Echo/*, /helloworld.Greeter/*
//!            | "grpc-status=" CODE *( "," CODE ) | "grpc-status=all"
//!                                                 with grpc: what the failing share ends with,
//!                                                 codes in turn (0..16 or names: unavailable)
//!            | "ws"                               a WebSocket (HTTP/1.1's Upgrade, or HTTP/2's
//!                                                 extended CONNECT) echoing each message
//!                                                 after latency; fault=close sends close
//!                                                 code 1011, fault=stall stops answering
//! latency    = "none" | DURATION | "fixed:" DURATION
//!            | "uniform:" MIN ":" MAX | "normal:" MEAN ":" STDDEV
//!            | "lognormal:" MEDIAN ":" SIGMA | "exp:" MEAN
//! DURATION   = DECIMAL ( "ns" | "us" | "ms" | "s" | "m" | "h" )    200ms, 1.8s
//! ```
//!
//! `fault=` (or `grpc-status=`) without `error-rate=` fails every request; `error-rate=` without `fault=` answers
//! that share with 500 (a gRPC route: with `grpc-status`, or INTERNAL). On a gRPC route,
//! `fault=garbage` is a reply message that does not decode.

use std::fmt;

use crate::latency::{parse_duration, Latency};
use crate::route::{Auth, Fault, Route, HELLO};
use crate::MockError;

const OPTIONS: &str =
    "method, latency, size, status, error-rate, fault, header, echo, auth, goaway-after, max-streams, close-after, sse, ttft, itl, tokens, slots, grpc, grpc-status, ws";
const LATENCIES: &str =
    "none, 50ms, fixed:50ms, uniform:MIN:MAX, normal:MEAN:STDDEV, lognormal:MEDIAN:SIGMA, exp:MEAN";

impl Route {
    /// Parses one `--route` spec, e.g. `/slow latency=lognormal:200ms:0.5 size=10kb`.
    ///
    /// The error names the offending word and lists what is allowed there.
    pub fn parse(spec: &str) -> Result<Route, MockError> {
        parse_spec(spec).map_err(|message| MockError::Spec {
            spec: spec.to_string(),
            message,
        })
    }
}

fn parse_spec(spec: &str) -> Result<Route, String> {
    let mut words = spec.split_whitespace();
    let path = words
        .next()
        .ok_or("empty route spec; write a path and options, e.g. '/api/* latency=50ms'")?;
    if path.contains('=') {
        return Err(format!(
            "a route spec starts with its path, e.g. '/* {path}'"
        ));
    }
    let mut route = Route::new(path);
    let mut seen: Vec<&str> = Vec::new();
    for word in words {
        let (key, value) = match word.split_once('=') {
            Some(kv) => kv,
            None if word == "echo" || word == "sse" || word == "grpc" || word == "ws" => (word, ""),
            None => {
                return Err(format!(
                    "'{word}' is not an option; write key=value, with key one of: {OPTIONS}"
                ))
            }
        };
        if key != "header" {
            if seen.contains(&key) {
                return Err(format!("'{key}' is given twice"));
            }
            seen.push(key);
        }
        if value.is_empty() && key != "echo" && key != "sse" && key != "grpc" && key != "ws" {
            return Err(format!("'{word}' has no value"));
        }
        match key {
            "method" => route.method = Some(value.to_ascii_uppercase()),
            "latency" => {
                route.latency =
                    parse_latency(value).map_err(|e| format!("latency '{value}': {e}"))?
            }
            "size" => route.size = parse_size(value)?,
            "status" => {
                route.status = value
                    .parse()
                    .map_err(|_| format!("status '{value}' is not a number; allowed: 200..599"))?
            }
            "error-rate" => route.error_rate = parse_rate(value)?,
            "fault" => {
                let fault = Fault::from_name(value).ok_or_else(|| {
                    let names: Vec<_> = Fault::ALL.iter().map(|f| f.name()).collect();
                    format!("unknown fault '{value}'; allowed: {}", names.join(", "))
                })?;
                route.fault = Some(fault);
            }
            "header" => {
                let (name, v) = value.split_once(':').ok_or_else(|| {
                    format!("header '{value}' needs NAME:VALUE, e.g. header=X-Mock:yes")
                })?;
                route.headers.push((name.to_string(), v.to_string()));
            }
            "auth" => {
                let key = value.strip_prefix("hmac:").ok_or_else(|| {
                    format!("auth '{value}' is not known; write auth=hmac:KEY (an HS256 JWT signed with KEY in Authorization: Bearer ...)")
                })?;
                route.auth = Some(Auth::Hs256Jwt {
                    key: key.to_string(),
                });
            }
            "goaway-after" => route.goaway_after = Some(parse_count(key, value)?),
            "max-streams" => route.max_streams = Some(parse_count(key, value)?),
            "close-after" => route.close_after = Some(parse_count(key, value)?),
            "sse" | "ttft" | "itl" | "tokens" | "slots" => events(&mut route, key, value)?,
            "grpc" => {
                if !value.is_empty() {
                    return Err(format!("'{word}': grpc takes no value"));
                }
                route.grpc = true;
            }
            "grpc-status" => route.grpc_status = crate::grpc::status::parse_list(value)?,
            "ws" => {
                if !value.is_empty() {
                    return Err(format!("'{word}': ws takes no value"));
                }
                route.websocket = true;
            }
            "echo" => {
                if !value.is_empty() {
                    return Err(format!("'{word}': echo takes no value"));
                }
                route.echo = true;
            }
            _ => {
                return Err(format!(
                    "unknown option '{key}' in '{word}'; allowed: {OPTIONS}"
                ))
            }
        }
    }
    if route.events.is_some() && !seen.contains(&"sse") {
        return Err(
            "ttft, itl, tokens and slots describe an event stream: add sse or sse=llm".into(),
        );
    }
    if (route.fault.is_some() || !route.grpc_status.is_empty()) && !seen.contains(&"error-rate") {
        route.error_rate = 1.0;
    }
    route.check()?;
    Ok(route)
}

/// The options of an event-stream route (`sse`, `sse=llm`, `ttft=`, `itl=`, `tokens=`,
/// `slots=`).
fn events(route: &mut Route, key: &str, value: &str) -> Result<(), String> {
    let events = route
        .events
        .get_or_insert_with(|| crate::Events::new(false));
    match key {
        "sse" => {
            events.llm = match value {
                "" => false,
                "llm" => true,
                _ => {
                    return Err(format!(
                "'sse={value}': write sse (events) or sse=llm (an OpenAI-style chat completion)"
            ))
                }
            }
        }
        "tokens" => events.count = parse_count(key, value)?,
        "slots" => events.slots = Some(parse_count(key, value)?),
        _ => {
            let latency = parse_latency(value).map_err(|e| format!("{key} '{value}': {e}"))?;
            if key == "ttft" {
                events.first = latency;
            } else {
                events.gap = latency;
            }
        }
    }
    Ok(())
}

fn parse_latency(value: &str) -> Result<Latency, String> {
    let mut parts = value.split(':');
    let kind = parts.next().unwrap_or_default();
    let args: Vec<&str> = parts.collect();
    let want = |n: usize, form: &str| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{kind} takes {n} argument(s): {form}"))
        }
    };
    Ok(match kind {
        "none" => {
            want(0, "none")?;
            Latency::None
        }
        _ if kind.starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
            want(0, "a duration such as 50ms")?;
            Latency::Fixed(parse_duration(kind)?)
        }
        "fixed" => {
            want(1, "fixed:50ms")?;
            Latency::Fixed(parse_duration(args[0])?)
        }
        "uniform" => {
            want(2, "uniform:MIN:MAX, e.g. uniform:10ms:50ms")?;
            Latency::Uniform {
                min: parse_duration(args[0])?,
                max: parse_duration(args[1])?,
            }
        }
        "normal" => {
            want(2, "normal:MEAN:STDDEV, e.g. normal:100ms:20ms")?;
            Latency::Normal {
                mean: parse_duration(args[0])?,
                stddev: parse_duration(args[1])?,
            }
        }
        "lognormal" => {
            want(2, "lognormal:MEDIAN:SIGMA, e.g. lognormal:200ms:0.5")?;
            let sigma = args[1].parse().map_err(|_| {
                format!(
                    "sigma '{}' is not a number (lognormal:MEDIAN:SIGMA)",
                    args[1]
                )
            })?;
            Latency::LogNormal {
                median: parse_duration(args[0])?,
                sigma,
            }
        }
        "exp" | "exponential" => {
            want(1, "exp:MEAN, e.g. exp:100ms")?;
            Latency::Exponential {
                mean: parse_duration(args[0])?,
            }
        }
        _ => {
            return Err(format!(
                "unknown distribution '{kind}'; allowed: {LATENCIES}"
            ))
        }
    })
}

fn parse_size(value: &str) -> Result<usize, String> {
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(split);
    let scale: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1000,
        "kib" => 1024,
        "mb" | "m" => 1_000_000,
        "mib" => 1 << 20,
        _ => {
            return Err(format!(
                "size '{value}' has unknown unit '{unit}'; allowed: b, kb, kib, mb, mib"
            ))
        }
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("size '{value}' is not a byte count; write e.g. 512, 10kb or 1mib"))
}

fn parse_count(key: &str, value: &str) -> Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{key} '{value}' is not a count; write a whole number from 1"))
}

fn parse_rate(value: &str) -> Result<f64, String> {
    let bad = || format!("error-rate '{value}' is not a share; write e.g. 0.1 or 10%");
    let rate = match value.strip_suffix('%') {
        Some(pct) => pct.parse::<f64>().map_err(|_| bad())? / 100.0,
        None => value.parse::<f64>().map_err(|_| bad())?,
    };
    if rate.is_finite() {
        Ok(rate)
    } else {
        Err(bad())
    }
}

fn format_size(size: usize) -> String {
    match size {
        0 => "0".into(),
        s if s % (1 << 20) == 0 => format!("{}mib", s >> 20),
        s if s % 1_000_000 == 0 => format!("{}mb", s / 1_000_000),
        s if s % 1024 == 0 => format!("{}kib", s >> 10),
        s if s % 1000 == 0 => format!("{}kb", s / 1000),
        s => s.to_string(),
    }
}

impl fmt::Display for Route {
    /// The spec that [`Route::parse`] reads back into this route, options at their defaults left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        if let Some(m) = &self.method {
            write!(f, " method={m}")?;
        }
        if self.latency != Latency::None {
            write!(f, " latency={}", self.latency)?;
        }
        if self.size != HELLO.len() {
            write!(f, " size={}", format_size(self.size))?;
        }
        if self.status != 200 {
            write!(f, " status={}", self.status)?;
        }
        let fails = self.fault.is_some() || !self.grpc_status.is_empty();
        let implied_rate = if fails { 1.0 } else { 0.0 };
        if self.error_rate != implied_rate {
            write!(f, " error-rate={}", self.error_rate)?;
        }
        if let Some(fault) = self.fault {
            write!(f, " fault={fault}")?;
        }
        for (name, value) in &self.headers {
            write!(f, " header={name}:{value}")?;
        }
        if self.echo {
            f.write_str(" echo")?;
        }
        if let Some(Auth::Hs256Jwt { key }) = &self.auth {
            write!(f, " auth=hmac:{key}")?;
        }
        if let Some(n) = self.goaway_after {
            write!(f, " goaway-after={n}")?;
        }
        if let Some(n) = self.max_streams {
            write!(f, " max-streams={n}")?;
        }
        if let Some(n) = self.close_after {
            write!(f, " close-after={n}")?;
        }
        if let Some(events) = &self.events {
            write!(f, "{events}")?;
        }
        if self.grpc {
            f.write_str(" grpc")?;
        }
        if !self.grpc_status.is_empty() {
            let codes = crate::grpc::status::format_list(&self.grpc_status);
            write!(f, " grpc-status={codes}")?;
        }
        if self.websocket {
            f.write_str(" ws")?;
        }
        Ok(())
    }
}
