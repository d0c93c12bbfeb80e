//! The report's section on event streams (Server-Sent Events, an LLM's tokens): how many,
//! events and tokens per second, and the time to first event from the intended and the actual
//! send beside the gaps between events. Absent when the run read no event stream.

use super::page::{esc, facts, table};
use crate::format::{count, duration_ms, rate};
use crate::{RunResult, Summary};

pub fn section(r: &RunResult) -> Option<String> {
    let s = r.streams.as_ref()?;
    let mut out = facts(&[
        ("streams", count(s.streams)),
        (
            "events",
            format!("{} ({}/s)", count(s.events), rate(s.events_per_second)),
        ),
        (
            "tokens",
            format!("{} ({}/s)", count(s.tokens), rate(s.tokens_per_second)),
        ),
        (
            "events a stream",
            format!(
                "p50 {}, p99 {}, max {}",
                count(s.events_per_stream.p50),
                count(s.events_per_stream.p99),
                count(s.events_per_stream.max)
            ),
        ),
    ]);
    let row = |name: &str, s: &Summary| {
        let mut v = vec![esc(name), count(s.count)];
        if s.count == 0 {
            v.extend(std::iter::repeat_n("-".to_owned(), 5));
        } else {
            v.extend([s.p50, s.p90, s.p99, s.p999, s.max].map(duration_ms));
        }
        v
    };
    out.push_str(&table(
        "summary",
        &["", "count", "p50", "p90", "p99", "p99.9", "max"],
        &[
            row(
                "time to first event / token (from the intended send)",
                &s.ttft_ms,
            ),
            row(
                "time to first event / token (from the actual send)",
                &s.ttft_sent_ms,
            ),
            row("gaps between events (inter-token latency)", &s.itl_ms),
            row("stream duration (first event to end)", &s.duration_ms),
        ],
    ));
    Some(out)
}
