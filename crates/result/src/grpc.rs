//! gRPC calls as a result tells them: each method's latency (from the intended send) and its
//! calls by `grpc-status` name with each code's latency, apart from HTTP statuses and transport
//! errors; merged exactly across shards (counts added, latency histograms added).

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::Summary;
use hdrhistogram::Histogram;
use herd_metrics::new_histogram;
use herd_metrics::Stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The calls of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grpc {
    /// Calls that got their trailers, by `grpc-status` name (`OK`, `NOT_FOUND`, ...).
    pub status: BTreeMap<String, u64>,
    pub methods: Vec<GrpcMethod>,
}

/// One method's calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrpcMethod {
    /// `package.Service/Method`.
    pub method: String,
    /// Calls that got a response (any status), and those by `grpc-status` name.
    pub calls: u64,
    pub status: BTreeMap<String, u64>,
    /// Latency of its calls that got a response, from the intended send.
    pub latency_ms: Summary,
    /// The latency histogram behind it (microseconds), for `herd merge`.
    pub histogram: String,
    /// The latency of its calls by `grpc-status` name (absent in results of herd before 0.16).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_status: BTreeMap<String, StatusLatency>,
}

/// The latency of one code's calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusLatency {
    pub latency_ms: Summary,
    /// The histogram behind it (microseconds), for `herd merge`.
    pub histogram: String,
}

impl StatusLatency {
    fn of(h: &Histogram<u64>) -> StatusLatency {
        StatusLatency {
            latency_ms: summarize_us(h),
            histogram: encode_histogram(h),
        }
    }
}

impl Grpc {
    /// The calls of one method, measured in `stats`; `None` when none got a response.
    pub fn of(method: &str, stats: &Stats) -> Option<Grpc> {
        Grpc::of_calls([(method, stats)])
    }

    /// The calls of several methods (a workload's `grpc:` steps, each by its request name);
    /// names without a call's answer are left out; `None` when none has one.
    pub fn of_calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a Stats)>) -> Option<Grpc> {
        let mut status = BTreeMap::new();
        let mut methods = Vec::new();
        for (method, stats) in calls {
            let Some(g) = stats.grpc.as_deref() else {
                continue;
            };
            let codes: BTreeMap<String, u64> =
                g.counts.iter().map(|(k, n)| (k.to_owned(), n)).collect();
            add_counts(&mut status, &codes);
            let by_status = g
                .latency()
                .into_iter()
                .map(|(name, h)| (name.to_owned(), StatusLatency::of(&h.to_histogram())))
                .collect();
            let latency = stats.latency.to_histogram();
            methods.push(GrpcMethod {
                method: method.to_owned(),
                calls: stats.completed,
                status: codes,
                latency_ms: summarize_us(&latency),
                histogram: encode_histogram(&latency),
                by_status,
            });
        }
        (!methods.is_empty()).then_some(Grpc { status, methods })
    }
}

/// A method's calls, their codes, their latency and each code's.
#[derive(Default)]
struct MethodSum {
    calls: u64,
    status: BTreeMap<String, u64>,
    latency: Option<Histogram<u64>>,
    by_status: BTreeMap<String, Histogram<u64>>,
}

/// Shards' calls added up.
#[derive(Default)]
pub(crate) struct GrpcSum {
    status: BTreeMap<String, u64>,
    methods: BTreeMap<String, MethodSum>,
    any: bool,
}

/// `h` added into `to` (taken as it is when `to` is empty).
fn add_into(to: &mut Option<Histogram<u64>>, h: Histogram<u64>) -> Result<(), String> {
    match to {
        Some(have) => have
            .add(&h)
            .map_err(|e| format!("histograms do not add up: {e:?}")),
        None => {
            *to = Some(h);
            Ok(())
        }
    }
}

impl GrpcSum {
    pub fn add(&mut self, g: Option<&Grpc>) -> Result<(), String> {
        let Some(g) = g else {
            return Ok(());
        };
        self.any = true;
        add_counts(&mut self.status, &g.status);
        for m in &g.methods {
            let decode = |text: &str| {
                decode_histogram(text)
                    .map_err(|e| format!("the latency histogram of gRPC method {}: {e}", m.method))
            };
            let sum = self.methods.entry(m.method.clone()).or_default();
            sum.calls += m.calls;
            add_counts(&mut sum.status, &m.status);
            add_into(&mut sum.latency, decode(&m.histogram)?)?;
            for (code, l) in &m.by_status {
                let h = decode(&l.histogram)?;
                match sum.by_status.get_mut(code) {
                    Some(have) => have
                        .add(&h)
                        .map_err(|e| format!("histograms do not add up: {e:?}"))?,
                    None => drop(sum.by_status.insert(code.clone(), h)),
                }
            }
        }
        Ok(())
    }

    pub fn finish(self) -> Option<Grpc> {
        self.any.then(|| Grpc {
            status: self.status,
            methods: self
                .methods
                .into_iter()
                .map(|(method, m)| {
                    let latency = m.latency.unwrap_or_else(new_histogram);
                    GrpcMethod {
                        method,
                        calls: m.calls,
                        status: m.status,
                        latency_ms: summarize_us(&latency),
                        histogram: encode_histogram(&latency),
                        by_status: m
                            .by_status
                            .iter()
                            .map(|(code, h)| (code.clone(), StatusLatency::of(h)))
                            .collect(),
                    }
                })
                .collect(),
        })
    }
}

pub(crate) fn add_counts(to: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *to.entry(k.clone()).or_default() += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::{Outcome, Verdict};
    use std::time::Duration;

    #[test]
    fn calls_by_status_merge_exactly() {
        let mut stats = Stats::default();
        for (ms, code) in [(2, 0), (4, 0), (8, 5)] {
            let d = Duration::from_millis(ms);
            let mut o = Outcome::completed(0, d, d, 200, Verdict::Ok);
            o.grpc = Some(code);
            stats.record(&o);
        }
        assert!(Grpc::of("a.S/M", &Stats::default()).is_none());
        let one = Grpc::of("a.S/M", &stats).unwrap();
        assert_eq!(one.status["OK"], 2);
        assert_eq!(one.status["NOT_FOUND"], 1);
        let mut sum = GrpcSum::default();
        sum.add(Some(&one)).unwrap();
        sum.add(None).unwrap();
        sum.add(Some(&one)).unwrap();
        let both = sum.finish().unwrap();
        assert_eq!(both.status["OK"], 4);
        let m = &both.methods[0];
        assert_eq!((m.method.as_str(), m.calls), ("a.S/M", 6));
        assert_eq!(m.latency_ms.count, 6);
        let slow = &m.by_status["NOT_FOUND"].latency_ms;
        assert_eq!((slow.count, slow.min.round()), (2, 8.0));
        assert_eq!(m.by_status["OK"].latency_ms.count, 4);
        assert!(m.by_status["OK"].latency_ms.max < 4.1);
        assert!(GrpcSum::default().finish().is_none());
    }
}
