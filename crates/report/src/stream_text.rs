//! The summary's lines for event streams (Server-Sent Events, an LLM's tokens): time to first
//! event from the intended send and from the actual send, the gaps, events and tokens per
//! second. Nothing when the run read no event stream.

use crate::format::{count, duration_ms, rate};
use crate::lines::{line, plural};
use crate::{RunResult, Summary};
use std::fmt::{self, Write};

pub(crate) fn render(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let Some(s) = &r.streams else {
        return Ok(());
    };
    // A gRPC call's reply messages are read as an event stream's events: said in its words
    // (messages of calls), with no tokens.
    if r.grpc.is_some() {
        let body = format!(
            "{}   {} reply messages ({}/s)   {} a call (p50)",
            plural(s.streams, "call"),
            count(s.events),
            rate(s.events_per_second),
            count(s.events_per_stream.p50),
        );
        line(out, "messages", &body)?;
        spread(
            out,
            "first msg",
            &s.ttft_ms,
            "first reply message, from the intended send",
        )?;
        spread(out, "", &s.ttft_sent_ms, "from the actual send")?;
        return spread(out, "gaps", &s.itl_ms, "between a call's reply messages");
    }
    let body = format!(
        "{}   {} events ({}/s)   {} tokens ({}/s)   {} events a stream (p50)",
        plural(s.streams, "stream"),
        count(s.events),
        rate(s.events_per_second),
        count(s.tokens),
        rate(s.tokens_per_second),
        count(s.events_per_stream.p50),
    );
    line(out, "streams", &body)?;
    spread(
        out,
        "ttft",
        &s.ttft_ms,
        "first event, from the intended send",
    )?;
    spread(out, "", &s.ttft_sent_ms, "from the actual send")?;
    spread(out, "itl", &s.itl_ms, "gaps between events")
}

fn spread(out: &mut impl Write, label: &str, s: &Summary, what: &str) -> fmt::Result {
    if s.count == 0 {
        return line(out, label, &format!("none   ({what})"));
    }
    let body = format!(
        "p50 {}  p90 {}  p99 {}  max {}   ({what})",
        duration_ms(s.p50),
        duration_ms(s.p90),
        duration_ms(s.p99),
        duration_ms(s.max)
    );
    line(out, label, &body)
}
