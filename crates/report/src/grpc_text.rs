//! The summary's lines for gRPC calls: the calls by `grpc-status` name, and each method's
//! latency (and each code's, when there are several). Nothing for an HTTP run.

use crate::format::{count, duration_ms};
use crate::lines::line;
use crate::RunResult;
use std::fmt::{self, Write};

pub(crate) fn render(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let Some(g) = &r.grpc else {
        return Ok(());
    };
    let codes: Vec<String> = g
        .status
        .iter()
        .map(|(name, n)| format!("{name} {}", count(*n)))
        .collect();
    line(
        out,
        "grpc",
        &format!("{}   (calls by grpc-status)", codes.join("   ")),
    )?;
    for m in &g.methods {
        let s = &m.latency_ms;
        let body = format!(
            "{}  p50 {}  p90 {}  p99 {}  max {}   ({} calls)",
            m.method,
            duration_ms(s.p50),
            duration_ms(s.p90),
            duration_ms(s.p99),
            duration_ms(s.max),
            count(m.calls)
        );
        line(out, "", &body)?;
        // Each code's own latency, when the calls did not all end alike: a fast refusal and
        // a slow timeout read apart, not averaged into one line.
        if m.by_status.len() > 1 {
            for (name, l) in &m.by_status {
                let s = &l.latency_ms;
                let body = format!(
                    "  {name}  p50 {}  p99 {}  max {}   ({} calls)",
                    duration_ms(s.p50),
                    duration_ms(s.p99),
                    duration_ms(s.max),
                    count(s.count)
                );
                line(out, "", &body)?;
            }
        }
    }
    Ok(())
}
