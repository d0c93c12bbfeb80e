//! What each run asked for, against the base: a comparison of a 200 req/s run with a 100 req/s
//! one, or of two URLs, measures the question, not the server. The verdict still stands (a CI job
//! may mean it), but the difference is said first.

use herd_result::format::count as count_text;
use herd_result::{Model, RunResult};

/// One sentence per setting in which `new` asked something else than `base`.
pub fn differences(base: &RunResult, new: &RunResult, label: &str) -> Vec<String> {
    let (a, b) = (&base.config, &new.config);
    let mut out = Vec::new();
    let mut differ = |x: String, y: String| {
        if x != y {
            out.push(format!(
                "{label} asked for {y}, the base for {x}: the comparison measures that difference too"
            ));
        }
    };
    differ(base.target.clone(), new.target.clone());
    differ(model(a.model), model(b.model));
    differ(rate(a.rate), rate(b.rate));
    let users = |c: &herd_result::RunConfig| match c.model {
        Model::Closed => format!("{} users", count_text(c.connections)),
        Model::Open => format!("at most {} connections", count_text(c.connections)),
    };
    differ(users(a), users(b));
    differ(seconds(a.duration_s), seconds(b.duration_s));
    differ(count(a.requests), count(b.requests));
    // What the connections spoke: a result that does not say (written before herd counted
    // protocols) is not called different.
    if let (Some(x), Some(y)) = (protocol(base), protocol(new)) {
        differ(x, y);
    }
    let streams = |n: Option<u64>| {
        n.map_or("no streams (HTTP/1.1)".into(), |n| {
            format!("{n} streams per connection")
        })
    };
    differ(streams(a.streams), streams(b.streams));
    let depth = |n: Option<u64>| {
        n.map_or("no pipelining".into(), |n| {
            format!("a pipeline depth of {n}")
        })
    };
    differ(depth(a.pipeline), depth(b.pipeline));
    out
}

/// The protocols a run's connections spoke, in ALPN's names (`h2c`, `h2`, `h3`, `http/1.1`).
fn protocol(r: &RunResult) -> Option<String> {
    let mut names: Vec<&str> = r
        .generator
        .protocols
        .iter()
        .map(|p| p.protocol.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort_unstable();
    Some(format!("protocol {}", names.join(" and ")))
}

fn model(m: Model) -> String {
    match m {
        Model::Closed => "the closed model".into(),
        Model::Open => "the open model".into(),
    }
}

fn rate(r: Option<f64>) -> String {
    r.map_or("no fixed rate".into(), |r| format!("{r} req/s"))
}

fn seconds(s: Option<f64>) -> String {
    s.map_or("no duration".into(), |s| format!("{s} s"))
}

fn count(n: Option<u64>) -> String {
    n.map_or("no request count".into(), |n| {
        format!("{} requests", count_text(n))
    })
}
