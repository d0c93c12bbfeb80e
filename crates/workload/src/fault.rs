//! `faults:`: toxics a run adds to a fault proxy (`herd proxy`, or toxiproxy itself) at an
//! instant of its timeline and removes after a while, through the proxy's HTTP API.
//!
//! ```yaml
//! faults:
//!   - { at: 60s, for: 30s, proxy: db, latency: 200ms, thresholds: ["p99 < 400ms"] }
//!   - { at: 2m, for: 10s, proxy: web, http: { status: 503, rate: 0.5 } }
//! ```
//!
//! Each entry names one toxic, its attributes in the file's units (durations with a unit),
//! turned here into toxiproxy's (milliseconds, KB/s, bytes). Windows on the same proxy may not
//! overlap: each window's thresholds and recovery are judged on its own fault alone.

use crate::diag::Diag;
use crate::read::{shown, Fields, Reader};
use crate::yaml::Node;
use herd_result::{Criteria, Criterion};
use serde_json::{json, Map, Value};
use std::time::Duration;

const ENTRY: [&str; 6] = ["at", "for", "proxy", "stream", "toxicity", "thresholds"];
const TOXICS: [&str; 10] = [
    "latency",
    "bandwidth",
    "slow_close",
    "timeout",
    "reset_peer",
    "slicer",
    "limit_data",
    "packet_loss",
    "http",
    "http2",
];
/// `jitter` goes with `latency`; it is an entry key so `latency: 200ms` stays one line.
const EXTRA: [&str; 1] = ["jitter"];
const SLICER: [&str; 3] = ["average_size", "size_variation", "delay"];
const HTTP: [&str; 10] = [
    "method",
    "path",
    "rate",
    "status",
    "retry_after",
    "header_delay",
    "body_delay",
    "truncate",
    "reset",
    "drop_first",
];

const HTTP2: [&str; 7] = [
    "action",
    "method",
    "path",
    "rate",
    "after",
    "first",
    "error_code",
];

/// One window of the timeline with a toxic in force on one proxy.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// From the start of the measurement (timeline second 0, after any warm-up).
    pub at: Duration,
    /// How long the toxic stays (`for:`).
    pub length: Duration,
    /// The proxy's name on the API (`toxiproxy-cli list`).
    pub proxy: String,
    /// toxiproxy's toxic type: `latency`, `http`, ...
    pub toxic: String,
    /// `downstream` (toward the client, toxiproxy's default) or `upstream`.
    pub stream: String,
    pub toxicity: f64,
    /// toxiproxy's attributes of the toxic, in its units.
    pub attributes: Map<String, Value>,
    /// Judged on the seconds inside the window only.
    pub thresholds: Vec<Criterion>,
    /// Where the entry is in the file, for messages found later (an unknown proxy).
    pub line: usize,
}

impl Fault {
    /// The end of the window, from the start of the measurement.
    pub fn end(&self) -> Duration {
        self.at + self.length
    }

    /// A short description: `latency 200 ms on db`.
    pub fn describe(&self) -> String {
        let a = &self.attributes;
        let ms = |k: &str| format!("{} ms", a.get(k).and_then(Value::as_i64).unwrap_or(0));
        let what = match self.toxic.as_str() {
            "latency" => format!("latency {}", ms("latency")),
            "bandwidth" => format!("bandwidth {} KB/s", a["rate"]),
            "slow_close" => format!("slow_close {}", ms("delay")),
            "timeout" | "reset_peer" => format!("{} {}", self.toxic, ms("timeout")),
            "limit_data" => format!("limit_data {} bytes", a["bytes"]),
            "packet_loss" => format!("packet_loss {}", a["loss_rate"]),
            "http" if a.get("status").and_then(Value::as_u64).unwrap_or(0) > 0 => {
                format!("http status {}", a["status"])
            }
            "http2" => format!(
                "http2 {}",
                a.get("action")
                    .and_then(Value::as_str)
                    .unwrap_or("rst_stream")
            ),
            other => other.to_owned(),
        };
        format!("{what} on {}", self.proxy)
    }
}

/// `proxy_api:`: where the proxies' HTTP API listens.
pub fn read_proxy_api(r: &mut Reader, node: &Node) -> Option<String> {
    let url = r.string(node, "proxy_api")?;
    if !url.starts_with("http://") {
        r.report(
            Diag::new(node.at, format!("proxy_api `{url}` is not an http:// URL")).hint(
                "e.g. proxy_api: http://127.0.0.1:8474 (toxiproxy's and herd proxy's default)",
            ),
        );
        return None;
    }
    Some(url)
}

/// `faults:`, every entry checked; windows on one proxy must not overlap.
pub fn read_faults(r: &mut Reader, node: &Node) -> Vec<Fault> {
    let mut faults: Vec<Fault> = Vec::new();
    for item in r.seq(node, "faults").unwrap_or_default() {
        if let Some(f) = read_fault(r, item) {
            if let Some(o) = faults
                .iter()
                .find(|o| o.proxy == f.proxy && o.at < f.end() && f.at < o.end())
            {
                r.report(
                    Diag::new(
                        item.at,
                        format!(
                            "this fault on `{}` overlaps the one at line {} (both in force from {})",
                            f.proxy,
                            o.line,
                            humantime::format_duration(o.at.max(f.at))
                        ),
                    )
                    .hint("start it after the other ends: each window's thresholds and recovery are judged on one fault"),
                );
                continue;
            }
            faults.push(f);
        }
    }
    faults
}

fn read_fault(r: &mut Reader, node: &Node) -> Option<Fault> {
    let known: Vec<&str> = ENTRY.iter().chain(&TOXICS).chain(&EXTRA).copied().collect();
    let f = r.fields(node, "a fault", &known)?;
    let at = required(r, &f, node, "at", "e.g. at: 60s").and_then(|n| r.duration(n, "at"));
    let length = required(r, &f, node, "for", "e.g. for: 30s").and_then(|n| {
        let d = r.duration(n, "for")?;
        if d.is_zero() {
            r.error(n.at, "a fault `for: 0s` would never be in force");
            return None;
        }
        Some(d)
    });
    let proxy = required(
        r,
        &f,
        node,
        "proxy",
        "e.g. proxy: db (a name `toxiproxy-cli list` shows)",
    )
    .and_then(|n| r.string(n, "proxy"));
    let stream = match f.get("stream") {
        None => Some("downstream".to_owned()),
        Some(s) => match r.string(s, "stream").as_deref() {
            Some(v @ ("upstream" | "downstream")) => Some(v.to_owned()),
            Some(other) => {
                r.report(
                    Diag::new(s.at, format!("stream `{other}` is not known"))
                        .hint("write stream: downstream (toward the client, the default) or stream: upstream"),
                );
                None
            }
            None => None,
        },
    };
    let toxicity = match f.get("toxicity") {
        None => Some(1.0),
        Some(t) => share(r, t, "toxicity"),
    };
    let toxic = read_toxic(r, &f, node);
    let thresholds = f
        .get("thresholds")
        .map(|t| read_window_thresholds(r, t))
        .unwrap_or_default();
    let (toxic, attributes) = toxic?;
    Some(Fault {
        at: at?,
        length: length?,
        proxy: proxy?,
        toxic,
        stream: stream?,
        toxicity: toxicity?,
        attributes,
        thresholds,
        line: node.at.line,
    })
}

fn required<'n>(
    r: &mut Reader,
    f: &Fields<'n>,
    node: &Node,
    key: &str,
    hint: &str,
) -> Option<&'n Node> {
    let n = f.get(key);
    if n.is_none() {
        r.report(Diag::new(node.at, format!("a fault needs `{key}`")).hint(hint));
    }
    n
}

/// The one toxic key of an entry, and its attributes in toxiproxy's units.
fn read_toxic(r: &mut Reader, f: &Fields, node: &Node) -> Option<(String, Map<String, Value>)> {
    let given: Vec<&str> = TOXICS.iter().copied().filter(|k| f.has(k)).collect();
    let kind = match given.as_slice() {
        [one] => *one,
        [] => {
            r.report(Diag::new(node.at, "a fault needs a toxic").hint(format!(
                "one of: {} (e.g. latency: 200ms)",
                TOXICS.join(", ")
            )));
            return None;
        }
        more => {
            r.report(
                Diag::new(
                    node.at,
                    format!("a fault has one toxic, this one has {}", more.join(" and ")),
                )
                .hint("write one entry per toxic, on different proxies or at different times"),
            );
            return None;
        }
    };
    let v = f.get(kind)?;
    if f.has("jitter") && kind != "latency" {
        r.error(f.get("jitter")?.at, "`jitter` goes with a `latency` toxic");
    }
    let attributes = match kind {
        "latency" => {
            let jitter = match f.get("jitter") {
                Some(j) => ms(r, j, "jitter")?,
                None => 0,
            };
            json!({"latency": ms(r, v, "latency")?, "jitter": jitter})
        }
        "bandwidth" => json!({"rate": r.count(v, "bandwidth (KB/s)")?}),
        "slow_close" => json!({"delay": ms(r, v, "slow_close")?}),
        "timeout" => json!({"timeout": ms(r, v, "timeout")?}),
        "reset_peer" => json!({"timeout": ms(r, v, "reset_peer")?}),
        "limit_data" => json!({"bytes": r.count(v, "limit_data (bytes)")?}),
        "packet_loss" => json!({"loss_rate": share(r, v, "packet_loss")?, "correlation": 0.0}),
        "slicer" => read_slicer(r, v)?,
        "http2" => read_http2(r, v)?,
        _ => read_http(r, v)?,
    };
    match attributes {
        Value::Object(m) => Some((kind.to_owned(), m)),
        _ => None,
    }
}

fn read_slicer(r: &mut Reader, v: &Node) -> Option<Value> {
    let s = r.fields(v, "slicer", &SLICER)?;
    let mut out = json!({"average_size": 0, "size_variation": 0, "delay": 0});
    for (k, n) in s.entries() {
        let key = k.scalar().unwrap_or_default();
        // toxiproxy's slicer delay is in microseconds.
        let value = match key {
            "delay" => r.duration(n, "delay").map(|d| d.as_micros() as u64),
            _ => r.count(n, key),
        };
        out[key] = json!(value?);
    }
    Some(out)
}

fn read_http(r: &mut Reader, v: &Node) -> Option<Value> {
    read_request_toxic(r, v, "http", &HTTP, |r, n, key| match key {
        "header_delay" | "body_delay" => ms(r, n, key).map(Value::from),
        "retry_after" => r.duration(n, key).map(|d| Value::from(d.as_secs())),
        "status" => r.count(n, key).and_then(|s| {
            if (100..=599).contains(&s) {
                Some(Value::from(s))
            } else {
                r.error(
                    n.at,
                    format!("status {s} is not an HTTP status (100 to 599)"),
                );
                None
            }
        }),
        _ => r.count(n, key).map(Value::from),
    })
}

/// herd proxy's `http2` toxic: stream resets or GOAWAY on h2c, by method and path.
fn read_http2(r: &mut Reader, v: &Node) -> Option<Value> {
    read_request_toxic(r, v, "http2", &HTTP2, |r, n, key| match key {
        "action" => match r.string(n, key).as_deref() {
            Some(a @ ("rst_stream" | "goaway")) => Some(Value::from(a)),
            Some(other) => {
                r.report(
                    Diag::new(n.at, format!("http2 action `{other}` is not known"))
                        .hint("write action: rst_stream (the default) or action: goaway"),
                );
                None
            }
            None => None,
        },
        "error_code" => error_code(r, n),
        _ => r.count(n, key).map(Value::from),
    })
}

/// A toxic that chooses requests (`method`, `path`, `rate`, read here) and reads its own
/// attributes with `own`; every attribute is read (and each mistake said) before `None`.
fn read_request_toxic(
    r: &mut Reader,
    v: &Node,
    kind: &str,
    fields: &[&str],
    mut own: impl FnMut(&mut Reader, &Node, &str) -> Option<Value>,
) -> Option<Value> {
    let h = r.fields(v, kind, fields)?;
    let mut out = Map::new();
    let mut ok = true;
    for (k, n) in h.entries() {
        let key = k.scalar().unwrap_or_default();
        let value = match key {
            "method" | "path" => r.string(n, key).map(Value::from),
            "rate" => share(r, n, key).map(Value::from),
            _ => own(r, n, key),
        };
        match value {
            Some(v) => {
                out.insert(key.to_owned(), v);
            }
            None => ok = false,
        }
    }
    ok.then_some(Value::Object(out))
}

/// An HTTP/2 error code: a number, or its name in RFC 9113 (`REFUSED_STREAM`).
fn error_code(r: &mut Reader, n: &Node) -> Option<Value> {
    let text = n.scalar().unwrap_or_default().trim();
    if let Ok(code) = text.parse::<u32>() {
        return Some(Value::from(code));
    }
    let name = text.to_ascii_uppercase();
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        return Some(Value::from(name));
    }
    r.report(
        Diag::new(
            n.at,
            format!("error_code `{text}` is not an HTTP/2 error code"),
        )
        .hint("a number or a name: INTERNAL_ERROR, REFUSED_STREAM, CANCEL, ENHANCE_YOUR_CALM, ..."),
    );
    None
}

/// A duration in whole milliseconds, as toxiproxy takes them.
fn ms(r: &mut Reader, n: &Node, what: &str) -> Option<u64> {
    r.duration(n, what).map(|d| d.as_millis() as u64)
}

/// A share from 0 to 1, or a percentage (`10%`).
fn share(r: &mut Reader, n: &Node, what: &str) -> Option<f64> {
    let text = n.scalar().unwrap_or_default().trim();
    let v = match text.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
        None => text.parse::<f64>().ok(),
    };
    match v.filter(|v| (0.0..=1.0).contains(v)) {
        Some(v) => Some(v),
        None => {
            r.report(
                Diag::new(
                    n.at,
                    format!("{what} must be a share from 0 to 1, not `{}`", shown(n)),
                )
                .hint("e.g. 0.1 or 10%"),
            );
            None
        }
    }
}

/// A window's own thresholds: the run's grammar, judged on the window's seconds (which keep no
/// figures by request name, so a name is refused).
fn read_window_thresholds(r: &mut Reader, t: &Node) -> Vec<Criterion> {
    let mut out = Vec::new();
    for n in r.seq(t, "thresholds").unwrap_or_default() {
        let Some(text) = r.string(n, "a threshold") else {
            continue;
        };
        match Criteria::parse(&text) {
            Ok(c) => {
                for th in c.items {
                    if let Some(name) = &th.name {
                        r.report(
                            Diag::new(
                                n.at,
                                format!("threshold `{text}`: a fault window is judged on all requests of its seconds, not on `{name}` alone"),
                            )
                            .hint("drop the name: e.g. \"p99 < 400ms\""),
                        );
                        continue;
                    }
                    out.push(th);
                }
            }
            Err(diags) => {
                for d in diags {
                    let msg = format!("threshold column {}: {}", d.column, d.message);
                    r.report(Diag::new(n.at, msg).hint_opt((!d.hint.is_empty()).then_some(d.hint)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Workload;
    use std::path::Path;

    const HEAD: &str = "target: http://127.0.0.1:1\nload: { model: closed, users: 1, duration: 90s }\nscenarios: [{ name: a, steps: [{ get: / }] }]\n";

    fn compile(faults: &str) -> Result<Workload, String> {
        let src = format!("{HEAD}{faults}");
        Workload::compile(&src, Path::new("w.yaml"), Path::new(".")).map_err(|d| d.to_string())
    }

    fn refused(faults: &str) -> String {
        compile(faults).err().expect("the file is refused")
    }

    #[test]
    fn each_toxic_is_sent_in_toxiproxy_units() {
        let w = compile(
            "proxy_api: http://127.0.0.1:9\nfaults:\n  - { at: 60s, for: 30s, proxy: db, latency: 200ms, jitter: 10ms, thresholds: [\"p99 < 400ms\"] }\n  - { at: 1s, for: 2s, proxy: db, http: { status: 429, retry_after: 3s, header_delay: 1s, rate: 50% } }\n  - { at: 1s, for: 2s, proxy: web, packet_loss: 10%, stream: upstream, toxicity: 0.5 }\n  - { at: 5s, for: 1s, proxy: web, slicer: { average_size: 64, delay: 2ms } }\n",
        )
        .unwrap();
        let f = &w.faults;
        assert_eq!(w.proxy_api.as_deref(), Some("http://127.0.0.1:9"));
        assert_eq!(f[0].toxic, "latency");
        assert_eq!(f[0].attributes["latency"], 200);
        assert_eq!(f[0].attributes["jitter"], 10);
        assert_eq!((f[0].at.as_secs(), f[0].end().as_secs()), (60, 90));
        assert_eq!(f[0].thresholds[0].text, "p99 < 400ms");
        assert_eq!(f[0].line, 6);
        assert_eq!(f[1].attributes["status"], 429);
        assert_eq!(f[1].attributes["retry_after"], 3);
        assert_eq!(f[1].attributes["header_delay"], 1000);
        assert_eq!(f[1].attributes["rate"], 0.5);
        assert_eq!((f[2].stream.as_str(), f[2].toxicity), ("upstream", 0.5));
        assert_eq!(f[2].attributes["loss_rate"], 0.1);
        // toxiproxy's slicer delay is in microseconds.
        assert_eq!(f[3].attributes["delay"], 2000);
        assert_eq!(f[0].describe(), "latency 200 ms on db");
    }

    #[test]
    fn bad_entries_are_refused_at_their_line() {
        let e = refused(
            "faults:\n  - { at: soon, for: 30s, proxy: db, latency: 200ms }\n  - { at: 1s, for: 0s, proxy: db, latency: 1ms }\n  - { at: 1s, for: 1s, latency: 1ms }\n  - { at: 1s, for: 1s, proxy: x, latency: 1ms, bandwidth: 10 }\n  - { at: 1s, for: 1s, proxy: x }\n  - { at: 1s, for: 1s, proxy: y, latncy: 1ms }\n  - { at: 1s, for: 1s, proxy: y, http: { status: 700 } }\n  - { at: 1s, for: 1s, proxy: y, latency: 1ms, thresholds: [\"a: p99 < 1ms\"] }\n",
        );
        for want in [
            "w.yaml:5:",
            "`soon` is not a duration",
            "w.yaml:6:",
            "`for: 0s` would never be in force",
            "w.yaml:7:",
            "a fault needs `proxy`",
            "w.yaml:8:",
            "a fault has one toxic, this one has latency and bandwidth",
            "w.yaml:9:",
            "a fault needs a toxic",
            "unknown key `latncy`",
            "status 700 is not an HTTP status",
            "not on `a` alone",
        ] {
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn an_http2_fault_is_sent_as_herd_proxys_http2_toxic() {
        let w = compile(
            "faults:\n  - { at: 1s, for: 2s, proxy: web, http2: { action: goaway, after: 50, rate: 10%, error_code: enhance_your_calm } }\n  - { at: 5s, for: 1s, proxy: web, http2: { path: /api/*, error_code: 7 } }\n",
        )
        .unwrap();
        let f = &w.faults;
        assert_eq!(f[0].toxic, "http2");
        assert_eq!(f[0].attributes["action"], "goaway");
        assert_eq!(f[0].attributes["after"], 50);
        assert_eq!(f[0].attributes["rate"], 0.1);
        assert_eq!(f[0].attributes["error_code"], "ENHANCE_YOUR_CALM");
        assert_eq!(f[0].describe(), "http2 goaway on web");
        assert_eq!(f[1].attributes["error_code"], 7);
        assert_eq!(f[1].describe(), "http2 rst_stream on web");
        let e = refused(
            "faults:\n  - { at: 1s, for: 1s, proxy: y, http2: { action: explode } }\n  - { at: 3s, for: 1s, proxy: y, http2: { error_code: \"no such\" } }\n",
        );
        assert!(
            e.contains("w.yaml:5:") && e.contains("http2 action `explode`"),
            "{e}"
        );
        assert!(
            e.contains("w.yaml:6:") && e.contains("not an HTTP/2 error code"),
            "{e}"
        );
    }

    #[test]
    fn overlapping_windows_on_one_proxy_are_refused_others_are_not() {
        let e = refused(
            "faults:\n  - { at: 10s, for: 30s, proxy: db, latency: 200ms }\n  - { at: 30s, for: 5s, proxy: db, reset_peer: 0s }\n",
        );
        assert!(
            e.contains("w.yaml:6:") && e.contains("overlaps the one at line 5"),
            "{e}"
        );
        let ok = compile(
            "faults:\n  - { at: 10s, for: 30s, proxy: db, latency: 200ms }\n  - { at: 30s, for: 5s, proxy: web, reset_peer: 0s }\n  - { at: 40s, for: 5s, proxy: db, timeout: 1s }\n",
        );
        assert!(ok.is_ok(), "{ok:?}", ok = ok.err());
    }
}
