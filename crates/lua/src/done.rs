//! wrk's `done(summary, latency, requests)`: called once in the main state after the run, with
//! what the run measured in wrk's units (microseconds, requests per second).

use hdrhistogram::Histogram;
use herd_engine::RunOutput;
use herd_metrics::ErrorKind;
use mlua::{Lua, MetaMethod, UserData, UserDataFields, UserDataMethods};
use std::time::Duration;

/// What `done()` is given.
#[derive(Clone, Debug)]
pub struct Summary {
    pub duration: Duration,
    pub requests: u64,
    pub bytes: u64,
    /// wrk's error classes: connect, read, write, status (responses >= 400), timeout.
    pub errors: WrkErrors,
    /// Latency in microseconds.
    pub latency: Histogram<u64>,
    /// Requests completed in each second of the run.
    pub rates: Histogram<u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrkErrors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub status: u64,
    pub timeout: u64,
}

/// wrk's `stats` object: `percentile(p)`, `min`, `max`, `mean`, `stdev`, `#stats` and
/// `stats(i)` (the i-th distinct value and its count).
struct Stats(Histogram<u64>);

impl UserData for Stats {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("min", |_, s| Ok(s.0.min() as f64));
        fields.add_field_method_get("max", |_, s| Ok(s.0.max() as f64));
        fields.add_field_method_get("mean", |_, s| Ok(s.0.mean()));
        fields.add_field_method_get("stdev", |_, s| Ok(s.0.stdev()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("percentile", |_, s, p: f64| {
            Ok(s.0.value_at_quantile((p / 100.0).clamp(0.0, 1.0)) as f64)
        });
        methods.add_meta_method(MetaMethod::Len, |_, s, ()| {
            Ok(s.0.iter_recorded().count() as i64)
        });
        methods.add_meta_method(MetaMethod::Call, |_, s, i: usize| {
            let v = s.0.iter_recorded().nth(i.saturating_sub(1));
            Ok(v.map_or((0.0, 0), |v| {
                (
                    s.0.highest_equivalent(v.value_iterated_to()) as f64,
                    v.count_at_value(),
                )
            }))
        });
    }
}

impl Summary {
    /// What a run measured, in wrk's terms.
    pub fn of(out: &RunOutput) -> Summary {
        let t = &out.total;
        let n = |kinds: &[ErrorKind]| kinds.iter().map(|&k| t.error_count(k)).sum::<u64>();
        let mut rates = herd_metrics::new_histogram();
        for s in &out.timeline {
            rates.saturating_record(s.requests());
        }
        Summary {
            duration: out.duration,
            requests: t.completed,
            bytes: t.bytes_received,
            errors: WrkErrors {
                connect: n(&[
                    ErrorKind::ConnectRefused,
                    ErrorKind::ConnectTimeout,
                    ErrorKind::FdUnavailable,
                    ErrorKind::AddrUnavailable,
                ]),
                read: n(&[
                    ErrorKind::Reset,
                    ErrorKind::Eof,
                    ErrorKind::Protocol,
                    ErrorKind::Tls,
                    ErrorKind::Other,
                ]),
                write: 0,
                status: t
                    .statuses()
                    .filter(|&(s, _)| s >= 400)
                    .map(|(_, c)| c)
                    .sum(),
                timeout: n(&[ErrorKind::Timeout]),
            },
            latency: t.latency.to_histogram(),
            rates,
        }
    }
}

/// Calls `done` if the script defines it.
pub(crate) fn call(lua: &Lua, summary: &Summary) -> mlua::Result<()> {
    let Ok(mlua::Value::Function(done)) = lua.globals().get::<mlua::Value>("done") else {
        return Ok(());
    };
    let s = lua.create_table()?;
    s.set("duration", summary.duration.as_micros() as i64)?;
    s.set("requests", summary.requests as i64)?;
    s.set("bytes", summary.bytes as i64)?;
    let e = lua.create_table()?;
    let w = summary.errors;
    for (k, v) in [
        ("connect", w.connect),
        ("read", w.read),
        ("write", w.write),
        ("status", w.status),
        ("timeout", w.timeout),
    ] {
        e.set(k, v as i64)?;
    }
    s.set("errors", e)?;
    let latency = lua.create_userdata(Stats(summary.latency.clone()))?;
    let rates = lua.create_userdata(Stats(summary.rates.clone()))?;
    done.call((s, latency, rates))
}
