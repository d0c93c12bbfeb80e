//! The `herd logs -o logs.html` page: self-contained (inline SVG, no scripts or assets), so it
//! can be mailed or archived with the log's summary.

use crate::summary::LogsReport;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Bars of `values`, labelled under the first, middle and last bar.
fn bars(title: &str, values: &[u64], labels: (&str, &str, &str)) -> String {
    let (w, h, pad) = (900.0, 180.0, 30.0);
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let n = values.len().max(1) as f64;
    let bw = (w - pad) / n;
    let mut s = format!("<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {w} {}\" width=\"100%\" role=\"img\">", esc(title), h + 20.0);
    for (i, v) in values.iter().enumerate() {
        let bh = (*v as f64 / max) * (h - 10.0);
        let _ = write!(s, "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"#3b6ea5\"><title>{v}</title></rect>", pad + i as f64 * bw, h - bh, (bw * 0.9).max(0.5), bh);
    }
    let _ = write!(
        s,
        "<text x=\"0\" y=\"12\" font-size=\"11\">{}</text>",
        max as u64
    );
    let _ = write!(
        s,
        "<text x=\"{pad}\" y=\"{}\" font-size=\"11\">{}</text>",
        h + 15.0,
        esc(labels.0)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
        pad + (w - pad) / 2.0,
        h + 15.0,
        esc(labels.1)
    );
    let _ = write!(
        s,
        "<text x=\"{w}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
        h + 15.0,
        esc(labels.2)
    );
    s.push_str("</svg></figure>");
    s
}

pub fn render(r: &LogsReport) -> String {
    let mut p = String::new();
    let _ = write!(p, "<!doctype html><html><head><meta charset=\"utf-8\"><title>herd logs: {}</title><style>body{{font-family:sans-serif;max-width:960px;margin:1em auto;color:#222}}table{{border-collapse:collapse}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}}td:nth-child(2){{text-align:left}}figure{{margin:1em 0}}figcaption{{font-weight:bold}}.share{{background:#3b6ea5;height:10px;display:inline-block}}</style></head><body>", esc(&r.input.files.join(", ")));
    let _ = write!(
        p,
        "<h1>What is in {}</h1><p>{} requests, {} .. {} ({:.0} s), {} bad lines.</p>",
        esc(&r.input.files.join(", ")),
        r.input.records,
        esc(&r.span.first),
        esc(&r.span.last),
        r.span.duration_s,
        r.input.bad_lines
    );
    let q = &r.rate;
    let _ = write!(p, "<h2>Rate</h2><p>mean {:.1} req/s, p99 of seconds {}, peak second {} at {}, peak minute {:.1} req/s at {}</p>", q.mean_rps, q.p99_second_rps, q.peak_second.requests, esc(&q.peak_second.at), q.peak_minute.rps, esc(&q.peak_minute.at));
    if q.per_second.len() > 1 && q.per_second.len() <= 3600 {
        p.push_str(&bars(
            "Requests per second",
            &q.per_second,
            ("0 s", "", &format!("{} s", q.per_second.len())),
        ));
    }
    if q.per_minute.len() > 1 {
        // at most ~900 bars: minutes summed into wider bins on long logs
        let bin = q.per_minute.len().div_ceil(900);
        let v: Vec<u64> = q
            .per_minute
            .chunks(bin)
            .map(|c| c.iter().map(|(_, n)| n).sum())
            .collect();
        let first = &q.per_minute[0].0;
        let last = &q.per_minute[q.per_minute.len() - 1].0;
        p.push_str(&bars(
            &format!("Requests per {} minute(s)", bin),
            &v,
            (first, "", last),
        ));
    }
    p.push_str(&bars(
        "Daily profile: requests by hour of day (the log's time zone)",
        &q.by_hour,
        ("00", "12", "23"),
    ));
    let _ = write!(p, "<h2>Request types</h2><table><tr><th>share</th><th>type</th><th>requests</th><th>mean size</th><th>p50 ms</th><th>p95 ms</th><th>max ms</th><th>ids (Zipf s)</th></tr>");
    for t in r.types.iter().take(50) {
        let tt = t.time_taken_ms.as_ref();
        let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
        let ids = t.ids.as_ref().map_or(String::new(), |i| {
            format!(
                "{}{}",
                i.distinct,
                i.zipf
                    .as_ref()
                    .map_or(String::new(), |z| format!(" (s {:.2}, {})", z.s, z.fit))
            )
        });
        let _ = write!(
            p,
            "<tr><td><span class=\"share\" style=\"width:{:.0}px\"></span> {:.2}%</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.share, t.share, esc(&t.name), t.requests, t.mean_bytes, f(tt.map(|x| x.p50)), f(tt.map(|x| x.p95)), f(tt.map(|x| x.max)), ids
        );
    }
    p.push_str("</table>");
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter()
            .map(|(k, v)| format!("{} {v}", esc(k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        p,
        "<h2>Methods and status</h2><p>{}</p><p>{}</p>",
        list(&r.methods),
        list(&r.status_classes)
    );
    let b = &r.response_bytes;
    let _ = write!(
        p,
        "<h2>Page weight</h2><p>mean {:.0} B, p50 {} B, p95 {} B, max {} B</p>",
        b.mean, b.p50, b.p95, b.max
    );
    let c = &r.clients;
    let _ = write!(p, "<h2>Clients and sessions</h2><p>{} clients (address + user agent), {} sessions ({} s idle ends one), {} pages per session, think time p50 {:.1} s, p95 {:.1} s.</p>", c.distinct, c.sessions, c.session_idle_s, crate::text::counted(c.requests_per_session.mean, 1), c.think_time_s.p50, c.think_time_s.p95);
    p.push_str("<footer><p>herd logs</p></footer></body></html>\n");
    p
}
