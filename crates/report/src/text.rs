//! The summary printed after a run, laid out as users of ab, httperf and wrk expect: one labelled
//! line per topic, percentiles in a row, counts with separators, times in scaling units.

use crate::connection_text;
use crate::format::{bytes, count, duration_ms, duration_s, percent, rate};
use crate::lines::{line, plural};
use crate::{Exchange, GeneratorVerdict, Model, RunResult, Summary};
use std::fmt::{self, Write};

/// Which shards the numbers cover; a partial merge says so before any number.
fn shards(r: &RunResult, h: &crate::ShardHeader, out: &mut impl Write) -> fmt::Result {
    let lag = h
        .instances
        .iter()
        .map(|i| i.start_lag_ms)
        .fold(0.0, f64::max);
    let unsynced: Vec<String> = h
        .instances
        .iter()
        .filter(|i| i.clock_synchronised == Some(false))
        .map(|i| i.index.to_string())
        .collect();
    let mut body = format!(
        "{} of {} (plan {}){}, start lag up to {}",
        h.instances.len(),
        h.count,
        &h.plan_hash[..h.plan_hash.len().min(12)],
        h.start_at
            .as_deref()
            .map(|s| format!(", started at {s}"))
            .unwrap_or_default(),
        duration_ms(lag)
    );
    if !unsynced.is_empty() {
        body.push_str(&format!(
            "; clock not synchronised on shard {}",
            unsynced.join(", ")
        ));
    }
    let missed: u64 = h.instances.iter().map(|i| i.missed).sum();
    if missed > 0 {
        body.push_str(&format!(
            "\n             missed {} arrivals before it was ready (--late skip): not sent, not counted; rates are over the {} played",
            count(missed),
            duration_s((r.duration_s - lag / 1e3).max(0.0))
        ));
    }
    line(out, "shards", &body)?;
    if h.is_partial() {
        let missing: Vec<String> = h
            .missing
            .iter()
            .map(|i| format!("{i}/{}", h.count))
            .collect();
        writeln!(
            out,
            "  PARTIAL: shard {} missing: the numbers cover only the shards merged, nothing was scaled up",
            missing.join(", ")
        )?;
    }
    Ok(())
}

/// Longest error sample shown; the JSON keeps the whole message.
const SAMPLE_CHARS: usize = 80;

/// What a partial result's file did not carry (never shown as 0).
const NOT_RECORDED: &str = "not recorded";

/// Writes the human summary of a run.
pub fn render_text(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    header(r, out)?;
    let in_warmup = r.interrupted && r.warmup.duration_s < r.config.warmup_s;
    if in_warmup {
        writeln!(
            out,
            "  INTERRUPTED during the warm-up, after {} of {}: nothing was measured",
            duration_s(r.warmup.duration_s),
            duration_s(r.config.warmup_s)
        )?;
    } else if r.interrupted {
        writeln!(
            out,
            "  INTERRUPTED after {}: the numbers cover only the part that ran",
            duration_s(r.duration_s)
        )?;
    }
    if let Some(h) = &r.shard {
        shards(r, h, out)?;
    }
    if r.warmup.duration_s > 0.0 || r.warmup.requests > 0 {
        let body = format!(
            "{}, {} (not counted below)",
            duration_s(r.warmup.duration_s),
            plural(r.warmup.requests, r.config.exchange().noun())
        );
        line(out, "warm-up", &body)?;
    }
    let t = &r.totals;
    let body = format!(
        "{} scheduled   {} completed ({} ok, {} failed)   {}   {} dropped",
        count(t.scheduled),
        count(t.completed),
        count(t.ok),
        count(t.failed),
        plural(t.errors, "error"),
        count(t.dropped)
    );
    let messages = r.config.exchange() == Exchange::Message;
    line(out, if messages { "messages" } else { "requests" }, &body)?;
    checked_errors(r, out)?;
    let per_s = |n: u64| {
        if r.duration_s > 0.0 {
            n as f64 / r.duration_s
        } else {
            0.0
        }
    };
    let out_rate = if r.recorded("bytes_sent") {
        format!("{}/s", bytes(per_s(t.bytes_sent)))
    } else {
        NOT_RECORDED.to_owned()
    };
    let body = format!(
        "{} {}/s   net I/O {}/s in, {out_rate} out",
        rate(r.throughput_rps),
        exchange(r),
        bytes(per_s(t.bytes_received)),
    );
    line(out, "throughput", &body)?;
    let answers = match r.config.exchange() {
        Exchange::Request => "responses",
        Exchange::Message => "replies",
    };
    latency(&r.latency_ms, answers, out)?;
    service(&r.service_time_ms, out)?;
    connection_text::connect(&r.connect_ms, &r.generator.tls, out)?;
    connection_text::protocols(&r.generator.protocols, out)?;
    connection_text::phases(r, out)?;
    time_to_error(&r.time_to_error_ms, r.config.exchange(), out)?;
    crate::stream_text::render(r, out)?;
    crate::grpc_text::render(r, out)?;
    crate::websocket_text::render(r, out)?;
    responses(r, out)?;
    errors(r, out)?;
    generator(r, out)?;
    nothing_listens(r, out)?;
    for w in &r.warnings {
        writeln!(out, "  WARNING: {w}")?;
    }
    if let Some(b) = crate::backlog::run_syn_retries(r) {
        writeln!(out, "  LISTEN QUEUE FULL: {}", b.sentence())?;
    }
    crate::server_text::render(r.server.as_ref(), out)?;
    crate::workload_text::render_workload(r, out)
}

/// What one exchange of the run is, short: `req`, or `msg` for a WebSocket's messages.
fn exchange(r: &RunResult) -> &'static str {
    r.config.exchange().short()
}

fn header(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let c = &r.config;
    let mut how = format!("{} model", c.model.name());
    if let (Model::Open, Some(rps)) = (c.model, c.rate) {
        write!(how, " at {} {}/s", rate(rps), exchange(r))?;
    }
    if let Some(a) = &c.arrivals {
        write!(how, " ({} arrivals, seed {})", a.process, a.seed)?;
    }
    write!(how, ", {}", plural(c.connections, "connection"))?;
    if let Some(m) = c.streams {
        // h2load's words: requests in flight are connections times streams.
        write!(how, " x {}", plural(m, "stream"))?;
        if let Some(a) = r.generator.streams_allowed {
            // h2load's `-m` follows the server's limit the same way.
            write!(how, " (the server allows {a}: {a} in flight on each)")?;
        }
    }
    if let Some(k) = c.pipeline {
        write!(how, " pipelining {k}")?;
    }
    write!(how, ", {}", plural(c.threads, "thread"))?;
    if let Some(n) = c.requests {
        // A scenario's count is of iterations, each of which may send several requests.
        let unit = if !r.by_scenario.is_empty() {
            "iteration"
        } else {
            r.config.exchange().noun()
        };
        write!(how, ", {}", plural(n, unit))?;
    }
    // A gRPC run names its method: the URL is only where the calls went.
    let what = match r.grpc.as_ref().map(|g| g.methods.as_slice()) {
        Some([m]) if r.workload.is_none() => format!("herd grpc {} {}", r.target, m.method),
        _ => format!("herd run {}", r.target),
    };
    writeln!(out, "{what}  {how}, {}", duration_s(r.duration_s))?;
    for said in r.overrides() {
        writeln!(out, "  {said}")?;
    }
    Ok(())
}

/// With checks, `ok` means the checks passed, so a 401 a check expected is ok: say so, or a
/// reader sees 401s counted as ok without a reason.
fn checked_errors(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    if r.checks.is_empty() {
        return Ok(());
    }
    let error_statuses: u64 = r
        .status
        .iter()
        .filter(|(code, _)| code.parse::<u16>().is_ok_and(|c| c >= 400))
        .map(|(_, n)| n)
        .sum();
    let expected = error_statuses.saturating_sub(r.totals.failed);
    if expected == 0 {
        return Ok(());
    }
    let least = if r.totals.failed > 0 { "at least " } else { "" };
    writeln!(
        out,
        "             ok = every check passed: {least}{} with a 4xx/5xx status were what a check expected (checks below)",
        plural(expected, "response")
    )
}

/// Requests that got no response are not in latency: how long they took to fail, on one line.
fn time_to_error(s: &Summary, x: Exchange, out: &mut impl Write) -> fmt::Result {
    if s.count == 0 {
        return Ok(());
    }
    let body = format!(
        "p50 {}  p99 {}  max {}   ({} without {}; not in latency)",
        duration_ms(s.p50),
        duration_ms(s.p99),
        duration_ms(s.max),
        plural(s.count, x.noun()),
        match x {
            Exchange::Request => "a response",
            Exchange::Message => "a reply",
        }
    );
    line(out, "error time", &body)
}

fn latency(s: &Summary, answers: &str, out: &mut impl Write) -> fmt::Result {
    if s.count == 0 {
        return line(out, "latency", &format!("no {answers}"));
    }
    let body = format!(
        "min {}  mean {}  stddev {}   ({answers}, from the intended send time)",
        duration_ms(s.min),
        duration_ms(s.mean),
        duration_ms(s.stddev)
    );
    line(out, "latency", &body)?;
    let body = format!(
        "p50 {}  p75 {}  p90 {}  p95 {}  p99 {}  p99.9 {}  max {}",
        duration_ms(s.p50),
        duration_ms(s.p75),
        duration_ms(s.p90),
        duration_ms(s.p95),
        duration_ms(s.p99),
        duration_ms(s.p999),
        duration_ms(s.max)
    );
    line(out, "", &body)
}

fn service(s: &Summary, out: &mut impl Write) -> fmt::Result {
    if s.count == 0 {
        return line(out, "service", "no responses");
    }
    let body = format!(
        "p50 {}  p90 {}  p99 {}  max {}   (from the actual send)",
        duration_ms(s.p50),
        duration_ms(s.p90),
        duration_ms(s.p99),
        duration_ms(s.max)
    );
    line(out, "service", &body)
}

fn responses(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    if r.config.exchange() == Exchange::Message {
        return replies(r, out);
    }
    if r.totals.completed == 0 {
        return line(out, "responses", "none");
    }
    let b = &r.response_bytes;
    let mut body = if r.recorded("response_bytes") {
        format!(
            "min {}  mean {}  max {}   status",
            bytes(b.min as f64),
            bytes(b.mean),
            bytes(b.max as f64)
        )
    } else {
        format!("size {NOT_RECORDED}   status")
    };
    if !r.recorded("status") {
        write!(body, " codes {NOT_RECORDED} (classes in the timeline)")?;
    }
    for (code, n) in &r.status {
        write!(body, " {code}: {}", count(*n))?;
    }
    line(out, "responses", &body)
}

/// A WebSocket run's replies: their sizes, and the Upgrades refused by status (a message has
/// none of its own).
fn replies(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let b = &r.response_bytes;
    let mut body = if r.totals.completed == 0 {
        "none".to_owned()
    } else if r.recorded("response_bytes") {
        format!(
            "min {}  mean {}  max {}",
            bytes(b.min as f64),
            bytes(b.mean),
            bytes(b.max as f64)
        )
    } else {
        format!("size {NOT_RECORDED}")
    };
    if !r.status.is_empty() {
        body.push_str("   refused Upgrades' status");
        for (code, n) in &r.status {
            write!(body, " {code}: {}", count(*n))?;
        }
    }
    line(out, "replies", &body)
}

fn errors(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    if r.errors.is_empty() {
        return Ok(());
    }
    // The biggest class first: it is the one to look into.
    let mut classes: Vec<_> = r.errors.iter().collect();
    classes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut body = String::new();
    for (class, n) in classes {
        if !body.is_empty() {
            body.push_str("  ");
        }
        write!(body, "{class} {}", count(*n))?;
        if let Some(sample) = r.error_samples.get(class) {
            write!(body, " ({:?})", shorten(sample))?;
        }
    }
    line(out, "errors", &body)
}

/// A run in which every connection was refused measured nothing but that: say what to check.
fn nothing_listens(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let refused = r.errors.get("connect_refused").copied().unwrap_or(0);
    if r.totals.completed > 0 || refused == 0 || refused < r.totals.errors {
        return Ok(());
    }
    if let Some(proxy) = &r.config.proxy {
        // The connections went to the proxy: the target was never reached.
        return writeln!(
            out,
            "  NOTHING LISTENS at the proxy {proxy}: every connection to it was refused, so {} \
             was never reached; is the proxy running, and is --proxy (or HTTP_PROXY / \
             HTTPS_PROXY) right?",
            r.target
        );
    }
    writeln!(
        out,
        "  NOTHING LISTENS: every connection to {} was refused; is the server running, and are \
         the host and port right?",
        r.target
    )
}

fn generator(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let g = &r.generator;
    let verdict = match g.verdict {
        GeneratorVerdict::Ok => "ok",
        GeneratorVerdict::GeneratorLimited => "generator-limited",
    };
    let lag = match r.config.model {
        crate::Model::Open => "send lag",
        crate::Model::Closed => "loop delay",
    };
    let known = |figure: &str, text: String| {
        if r.recorded(figure) {
            text
        } else {
            NOT_RECORDED.to_owned()
        }
    };
    let split = if r.recorded("cpu_split") {
        format!(
            "user {}, sys {}",
            duration_s(g.cpu_user_s),
            duration_s(g.cpu_sys_s)
        )
    } else {
        format!("user and sys {NOT_RECORDED}")
    };
    let mut body = format!(
        "cpu {} ({split})  {lag} p99 {}  verdict: {verdict}",
        known("cpu", percent(g.cpu_percent)),
        known("send_lag", duration_ms(g.send_lag_p99_ms))
    );
    if let (Some(fds), Some(limit)) = (g.fds_peak, g.fd_limit) {
        body.push_str(&format!(
            "\n             fds {} of {} at peak",
            count(fds),
            count(limit)
        ));
        if let (Some(p), Some(range)) = (g.ephemeral_ports_peak, g.ephemeral_port_range) {
            body.push_str(&format!(
                ", local ports in use machine-wide {} of {}",
                count(p),
                count(range)
            ));
        }
    }
    if let Some(n) = g.naps.filter(|n| n.napping > 0) {
        body.push_str(&format!(
            "\n             napped in {} of {} tenths of a second (naps up to {} us: a \
             response read up to that much later)",
            count(n.napping),
            count(n.windows),
            n.longest_us
        ));
    }
    line(out, "generator", &body)?;
    if g.verdict == GeneratorVerdict::GeneratorLimited {
        let reasons = if g.reasons.is_empty() {
            "herd could not send as planned".to_owned()
        } else {
            g.reasons.join("; ")
        };
        writeln!(out, "  GENERATOR-LIMITED: {reasons}")?;
    }
    for w in &g.warnings {
        writeln!(out, "  generator warning: {w}")?;
    }
    Ok(())
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(SAMPLE_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}
