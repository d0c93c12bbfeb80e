//! The report of one run: verdict first, then the key figures, the charts over time (the
//! server's resources among them, on the same axis), the distribution, whatever optional
//! sections the result carries, the tables and the generator's health.

use super::page::{esc, facts, footer, table, Page};
use super::{figure, generator, optional, server, sockets, streams, wire};
use crate::compare::error_rate;
use crate::figure::{phases_figure, run_figure, sockets_figure, statuses_figure, streams_figure};
use crate::format::{bytes, count, duration_ms, duration_s, percent, rate};
use crate::sections::{self, ThresholdOutcome};
use crate::{GeneratorVerdict, Model, RunResult, Summary};
use std::fmt::Write;

/// The whole report of a run as one HTML document.
pub fn render(r: &RunResult) -> String {
    let doc = sections::to_value(r);
    let mut page = Page::new(&format!("herd report: {}", r.target));
    page.push(&header(r));
    page.push(&verdict(r, &sections::thresholds(&doc)));
    page.section("figures", "Key figures", &cards(r));
    let run = run_figure(r);
    for (panel, (id, heading)) in run.panels.iter().zip([
        ("throughput", "Throughput over time"),
        ("latency", "Latency over time"),
        ("distribution", "Latency distribution"),
    ]) {
        page.section(id, heading, &figure::chart(panel));
    }
    page.section(
        "statuses",
        "Status codes and errors over time",
        &figure::charts(&statuses_figure(r)),
    );
    if let Some(phases) = phases_figure(r) {
        page.section(
            "phases",
            "Where each request's time went",
            &figure::charts(&phases),
        );
    }
    if let Some(mut s) = streams::section(r) {
        if let Some(fig) = streams_figure(r) {
            s.push_str(&figure::charts(&fig));
        }
        page.section("streams", "Event streams: first event and gaps", &s);
    }
    if let Some(mut s) = sockets::section(r) {
        if let Some(fig) = sockets_figure(r) {
            s.push_str(&figure::charts(&fig));
        }
        page.section(
            "websocket",
            "WebSocket: pings, closes and the send backlog",
            &s,
        );
    }
    page.section(
        "wire",
        "Protocol, connections and phases",
        &wire::section(r),
    );
    if let Some(s) = server::section(r) {
        page.section("server", "Server resources", &s);
    }
    optional::all(&mut page, &doc);
    page.section("tables", "Latency, status codes and errors", &tables(r));
    page.section("generator", "Generator health", &generator::section(r));
    page.section("config", "Configuration", &config(r));
    page.finish(&footer(&r.target))
}

fn header(r: &RunResult) -> String {
    format!(
        "<header><h1>herd report</h1><p class=\"sub\"><code>{} {}</code> &middot; {} &middot; {} from {}</p></header>",
        esc(&r.config.method),
        esc(&r.target),
        esc(&how(r)),
        duration_s(r.duration_s),
        esc(&r.started_at)
    )
}

/// How the load was applied, in words.
pub fn how(r: &RunResult) -> String {
    let c = &r.config;
    let how = match (c.model, c.rate) {
        (Model::Open, Some(rps)) => format!(
            "open model at {} req/s (up to {} connections)",
            rate(rps),
            count(c.connections)
        ),
        _ => format!("closed model, {} connections", count(c.connections)),
    };
    // h2load's words: requests in flight are connections times streams.
    match (c.streams, c.pipeline) {
        (Some(m), _) => format!("{how} x {} streams", count(m)),
        (None, Some(k)) => format!("{how}, pipelining {}", count(k)),
        (None, None) => how,
    }
}

/// The verdict box: thresholds, generator health, interrupted or not, at a glance.
fn verdict(r: &RunResult, thresholds: &[ThresholdOutcome]) -> String {
    let failed: Vec<_> = thresholds.iter().filter(|t| !t.passed).collect();
    let limited = r.generator.verdict == GeneratorVerdict::GeneratorLimited;
    let (class, word) = if !failed.is_empty() {
        ("bad", "FAILED")
    } else if limited {
        ("warn", "NOT VALID: GENERATOR-LIMITED")
    } else if r.interrupted {
        ("warn", "INTERRUPTED")
    } else if r.shard.as_ref().is_some_and(|h| h.is_partial()) {
        ("warn", "PARTIAL: SHARDS MISSING")
    } else if thresholds.is_empty() {
        ("", "COMPLETED")
    } else {
        ("", "PASSED")
    };
    let mut chips = String::new();
    let mut chip = |class: &str, text: String| {
        let _ = write!(chips, "<span class=\"chip {class}\">{}</span>", esc(&text));
    };
    if thresholds.is_empty() {
        chip("", "no thresholds set".to_owned());
    } else if failed.is_empty() {
        chip("ok", format!("{} thresholds passed", thresholds.len()));
    } else {
        chip(
            "bad",
            format!("{} of {} thresholds failed", failed.len(), thresholds.len()),
        );
    }
    if limited {
        chip(
            "warn",
            "generator-limited: herd was a bottleneck".to_owned(),
        );
    } else {
        chip("ok", "generator ok".to_owned());
    }
    if r.interrupted {
        chip(
            "warn",
            format!("interrupted after {}", duration_s(r.duration_s)),
        );
    } else {
        chip("ok", "ran to the end".to_owned());
    }
    if let Some(h) = &r.shard {
        chip(
            if h.is_partial() { "warn" } else { "ok" },
            format!("{} of {} shards", h.instances.len(), h.count),
        );
    }
    let not_ok = r.totals.scheduled.saturating_sub(r.totals.ok);
    chip(
        if not_ok > 0 { "warn" } else { "ok" },
        format!("{} of requests not ok", percent(error_rate(r) * 100.0)),
    );
    let mut details = String::new();
    for t in &failed {
        let actual = t
            .actual
            .as_deref()
            .map(|a| format!(" (measured {a})"))
            .unwrap_or_default();
        let _ = write!(
            details,
            "<li>threshold failed: {}{}</li>",
            esc(&t.what),
            esc(&actual)
        );
    }
    for reason in r.generator.reasons.iter().filter(|_| limited) {
        let _ = write!(details, "<li>{}</li>", esc(reason));
    }
    if r.interrupted {
        details.push_str(
            "<li>the run was stopped early: the numbers cover only the part that ran</li>",
        );
    }
    if let Some(h) = r.shard.as_ref().filter(|h| h.is_partial()) {
        let missing: Vec<String> = h
            .missing
            .iter()
            .map(|i| format!("{i}/{}", h.count))
            .collect();
        let _ = write!(
            details,
            "<li>shard {} missing: the numbers cover only the shards merged, nothing was scaled up</li>",
            esc(&missing.join(", "))
        );
    }
    if !details.is_empty() {
        details = format!("<ul>{details}</ul>");
    }
    format!(
        "<section id=\"verdict\" class=\"verdict {class}\"><div class=\"word\">{word}</div><div class=\"chips\">{chips}</div>{details}</section>\n"
    )
}

fn cards(r: &RunResult) -> String {
    let t = &r.totals;
    let l = &r.latency_ms;
    let card = |label: &str, value: String, note: String| {
        format!(
            "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"note\">{}</div></div>",
            esc(label),
            esc(&value),
            esc(&note)
        )
    };
    let per_s = |n: u64| {
        if r.duration_s > 0.0 {
            n as f64 / r.duration_s
        } else {
            0.0
        }
    };
    [
        card(
            "throughput",
            format!("{} req/s", rate(r.throughput_rps)),
            format!("{} completed", count(t.completed)),
        ),
        card(
            "not ok",
            percent(error_rate(r) * 100.0),
            format!(
                "{} failed, {} errors, {} dropped",
                count(t.failed),
                count(t.errors),
                count(t.dropped)
            ),
        ),
        card(
            "latency p50",
            duration_ms(l.p50),
            "from the intended send".to_owned(),
        ),
        card(
            "latency p99",
            duration_ms(l.p99),
            format!("p99.9 {}", duration_ms(l.p999)),
        ),
        card(
            "latency max",
            duration_ms(l.max),
            format!("mean {}", duration_ms(l.mean)),
        ),
        card(
            "received",
            format!("{}/s", bytes(per_s(t.bytes_received))),
            format!("{} in all", bytes(t.bytes_received as f64)),
        ),
    ]
    .into_iter()
    .fold(String::from("<div class=\"cards\">"), |acc, c| acc + &c)
        + "</div>"
}

fn tables(r: &RunResult) -> String {
    let row = |name: &str, s: &Summary| {
        if s.count == 0 {
            return vec![
                esc(name),
                "0".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ];
        }
        let mut v = vec![esc(name), count(s.count)];
        v.extend([s.min, s.mean, s.p50, s.p90, s.p99, s.p999, s.max].map(duration_ms));
        v
    };
    let mut out = table(
        "summary",
        &[
            "", "count", "min", "mean", "p50", "p90", "p99", "p99.9", "max",
        ],
        &[
            row("latency (from the intended send)", &r.latency_ms),
            row("service time (from the actual send)", &r.service_time_ms),
            row("connect (per connection)", &r.connect_ms),
            row("time to error (no response)", &r.time_to_error_ms),
        ],
    );
    let statuses: Vec<Vec<String>> = r
        .status
        .iter()
        .map(|(code, n)| vec![esc(code), count(*n), share(*n, r.totals.scheduled)])
        .collect();
    let mut errors: Vec<(&String, &u64)> = r.errors.iter().collect();
    errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let errors: Vec<Vec<String>> = errors
        .into_iter()
        .map(|(class, n)| {
            let sample = r
                .error_samples
                .get(class)
                .map_or(String::new(), |s| format!("<code>{}</code>", esc(s)));
            vec![esc(class), count(*n), share(*n, r.totals.scheduled), sample]
        })
        .collect();
    out.push_str("<div class=\"two\"><div><h3>Status codes</h3>");
    out.push_str(&if statuses.is_empty() {
        "<p class=\"quiet\">no responses</p>".to_owned()
    } else {
        table("statuses", &["status", "responses", "share"], &statuses)
    });
    out.push_str("</div><div><h3>Errors (no valid response)</h3>");
    out.push_str(&if errors.is_empty() {
        "<p class=\"quiet\">none</p>".to_owned()
    } else {
        table(
            "errors",
            &["class", "requests", "share", "first message"],
            &errors,
        )
    });
    out.push_str("</div></div>");
    let t = &r.totals;
    out.push_str(&facts(&[
        ("scheduled", count(t.scheduled)),
        ("sent", count(t.sent)),
        (
            "completed",
            format!(
                "{} ({} ok, {} failed)",
                count(t.completed),
                count(t.ok),
                count(t.failed)
            ),
        ),
        ("errors", count(t.errors)),
        ("dropped", count(t.dropped)),
        (
            "response size",
            format!(
                "min {}, mean {}, max {}",
                bytes(r.response_bytes.min as f64),
                bytes(r.response_bytes.mean),
                bytes(r.response_bytes.max as f64)
            ),
        ),
        ("bytes received", bytes(t.bytes_received as f64)),
        ("bytes sent", bytes(t.bytes_sent as f64)),
    ]));
    out
}

fn share(n: u64, of: u64) -> String {
    if of == 0 {
        "-".to_owned()
    } else {
        percent(n as f64 * 100.0 / of as f64)
    }
}

fn config(r: &RunResult) -> String {
    let c = &r.config;
    // A result written before herd masked credentials, or by hand, is masked here; one whose
    // run was asked to show them (`--show-secrets`) shows them, as every other output does.
    let shown = herd_result::redact::Redaction::new(&[], c.secrets_shown);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    let mut pairs = vec![
        ("URL", format!("<code>{}</code>", esc(&shown.url(&c.url)))),
        ("method", esc(&c.method)),
        ("model", esc(&how(r))),
        ("duration", opt(c.duration_s.map(duration_s))),
        ("requests", opt(c.requests.map(count))),
        (
            "warm-up",
            if r.warmup.duration_s > 0.0 || r.warmup.requests > 0 {
                format!(
                    "{} ({} requests, not counted)",
                    duration_s(r.warmup.duration_s),
                    count(r.warmup.requests)
                )
            } else {
                crate::format::warmup(0.0)
            },
        ),
        ("threads", count(c.threads)),
        ("timeout", duration_s(c.timeout_s)),
        ("calls per connection", opt(c.calls_per_conn.map(count))),
        ("request body", bytes(c.body_bytes as f64)),
        ("started", esc(&r.started_at)),
        ("herd", esc(&r.herd_version)),
    ];
    if !c.headers.is_empty() {
        pairs.push((
            "headers",
            c.headers
                .iter()
                .map(|h| format!("<code>{}</code>", esc(&shown.header(h))))
                .collect::<Vec<_>>()
                .join("<br>"),
        ));
    }
    facts(&pairs)
}
