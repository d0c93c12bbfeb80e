//! The view as HTML: a line saying where the run is, its numbers now, the report's charts (the
//! one chart model, drawn by the report's SVG back end) and tables of statuses, errors and
//! request names. The page swaps this fragment in whole at each event.

use super::event::Levels;
use super::view::Frame;
use herd_report::figure::{
    generator_figure, palette, run_figure, server_figure, sockets_figure, statuses_figure,
    streams_figure, Figure, Series,
};
use herd_report::html::{esc, figure_svg};
use herd_result::format::{bytes, count, duration_ms, percent, rate};
use herd_result::{Exchange, Model, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The fragment for `view`; `report` says where the final report is (or how to make one).
pub fn fragment(view: &Frame, report: &str) -> String {
    if let Some(levels) = &view.series {
        return series_fragment(levels, view, report);
    }
    run_fragment(view, report)
}

/// The fragment of the run alone.
pub fn run_fragment(view: &Frame, report: &str) -> String {
    let Some(d) = &view.drawn else {
        return "<p id=\"status\" data-state=\"waiting\">Waiting for the run to start…</p>\n"
            .to_owned();
    };
    let mut out = String::new();
    status(&mut out, view, d, report);
    tiles(&mut out, view, d);
    for fig in figures(view, d) {
        out.push_str(&figure_svg(&fig));
    }
    tables(&mut out, view, d);
    out
}

fn status(out: &mut String, view: &Frame, d: &RunResult, report: &str) {
    let elapsed = duration_ms(d.duration_s * 1e3);
    let (state, text) = match view.ended.then_some(d) {
        Some(r) if r.interrupted => (
            "finished",
            format!("Finished: the run was stopped after {elapsed}; the numbers cover the part that ran. {report}"),
        ),
        Some(_) => ("finished", format!("Finished after {elapsed}. {report}")),
        None => {
            let planned = d
                .config
                .duration_s
                .map(|s| format!(" of {}", duration_ms(s * 1e3)))
                .unwrap_or_default();
            ("running", format!("Running: {elapsed}{planned} measured."))
        }
    };
    let per = d.config.exchange().short();
    let mut load = match (d.config.model, d.config.rate) {
        (Model::Open, Some(r)) => format!("at {} {per}/s", rate(r)),
        _ => format!("{} connections", count(d.config.connections)),
    };
    // h2load's words: requests in flight are connections times streams.
    if let Some(m) = d.config.streams {
        let _ = write!(load, " x {} streams", count(m));
    } else if let Some(k) = d.config.pipeline {
        let _ = write!(load, ", pipelining {}", count(k));
    }
    let _ = writeln!(
        out,
        "<p id=\"target\">herd run {} {}, {load}</p>",
        esc(&d.config.method),
        esc(&d.target)
    );
    let _ = writeln!(
        out,
        "<p id=\"status\" class=\"{state}\" data-state=\"{state}\" data-requests=\"{}\" \
         data-seconds=\"{}\">{text}</p>",
        d.totals.completed + d.totals.errors,
        d.timeline.len(),
    );
}

/// The numbers now: the whole run's totals, and the last whole second's rate and percentiles.
fn tiles(out: &mut String, view: &Frame, d: &RunResult) {
    let last = d.timeline.iter().rev().find(|e| !e.partial);
    let target = view.targets.last().map(|t| t.1);
    // A WebSocket run's exchanges are messages (msg/s), every other run's requests.
    let (noun, per) = match d.config.exchange() {
        Exchange::Request => ("requests", "req/s, last second"),
        Exchange::Message => ("messages", "msg/s, last second"),
    };
    let unit = match d.config.model {
        Model::Open if noun == "messages" => " msg/s",
        Model::Open => " req/s",
        Model::Closed => " users",
    };
    let ended = d.totals.completed + d.totals.errors;
    let not_ok = d.totals.failed + d.totals.errors;
    let mut tiles = vec![
        (noun, count(ended)),
        (per, last.map_or("-".into(), |e| rate(e.rps))),
        (
            "plan asks",
            target.map_or("-".into(), |t| match (d.config.model, d.config.streams) {
                // Over HTTP/2 and HTTP/3 the closed model's users are streams in flight.
                (Model::Closed, Some(m)) => format!(
                    "{} streams ({} connections x {})",
                    count(t as u64),
                    count((t as u64).div_ceil(m.max(1))),
                    count(m)
                ),
                (Model::Closed, None) => format!("{}{unit}", count(t as u64)),
                (Model::Open, _) => format!("{}{unit}", rate(t)),
            }),
        ),
        (
            "p50, last second",
            last.map_or("-".into(), |e| duration_ms(e.p50_ms)),
        ),
        (
            "p99, last second",
            last.map_or("-".into(), |e| duration_ms(e.p99_ms)),
        ),
        (
            "not ok",
            if ended == 0 {
                "0".into()
            } else {
                format!(
                    "{} ({})",
                    count(not_ok),
                    percent(100.0 * not_ok as f64 / ended as f64)
                )
            },
        ),
    ];
    if !view.ended {
        tiles.push(("in flight", count(view.in_flight)));
    }
    if d.totals.dropped > 0 {
        tiles.push(("dropped", count(d.totals.dropped)));
    }
    if let Some(g) = d.generator.timeline.last() {
        tiles.push(("connections", count(g.connections)));
        tiles.push(("herd's CPU", percent(g.cpu_percent.iter().sum())));
    }
    // Every watched process's last reading, added up: the server as a whole.
    let now: Vec<_> = (d.server.iter().flat_map(|s| &s.processes))
        .filter_map(|p| p.samples.last())
        .collect();
    if !now.is_empty() {
        let cpu = now.iter().map(|s| s.cpu_percent).sum();
        let rss: u64 = now.iter().map(|s| s.rss_bytes).sum();
        tiles.push(("server CPU", percent(cpu)));
        tiles.push(("server memory", bytes(rss as f64)));
    }
    out.push_str("<dl class=\"tiles\">");
    for (name, value) in tiles {
        let _ = write!(
            out,
            "<div><dt>{}</dt><dd>{}</dd></div>",
            esc(name),
            esc(&value)
        );
    }
    out.push_str("</dl>\n");
}

/// The report's figures of a run, with the plan's target second by second drawn against what
/// happened: the rate asked for over the throughput (open model), the users asked for over the
/// connections (closed model).
fn figures(view: &Frame, d: &RunResult) -> Vec<Figure> {
    // The closed model's target is users; over HTTP/2 and HTTP/3 they are streams, drawn on
    // the connections' chart as the connections they fill.
    let per_connection = d.config.streams.filter(|_| d.config.model == Model::Closed);
    let targets: Vec<(f64, f64)> = view
        .targets
        .iter()
        .map(|&(t, v)| {
            (
                t,
                per_connection.map_or(v, |m| (v / m.max(1) as f64).ceil()),
            )
        })
        .collect();
    let mut run = run_figure(d);
    run.title = "Throughput and latency".into();
    let mut generator = generator_figure(d);
    generator.title = "The generator (herd itself)".into();
    let plan = |label: &str| Series::line(label, palette::GREY, targets.clone()).dashed();
    if !targets.is_empty() {
        let (fig, id, label) = match d.config.model {
            Model::Open => (&mut run, "chart-throughput", "target rate (the plan)"),
            Model::Closed => (
                &mut generator,
                "chart-generator-connections",
                if per_connection.is_some() {
                    "connections the plan asks for"
                } else {
                    "users the plan asks for"
                },
            ),
        };
        if let Some(p) = fig.panels.iter_mut().find(|p| p.id == id) {
            p.series.retain(|s| s.label != "target rate");
            let top = targets.iter().map(|t| t.1).fold(0.0, f64::max) * 1.05;
            p.y_range.1 = p.y_range.1.max(top);
            p.series.push(plan(label));
        }
    }
    let mut statuses = statuses_figure(d);
    statuses.title = "Replies and errors".into();
    let mut all = vec![run, statuses];
    // An LLM's streams: time to first token and inter-token latency, second by second.
    all.extend(streams_figure(d));
    // A WebSocket's pings, send backlog and closes, second by second.
    all.extend(sockets_figure(d));
    all.push(generator);
    if let Some(mut server) = server_figure(d) {
        server.title = "The server".into();
        all.push(server);
    }
    // A line with nothing to draw (the service time while the run goes on: the records carry
    // latency histograms only) would be a legend without a line.
    for p in all.iter_mut().flat_map(|f| f.panels.iter_mut()) {
        p.series.retain(|s| !s.points.is_empty());
    }
    all.retain(|f| !f.panels.is_empty());
    all
}

/// Status codes (classes while the run goes on), errors by class, and each request name.
fn tables(out: &mut String, view: &Frame, d: &RunResult) {
    let mut statuses: BTreeMap<String, u64> = d.status.clone();
    if statuses.is_empty() {
        for e in &d.timeline {
            for (k, n) in &e.status_class {
                *statuses.entry(k.clone()).or_default() += n;
            }
        }
    }
    out.push_str("<div class=\"tables\">");
    table(out, "statuses", "Status", &statuses);
    table(out, "errors", "Error", &d.errors);
    if !d.by_name.is_empty() {
        // While the run goes on, the rate is the last whole second's; at the end, the run's.
        let per_second = if view.ended { "req/s" } else { "req/s now" };
        let _ = write!(
            out,
            "<table id=\"names\"><thead><tr><th>Request</th><th>requests</th>\
             <th>{per_second}</th><th>ok</th><th>not ok</th><th>p50</th><th>p99</th></tr>\
             </thead><tbody>"
        );
        for n in &d.by_name {
            let ended = n.totals.completed + n.totals.errors;
            let not_ok = n.totals.failed + n.totals.errors;
            let rps = match view.ended {
                true => n.throughput_rps,
                false => view.names_now.get(&n.name).copied().unwrap_or(0) as f64,
            };
            let _ = write!(
                out,
                "<tr data-name=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                esc(&n.name),
                esc(&n.name),
                count(ended),
                rate(rps),
                count(n.totals.ok),
                count(not_ok),
                duration_ms(n.latency_ms.p50),
                duration_ms(n.latency_ms.p99),
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</div>\n");
}

fn table(out: &mut String, id: &str, heading: &str, rows: &BTreeMap<String, u64>) {
    let _ = write!(
        out,
        "<table id=\"{id}\"><thead><tr><th>{heading}</th><th>count</th></tr></thead><tbody>"
    );
    if rows.is_empty() {
        out.push_str("<tr><td colspan=\"2\">none</td></tr>");
    }
    for (k, n) in rows {
        let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", esc(k), count(*n));
    }
    out.push_str("</tbody></table>");
}

/// The page's view of a series: where it is, the levels so far, the run going on.
pub fn series_fragment(levels: &Levels, run: &Frame, report: &str) -> String {
    let mut out = String::new();
    let done = levels.rows.len();
    let (state, text) = match (levels.done, &levels.step) {
        (true, _) if levels.interrupted => (
            "finished",
            format!("Finished: stopped after {done} level(s). {report}"),
        ),
        (true, _) => ("finished", format!("Finished: {done} level(s). {report}")),
        (false, Some(step)) => (
            "running",
            format!("Running the step at {step}; {done} level(s) done."),
        ),
        (false, None) => ("running", "Starting…".to_owned()),
    };
    let _ = writeln!(out, "<p id=\"series\">{}</p>", esc(&levels.what));
    let _ = writeln!(
        out,
        "<p id=\"series-status\" class=\"{state}\" data-state=\"{state}\" data-levels=\"{done}\">{}</p>",
        esc(&text)
    );
    let target = if levels.named { "<th>target</th>" } else { "" };
    let _ = write!(
        out,
        "<table id=\"levels\"><thead><tr><th>asked</th>{target}<th>achieved</th><th>p50</th>\
         <th>p99</th><th>errors</th><th>verdict</th></tr></thead><tbody>"
    );
    if levels.rows.is_empty() {
        out.push_str("<tr><td colspan=\"7\">none finished yet</td></tr>");
    }
    for r in &levels.rows {
        let target = if levels.named {
            format!("<td>{}</td>", esc(&r.target))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<tr class=\"level\"><td>{}</td>{target}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.asked),
            esc(&r.achieved),
            duration_ms(r.p50_ms),
            duration_ms(r.p99_ms),
            percent(r.errors_percent),
            esc(&r.verdict),
        );
    }
    out.push_str("</tbody></table>\n");
    if let (false, Some(step)) = (levels.done, &levels.step) {
        let _ = writeln!(out, "<section id=\"step\"><h2>Now: {}</h2>", esc(step));
        out.push_str(&run_fragment(run, ""));
        out.push_str("</section>\n");
    }
    out
}
