//! A run that watched its server and itself: the server's resources and the generator's
//! per-second record on the run's own time axis, where they line up with its throughput.

use crate::fixtures::{self, OPEN, WATCHED};
use crate::html::{points, series_paths};
use herd_report::html;
use serde_json::Value;

fn chart<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    &page[start..start + page[start..].find("</figure>").unwrap()]
}

fn hover(page: &str, id: &str) -> Value {
    let data = chart(page, id).split("data-hover=\"").nth(1).unwrap();
    serde_json::from_str(&data[..data.find('"').unwrap()].replace("&quot;", "\"")).unwrap()
}

/// The tick labels along a chart's x axis, and its title.
fn x_ticks(page: &str, id: &str) -> Vec<String> {
    let mut labels: Vec<String> = chart(page, id)
        .split("text-anchor=\"middle\">")
        .skip(1)
        .map(|t| t[..t.find('<').unwrap()].to_owned())
        .collect();
    labels.pop(); // the y axis' title
    labels
}

#[test]
fn the_server_is_drawn_on_the_runs_time_axis_in_the_second_it_covers() {
    let r = fixtures::run(WATCHED);
    let page = html::render_run(&r);
    // Right under the charts over time, before the distribution's page of percentiles.
    let server = page.find("<section id=\"server\"").unwrap();
    assert!(server > page.find("<section id=\"statuses\"").unwrap());
    assert!(server < page.find("<section id=\"tables\"").unwrap());
    let throughput_axis = x_ticks(&page, "chart-throughput");
    for id in [
        "chart-server-cpu",
        "chart-server-memory",
        "chart-server-counts",
        "chart-server-ctx",
        "chart-server-metric-1",
        "chart-generator-cpu",
        "chart-generator-lag",
    ] {
        assert_eq!(x_ticks(&page, id), throughput_axis, "{id}: the same axis");
    }
    // nginx's worker read CPU at t = 1 .. 8: each reading covers the second before it and is
    // drawn over that second of the timeline. The warm-up's reading (t = 0.001) and the one
    // after the end (t = 8.212) are left out.
    let cpu = hover(&page, "chart-server-cpu");
    let throughput = hover(&page, "chart-throughput");
    // The throughput chart also has the ends of the target rate's line, at 0 and 8 s.
    assert_eq!(
        cpu["x"].as_array().unwrap()[..],
        throughput["x"].as_array().unwrap()[1..9],
        "the same seconds"
    );
    assert_eq!(cpu["t"][2], "2–3 s");
    assert_eq!(cpu["s"][1]["n"], "pid 28884 CPU");
    assert_eq!(cpu["s"][1]["v"][2], "5.00%", "the reading at t = 3");
    // Memory is read at an instant: drawn where it was read, from the measurement's start.
    let memory = hover(&page, "chart-server-memory");
    assert_eq!(memory["t"][0], "at 0 us", "read as the measurement began");
    assert_eq!(memory["t"][1], "at 1.00 s");
    // A counter's rate covers the interval between scrapes; a gauge is read at the scrape.
    assert!(page.contains("node_context_switches_total, per second"));
    let gauge = series_paths(&page, "chart-server-metric-2");
    assert_eq!(points(gauge[0]), 9, "node_load1 at 0.017 .. 8.024 s");
}

#[test]
fn the_generators_own_seconds_are_drawn_with_its_limits() {
    let r = fixtures::run(WATCHED);
    let page = html::render_run(&r);
    let n = r.generator.timeline.len();
    let cpu = series_paths(&page, "chart-generator-cpu");
    assert_eq!(cpu.len(), 1, "one worker thread");
    assert_eq!(points(cpu[0]), n);
    assert!(chart(&page, "chart-generator-cpu").contains(">one core<"));
    assert_eq!(
        hover(&page, "chart-generator-lag")["s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["n"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "send lag p99 (late against the schedule)",
            "event-loop delay, max (late 10 ms ticks)"
        ]
    );
    assert_eq!(series_paths(&page, "chart-generator-connections").len(), 2);
    assert_eq!(series_paths(&page, "chart-generator-ports").len(), 1);
    // Peaks against limits: 102 of 20,000 descriptors, 1,121 of 28,232 local ports.
    let limits = &page[page.find("class=\"bars limits\"").unwrap()..];
    let limits = &limits[..limits.find("</table>").unwrap()];
    assert!(
        limits.contains("<td>102</td><td>20,000</td><td>0.510%</td>"),
        "{limits}"
    );
    assert!(
        limits.contains("<td>1,121</td><td>28,232</td><td>3.97%</td>"),
        "{limits}"
    );
    assert!(page.contains("85 opened, at most 85 at once"));
}

#[test]
fn a_result_from_before_the_self_watch_still_reads() {
    let page = html::render_run(&fixtures::run(OPEN));
    assert!(page.contains("no per-second record of the generator"));
    assert!(!page.contains("id=\"chart-generator-cpu\""));
    assert!(!page.contains("<section id=\"server\""));
}
