//! gRPC calls as a result tells them: each method's latency (from the intended send) and its
//! calls by `grpc-status` name, apart from HTTP statuses and transport errors; merged exactly
//! across shards (counts added, latency histograms added).

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::Summary;
use hdrhistogram::Histogram;
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
}

impl Grpc {
    /// The calls of one method, measured in `stats`; `None` when none got a response.
    pub fn of(method: &str, stats: &Stats) -> Option<Grpc> {
        let codes = stats.grpc.as_deref()?;
        let status: BTreeMap<String, u64> = codes.iter().map(|(k, n)| (k.to_owned(), n)).collect();
        let latency = stats.latency.to_histogram();
        Some(Grpc {
            status: status.clone(),
            methods: vec![GrpcMethod {
                method: method.to_owned(),
                calls: stats.completed,
                status,
                latency_ms: summarize_us(&latency),
                histogram: encode_histogram(&latency),
            }],
        })
    }
}

/// Shards' calls added up.
/// A method's calls, their codes and their latency.
type MethodSum = (u64, BTreeMap<String, u64>, Histogram<u64>);

#[derive(Default)]
pub(crate) struct GrpcSum {
    status: BTreeMap<String, u64>,
    methods: BTreeMap<String, MethodSum>,
    any: bool,
}

impl GrpcSum {
    pub fn add(&mut self, g: Option<&Grpc>) -> Result<(), String> {
        let Some(g) = g else {
            return Ok(());
        };
        self.any = true;
        add_counts(&mut self.status, &g.status);
        for m in &g.methods {
            let h = decode_histogram(&m.histogram)
                .map_err(|e| format!("the latency histogram of gRPC method {}: {e}", m.method))?;
            match self.methods.get_mut(&m.method) {
                Some((calls, status, have)) => {
                    *calls += m.calls;
                    add_counts(status, &m.status);
                    have.add(&h)
                        .map_err(|e| format!("histograms do not add up: {e:?}"))?;
                }
                None => {
                    self.methods
                        .insert(m.method.clone(), (m.calls, m.status.clone(), h));
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
                .map(|(method, (calls, status, h))| GrpcMethod {
                    method,
                    calls,
                    status,
                    latency_ms: summarize_us(&h),
                    histogram: encode_histogram(&h),
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
        assert!(GrpcSum::default().finish().is_none());
    }
}
