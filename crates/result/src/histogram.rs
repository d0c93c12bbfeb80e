//! Histograms in a result: the exact encoding that lets runs be merged later, and the summary
//! in milliseconds that people read.

use crate::{ReportError, Summary};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::{Counter, Histogram};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The full histograms (microseconds), HdrHistogram V2 + deflate, base64: merge runs exactly or
/// compute any percentile later with [`crate::decode_histogram`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    pub latency: String,
    pub service_time: String,
    pub connect: String,
    /// Requests that got no response, from the intended send to the failure; empty in older
    /// results.
    #[serde(default)]
    pub time_to_error: String,
    /// Each phase's histogram; absent in results written before phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhaseHistograms>,
}

/// The phases' histograms, encoded as [`crate::Histograms`]' others are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseHistograms {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<String>,
    pub tls: String,
    pub blocked: String,
    pub waiting: String,
    pub receiving: String,
}

/// Encodes a histogram as HdrHistogram V2 + deflate, base64 with the standard alphabet: the
/// format of HdrHistogram's own logs, readable by its Java, Go and Python ports.
pub fn encode_histogram<T: Counter>(h: &Histogram<T>) -> String {
    let mut buf = Vec::new();
    // Serialising into a Vec fails only for counts above i64::MAX, which no run reaches.
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("a histogram serialises into memory");
    STANDARD.encode(buf)
}

/// Decodes what [`encode_histogram`] wrote (plain V2 is accepted too), exactly.
pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, ReportError> {
    let raw = STANDARD.decode(s.trim())?;
    Ok(Deserializer::new().deserialize(&mut raw.as_slice())?)
}

/// Decodes every histogram in a result read as JSON — under any `histograms` object (a run's,
/// each step's and probe's run, a name's) and any `histogram` string — so a damaged one is
/// refused when the file is read, naming where it is, instead of leaving a chart empty later.
pub(crate) fn check_histograms(value: &Value, origin: &str) -> Result<(), ReportError> {
    let damaged = |path: String, e: ReportError| ReportError::Histogram {
        origin: origin.to_owned(),
        path,
        reason: match e {
            ReportError::HistogramBase64(e) => format!("not base64: {e}"),
            ReportError::HistogramEncoding(e) => format!("not an HdrHistogram: {e}"),
            other => other.to_string(),
        },
    };
    walk(value, String::new(), &mut |path, encoded| {
        // An empty string is a histogram not kept (a name's connect times, time to error in
        // files from before it existed), not a damaged one.
        if encoded.is_empty() {
            return Ok(());
        }
        decode_histogram(encoded)
            .map(drop)
            .map_err(|e| damaged(path, e))
    })
}

/// Calls `f` with the path and text of every histogram string under `v`.
fn walk(
    v: &Value,
    path: String,
    f: &mut impl FnMut(String, &str) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::Object(m) => {
            for (key, child) in m {
                match (key.as_str(), child) {
                    ("histograms", Value::Object(hs)) => {
                        for (name, h) in hs {
                            if let Value::String(s) = h {
                                f(format!("{}.{name}", join(key)), s)?;
                            }
                        }
                    }
                    ("histogram", Value::String(s)) => f(join(key), s)?,
                    _ => walk(child, join(key), f)?,
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                walk(child, format!("{path}[{i}]"), f)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Summarises a histogram of microseconds in milliseconds; all zeros when it is empty.
pub fn summarize_us(h: &Histogram<u64>) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    let ms = |us: u64| us as f64 / 1e3;
    let q = |quantile: f64| ms(h.value_at_quantile(quantile));
    Summary {
        count: h.len(),
        min: ms(h.min()),
        mean: whole_us_in_ms(h.mean()),
        stddev: whole_us_in_ms(h.stdev()),
        p50: q(0.50),
        p75: q(0.75),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        max: ms(h.max()),
    }
}

/// As [`summarize_us`], for the compact histograms the recorders keep; an empty one costs
/// nothing (a workload may have 20,000 request names, most of them idle).
pub fn summarize_compact(h: &herd_metrics::CompactHistogram) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    summarize_us(&h.to_histogram())
}

/// Microseconds rounded to whole ones, the histograms' resolution, in milliseconds: more digits
/// in the JSON would be noise. Rounding before dividing keeps 500.5 us from becoming 0.5 ms.
fn whole_us_in_ms(us: f64) -> f64 {
    us.round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::new_histogram;

    #[test]
    fn base64_round_trip_is_exact() {
        let mut h = new_histogram();
        for v in [
            1,
            7,
            150,
            1_234,
            98_765,
            3_000_000,
            herd_metrics::HISTOGRAM_MAX_US,
        ] {
            h.record_n(v, v % 13 + 1).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn empty_histogram_round_trips_and_summarises_to_zeros() {
        let h = new_histogram();
        assert_eq!(decode_histogram(&encode_histogram(&h)).unwrap().len(), 0);
        assert_eq!(summarize_us(&h), Summary::default());
    }

    #[test]
    fn decoded_histograms_merge_exactly() {
        let (mut a, mut b) = (new_histogram(), new_histogram());
        a.record_n(1_000, 3).unwrap();
        b.record_n(2_000, 5).unwrap();
        let mut merged = decode_histogram(&encode_histogram(&a)).unwrap();
        merged
            .add(decode_histogram(&encode_histogram(&b)).unwrap())
            .unwrap();
        let mut direct = a.clone();
        direct.add(&b).unwrap();
        assert_eq!(merged, direct);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            decode_histogram("not base64!"),
            Err(ReportError::HistogramBase64(_))
        ));
        assert!(matches!(
            decode_histogram("AAAAAAAA"),
            Err(ReportError::HistogramEncoding(_))
        ));
    }

    #[test]
    fn a_damaged_histogram_is_named_by_its_path() {
        let good = encode_histogram(&new_histogram());
        let doc = serde_json::json!({
            "histograms": {"latency": good},
            "steps": [{"runs": [{"histograms": {"latency": good}},
                                {"histograms": {"latency": good, "connect": "bm90IGFuIGhkcg=="}}]}],
        });
        let err = check_histograms(&doc, "s.json").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "s.json: `steps[0].runs[1].histograms.connect` is not a valid histogram (not an HdrHistogram"
            ),
            "{err}"
        );
        let doc = serde_json::json!({"by_name": [{"histogram": "%%%"}]});
        let err = check_histograms(&doc, "n.json").unwrap_err().to_string();
        assert!(
            err.starts_with("n.json: `by_name[0].histogram` is not a valid histogram (not base64"),
            "{err}"
        );
    }

    #[test]
    fn percentile_rank_is_the_ceiling_as_in_java_hdrhistogram() {
        // 12 samples: p95 is rank ceil(0.95 x 12) = 12, the largest (docs/results.md). The Python
        // and Go ports round (int(11.4 + 0.5) = 11) and report the 11th: one bucket lower.
        let mut h = new_histogram();
        for ms in 1..=12 {
            h.record(ms * 1_000).unwrap();
        }
        let top = h.highest_equivalent(12_000) as f64 / 1e3;
        assert_eq!(summarize_us(&h).p95, top);
        assert!(summarize_us(&h).p95 > h.highest_equivalent(11_000) as f64 / 1e3);
    }

    #[test]
    fn summary_is_in_milliseconds() {
        let mut h = new_histogram();
        for us in 1..=1_000 {
            h.record(us).unwrap();
        }
        let s = summarize_us(&h);
        assert_eq!(s.count, 1_000);
        assert_eq!(s.min, 0.001);
        assert!((s.p50 - 0.5).abs() < 0.001, "p50 {}", s.p50);
        assert!((s.p99 - 0.99).abs() < 0.001, "p99 {}", s.p99);
        assert!((s.max - 1.0).abs() < 0.001, "max {}", s.max);
        assert_eq!(s.mean, 0.501, "0.5005 ms rounded to whole microseconds");
    }
}
