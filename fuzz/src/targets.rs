//! The fuzz targets: each takes bytes, feeds them to one of herd's readers through its public
//! entry point, as herd itself would, and may only return (an `Err` is a fine answer).

use herd_engine::{Parse, Response};
use herd_http::ResponseParser;
use herd_logs::source::{parser_for, FormatSpec};
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// HTTP/1.1 responses, pipelined, cut at arbitrary read boundaries: the head parser, the
    /// Content-Length, chunked and read-until-close bodies.
    HttpResponse,
    /// Access log lines in Combined, Common, JSON, and custom nginx and Apache formats (the
    /// first line of the input is the format), analysed as `herd logs` and `herd model` do.
    LogLines,
    /// Workload files: YAML, templates, expressions, data sources, thresholds.
    Workload,
    /// Result JSON read as `herd report`, `compare` and `merge` read it.
    ResultJson,
    /// Prometheus text exposition, as scraped from a server's exporter.
    Exposition,
    /// HAR files as `herd model --har` reads them, and the workload it writes from them
    /// compiled as `herd validate` would.
    Har,
}

const ALL: [Target; 6] = [
    Target::HttpResponse,
    Target::LogLines,
    Target::Workload,
    Target::ResultJson,
    Target::Exposition,
    Target::Har,
];

impl Target {
    pub fn all() -> &'static [Target] {
        &ALL
    }

    pub fn name(self) -> &'static str {
        match self {
            Target::HttpResponse => "http-response",
            Target::LogLines => "log-lines",
            Target::Workload => "workload",
            Target::ResultJson => "result-json",
            Target::Exposition => "exposition",
            Target::Har => "har",
        }
    }

    pub fn by_name(name: &str) -> Option<Target> {
        ALL.iter().copied().find(|t| t.name() == name)
    }

    /// The format's tokens the mutator inserts.
    pub fn dictionary(self) -> &'static [&'static [u8]] {
        match self {
            Target::HttpResponse => &[
                b"HTTP/1.1 ",
                b"HTTP/1.0 ",
                b"\r\n",
                b"\r\n\r\n",
                b"Content-Length: ",
                b"Transfer-Encoding: chunked\r\n",
                b"Transfer-Encoding: gzip, chunked\r\n",
                b"Connection: close\r\n",
                b"Connection: keep-alive\r\n",
                b"0\r\n\r\n",
                b"ffffffffffffffff\r\n",
                b";ext=1",
                b"100 Continue\r\n\r\n",
                b"204 ",
                b"304 ",
                b"\n",
                b"Trailer: x\r\n",
            ],
            Target::LogLines => &[
                b"\"GET /a?q=1 HTTP/1.1\"",
                b" [24/Nov/2026:10:00:00 +0000] ",
                b"\"-\"",
                b" 200 ",
                b"{\"time_iso8601\":\"2026-11-24T10:00:00+00:00\",",
                b"\"request\":",
                b"\\\"",
                b"\\u0000",
                b"$request_time",
                b"$msec",
                b"%h %l %u %t \"%r\" %>s %b",
                b"%{ms}T",
                b"log_format x escape=json '",
                b"/items/123",
                b"%00",
                b"\n",
            ],
            Target::Workload => &[
                b"{{",
                b"}}",
                b"{{ users.name }}",
                b"jwt_hs256(",
                b"concat(",
                b"random_int(1, ",
                b"env('HOME')",
                b"\n  - ",
                b": ",
                b"stages:",
                b"think: ",
                b"extract:",
                b"check:",
                b"json:",
                b"weight: ",
                b"&a ",
                b"*a",
                b"!!str ",
                b"zipf: { n: ",
                b"p99 < ",
                b"'",
                b"\"",
                b"\t",
                b"[",
                b"{",
            ],
            Target::ResultJson => &[
                b"\"kind\":\"run\"",
                b"\"kind\":\"sweep\"",
                b"\"kind\":\"capacity\"",
                b"\"version\":",
                b"null",
                b"true",
                b"[]",
                b"{}",
                b"\"histogram\":\"",
                b"HISTFAAAA",
                b"1e308",
                b"-1",
                b"\"shard\":",
                b"\"",
            ],
            Target::Exposition => &[
                b"# TYPE ",
                b"# HELP ",
                b" counter\n",
                b" gauge\n",
                b" histogram\n",
                b" summary\n",
                b"_bucket{le=\"+Inf\"} ",
                b"{a=\"",
                b"\\\"",
                b"\\n",
                b"NaN",
                b"+Inf",
                b"-Inf",
                b" 1700000000000",
                b"\n",
                b"_sum ",
                b"_count ",
            ],
            Target::Har => &[
                b"\"startedDateTime\": \"2026-11-25T10:00:00.000Z\"",
                b"\"pageref\": \"page_1\"",
                b"\"_resourceType\": \"document\"",
                b"\"status\": 303",
                b"{\"name\": \"Location\", \"value\": \"/a/1\"}",
                b"{\"name\": \"Set-Cookie\", \"value\": \"sid=abc123; Path=/\"}",
                b"{\"name\": \"Authorization\", \"value\": \"Bearer t0k3n\"}",
                b"\"mimeType\": \"application/json\"",
                b"\"mimeType\": \"application/x-www-form-urlencoded\"",
                b"\"encoding\": \"base64\"",
                b"<input name=\\\"csrf\\\" value=\\\"c5rf70ken\\\">",
                b"{{",
                b"null",
                b"\"http://127.0.0.1:8080/orders/98123?x=1\"",
            ],
        }
    }

    pub fn run(self, input: &[u8]) {
        match self {
            Target::HttpResponse => http_response(input),
            Target::LogLines => log_lines(input),
            Target::Workload => workload(input),
            Target::ResultJson => result_json(input),
            Target::Exposition => {
                let _ = herd_monitor::exposition::parse(&String::from_utf8_lossy(input));
            }
            Target::Har => {
                // The workload's target is 127.0.0.1 whatever the file says, so nothing is resolved.
                let o = herd_har::Options {
                    target: Some("http://127.0.0.1:8080".into()),
                    ..herd_har::Options::default()
                };
                if let Ok(m) = herd_har::model(input, &o) {
                    let _ = herd_workload::Workload::compile(
                        &m.yaml,
                        Path::new("har.yaml"),
                        Path::new("."),
                    );
                }
            }
        }
    }
}

/// The first byte picks HEAD or not, keeping the body or not, and where reads are cut; the
/// rest is what the server sent. Driven as the engine drives a connection: unconsumed bytes are
/// fed again with what arrives next, a complete response makes way for the next, and the close
/// ends it all.
fn http_response(input: &[u8]) {
    let Some((&flags, wire)) = input.split_first() else {
        return;
    };
    let step = 1 + (flags >> 2) as usize;
    let new = || ResponseParser::new(flags & 1 == 1, flags & 2 == 2);
    let mut parser = new();
    let mut resp = Response::default();
    let mut pending: Vec<u8> = Vec::new();
    // One instant for every read: an event stream's gaps read 0, which is all a fuzzer needs.
    let now = std::time::Instant::now();
    for chunk in wire.chunks(step) {
        pending.extend_from_slice(chunk);
        loop {
            match parser.feed(&pending, now, &mut resp) {
                Ok((used, done)) => {
                    assert!(used <= pending.len(), "consumed more than it was given");
                    pending.drain(..used);
                    if !done {
                        break;
                    }
                    parser = new();
                    resp = Response::default();
                    if pending.is_empty() {
                        break;
                    }
                }
                Err(_) => return,
            }
        }
    }
    let _ = parser.closed(&pending, &mut resp);
}

fn log_lines(input: &[u8]) {
    let Some((&pick, text)) = input.split_first() else {
        return;
    };
    let mut lines = text.split(|&b| b == b'\n');
    let spec = match pick % 6 {
        0 => FormatSpec::Combined,
        1 => FormatSpec::Common,
        2 => FormatSpec::Json,
        3 => FormatSpec::Auto,
        n => {
            let format = String::from_utf8_lossy(lines.next().unwrap_or_default()).into_owned();
            let spec = if n == 4 { "nginx:" } else { "apache:" };
            match FormatSpec::parse(&format!("{spec}{format}")) {
                Ok(s) => s,
                Err(_) => return,
            }
        }
    };
    let lines: Vec<&[u8]> = lines.collect();
    let sample: Vec<Vec<u8>> = lines.iter().take(20).map(|l| l.to_vec()).collect();
    let Ok((mut parser, _)) = parser_for(&spec, None, &sample) else {
        return;
    };
    let mut analyzer = herd_logs::analysis::Analyzer::new(&[], 1800);
    for line in lines {
        if let Ok(record) = parser.parse(line) {
            analyzer.add(&record);
        }
    }
    let report = analyzer.finish(&Default::default());
    let options = herd_logs::model::ModelOptions {
        target: "http://127.0.0.1:8080".into(),
        scenarios: None,
        scale: 1.0,
        duration: "10m".into(),
        data: herd_logs::model::DataChoice::Auto,
        assets: false,
        open: pick & 8 == 8,
    };
    let _ = herd_logs::model::render(&report, &options);
}

/// Every URL's host becomes 127.0.0.1 and the device and process file systems are out of
/// reach: compiling resolves the target and reads CSV files, and a fuzzer must neither query
/// DNS nor read /dev/zero forever.
fn offline(text: &str) -> Option<String> {
    if ["/dev", "/proc", "/sys"].iter().any(|p| text.contains(p)) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let end = rest
            .find(|c: char| "/:'\"}], \n\t?#".contains(c))
            .unwrap_or(rest.len());
        out.push_str("127.0.0.1");
        rest = &rest[end..];
    }
    out.push_str(rest);
    Some(out)
}

fn workload(input: &[u8]) {
    let Some(text) = offline(&String::from_utf8_lossy(input)) else {
        return;
    };
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    if let Ok(w) = herd_workload::Workload::compile(&text, Path::new("fuzz.yaml"), &base) {
        let _ = w.plan(1);
        let _ = w.describe();
    }
}

fn result_json(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let Ok(doc) = herd_result::parse_document(&text, "fuzz.json") else {
        return;
    };
    if let herd_result::Document::Run(run) = doc {
        let mut out = String::new();
        let _ = herd_report::render_text(&run, &mut out);
        let _ = writeln!(out);
        let _ = herd_compare::compare(&[("a".into(), &run), ("b".into(), &run)], 5.0);
        let mut merge = herd_result::merge::Merge::new();
        merge.add("a.json", (*run).clone());
        merge.add("b.json", *run);
        let _ = merge.finish();
    }
}
