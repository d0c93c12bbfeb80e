//! `--prometheus-remote-write URL`: the same series as the endpoint, pushed every few seconds for
//! a generator nobody can scrape (a pod of a distributed run). Remote-write 1.0: a protobuf
//! `WriteRequest`, snappy block format, `X-Prometheus-Remote-Write-Version: 0.1.0` (k6's
//! output does the same). The latency goes as a histogram's bucket counters, never as an averaged
//! p99 gauge. A background thread pushes, so a slow receiver never holds up the run; the last
//! push, with the final counts, is made at the end.

use super::exposition::Exposition;
use super::push::{Endpoint, Format};
use super::pushed::Pushed;
use prost::Message;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const FLAG: &str = "--prometheus-remote-write";

/// How often the series are pushed while the run goes on.
pub const EVERY: Duration = Duration::from_secs(5);

#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// Where to push: `http://HOST[:PORT]/PATH` (`/api/v1/write` when it names none); anything else
/// says why.
pub fn endpoint(url: &str) -> Result<Endpoint, String> {
    Ok(Endpoint::parse(FLAG, url, "/api/v1/write", EXAMPLE)?
        .header("Content-Encoding", "snappy")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0"))
}

const EXAMPLE: &str = "http://127.0.0.1:9090/api/v1/write";

/// The series of `e` as one remote-write request body (protobuf, then snappy).
pub fn body(e: &Exposition, at: SystemTime) -> Vec<u8> {
    let timestamp = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let base = e.base_labels();
    let mut timeseries = Vec::new();
    for f in e.families() {
        for p in f.points {
            let mut labels: Vec<Label> = [("__name__".to_owned(), p.name)]
                .into_iter()
                .chain([("job".to_owned(), "herd".to_owned())])
                .chain(base.iter().cloned())
                .chain(p.labels)
                .map(|(name, value)| Label { name, value })
                .collect();
            // Remote write wants labels sorted by name.
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            timeseries.push(TimeSeries {
                labels,
                samples: vec![Sample {
                    value: p.value,
                    timestamp,
                }],
            });
        }
    }
    let proto = WriteRequest { timeseries }.encode_to_vec();
    snap::raw::Encoder::new()
        .compress_vec(&proto)
        .unwrap_or_default()
}

/// The remote-write output: the endpoint's series pushed as a snappy-compressed `WriteRequest`,
/// each sample stamped with the push's instant.
pub fn remote_write(to: Endpoint) -> Pushed {
    Pushed::new(FLAG, to, FORMAT, EVERY, |e, _start| {
        body(e, SystemTime::now())
    })
}

const FORMAT: Format = Format {
    content_type: "application/x-protobuf",
    complaint: |_| None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_default_to_the_write_path_and_say_snappy() {
        let e = endpoint("http://prom").unwrap();
        assert!(e.has_header("Content-Encoding"));
        assert!(endpoint("prom:9090").unwrap_err().contains(EXAMPLE));
    }

    #[test]
    fn the_body_is_snappy_framed_protobuf_with_sorted_labels() {
        let body = body(&Exposition::default(), UNIX_EPOCH + Duration::from_secs(2));
        let proto = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
        let w = WriteRequest::decode(proto.as_slice()).unwrap();
        let first = &w.timeseries[0];
        assert_eq!(first.samples[0].timestamp, 2_000);
        let names: Vec<&str> = first.labels.iter().map(|l| l.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(names.contains(&"__name__"));
    }
}
