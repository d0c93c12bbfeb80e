//! Pages of sweeps and capacity searches, from results real runs wrote (see
//! crates/result/tests/fixtures/README.md): the answer first, saturation curves one line per
//! target, the knee, limits and marks where herd was the bottleneck, and the tables.

use crate::fixtures::{self, CAPACITY_OPEN, CAPACITY_USERS, SWEEP_CLOSED, SWEEP_OPEN};
use crate::html::{points, series_paths};
use herd_report::figure::palette;
use herd_report::html;
use herd_result::capacity::Undecided;
use herd_result::{parse_document, Document, GeneratorVerdict};

/// The HTML of one chart, by id.
fn chart<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    &page[start..start + page[start..].find("</figure>").unwrap()]
}

/// The hover data of a chart.
fn hover(page: &str, id: &str) -> serde_json::Value {
    let c = chart(page, id);
    let data = c.split("data-hover=\"").nth(1).unwrap();
    serde_json::from_str(&data[..data.find('"').unwrap()].replace("&quot;", "\"")).unwrap()
}

fn legend(page: &str, id: &str) -> Vec<String> {
    hover(page, id)["s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["n"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_fixtures_are_read_as_what_they_are() {
    for (text, kind) in [
        (SWEEP_OPEN, "sweep"),
        (SWEEP_CLOSED, "sweep"),
        (CAPACITY_OPEN, "capacity"),
        (CAPACITY_USERS, "capacity"),
    ] {
        let doc = parse_document(text, "fixture").unwrap();
        assert_eq!(doc.kind(), kind);
        let page = html::render_document(&doc);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(!page.contains("no data"), "every chart has data");
    }
    assert!(matches!(
        parse_document(SWEEP_OPEN, "s.json"),
        Ok(Document::Sweep(_))
    ));
}

#[test]
fn a_sweep_says_where_each_target_saturated_first() {
    let s = fixtures::sweep(SWEEP_OPEN);
    let page = html::render_sweep(&s);
    let verdict = &page[page.find("id=\"verdict\"").unwrap()..page.find("id=\"curves\"").unwrap()];
    assert!(verdict.contains(">STOPPED EARLY<"), "{verdict}");
    // The same sentences the live table ends with.
    for k in s.knees() {
        assert!(verdict.contains(&k.sentence(s.model)), "{verdict}");
    }
    assert!(verdict.contains("small: saturates between 200 and 300 req/s asked"));
    // Latency and errors are part of the conclusion, not the throughput alone.
    assert!(verdict.contains("p99 rises past 3x its lowest (9.20 ms at 100 req/s) from 300 req/s"));
    assert!(verdict.contains("errors from 300 req/s (26.7%, up to 63.3%)"));
    assert!(verdict.contains("big: saturates between 400 and 500 req/s asked"));
    assert!(verdict.contains("generator ok on every step"));
    assert!(
        verdict.contains("stopped early: every target broke the stop rule for 2 steps in a row")
    );
}

#[test]
fn a_sweep_draws_one_line_per_target_against_the_demanded_rate() {
    let s = fixtures::sweep(SWEEP_OPEN);
    let page = html::render_sweep(&s);
    let steps = s.steps.len();
    assert_eq!(
        legend(&page, "chart-sweep-throughput"),
        [
            "small good replies/s",
            "small replies/s (any status)",
            "big good replies/s",
            "big replies/s (any status)",
            "demanded"
        ]
    );
    let lines = series_paths(&page, "chart-sweep-throughput");
    assert!(lines[..4].iter().all(|d| points(d) == steps), "{lines:?}");
    assert_eq!(points(lines[4]), 2, "demanded: the diagonal");
    assert_eq!(
        legend(&page, "chart-sweep-latency"),
        ["small p50", "small p99", "big p50", "big p99"]
    );
    assert_eq!(
        legend(&page, "chart-sweep-errors"),
        ["small not ok", "big not ok"]
    );
    // Levels on the x axis, each step a dot, the knee of each target and the stop rule drawn.
    let throughput = chart(&page, "chart-sweep-throughput");
    assert!(throughput.contains("demanded rate (req/s)"));
    assert_eq!(throughput.matches("<circle").count(), 4 * steps);
    assert!(throughput.contains(">knee small: ~300<") && throughput.contains(">knee big: ~500<"));
    assert!(chart(&page, "chart-sweep-errors").contains(">stop rule: errors &gt; 10%<"));
    // The latency spans 1 ms to 200 ms: a log axis keeps both readable.
    assert!(chart(&page, "chart-sweep-latency").contains("latency (log scale)"));
    // Hover: the level asked, and each target's value there.
    let h = hover(&page, "chart-sweep-errors");
    assert_eq!(h["t"][2], "300 req/s asked");
    assert_eq!(h["s"][0]["v"][2], "26.7%");
    assert_eq!(h["s"][1]["v"][2], "0%");
    // The table: a row per target per step.
    let table = &page[page.find("class=\"sweep-steps\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 1 + 2 * steps);
    assert!(table
        .contains("<td>300</td><td>small</td><td>300</td><td>260 / 300 / 340</td><td>220</td>"));
}

#[test]
fn steps_where_herd_was_the_bottleneck_are_crossed_out() {
    let mut s = fixtures::sweep(SWEEP_OPEN);
    let g = &mut s.steps[3].runs[1].generator;
    g.verdict = GeneratorVerdict::GeneratorLimited;
    g.reasons = vec!["send lag p99 120 ms".into()];
    let page = html::render_sweep(&s);
    assert!(page.contains(">SOME STEPS NOT VALID: GENERATOR-LIMITED<"));
    assert!(page.contains("1 of 12 runs limited by herd, not the server"));
    for id in [
        "chart-sweep-throughput",
        "chart-sweep-latency",
        "chart-sweep-errors",
    ] {
        let c = chart(&page, id);
        let want = if id == "chart-sweep-errors" { 1 } else { 2 };
        assert_eq!(c.matches("<path class=\"cross\"").count(), want, "{id}");
        assert!(
            c.contains("limited by herd, not the target"),
            "{id}: legend"
        );
    }
    let h = hover(&page, "chart-sweep-errors");
    assert_eq!(h["s"][1]["v"][3], "0% (limited by herd, not the target)");
    assert!(page.contains(
        "<span class=\"limited\" title=\"send lag p99 120 ms\">LIMITED: herd, not the server</span>"
    ));
}

#[test]
fn a_closed_sweep_is_drawn_against_users_on_a_log_axis() {
    let s = fixtures::sweep(SWEEP_CLOSED);
    let page = html::render_sweep(&s);
    // Good replies were flat from 1 user and 50 was no knee (it once read "saturates at ~50").
    assert!(page.contains(
        "127.0.0.1:18600: saturated from the first level: at 1 user good replies (200 req/s) were \
         already within 10% of their best (220 req/s); the knee lies at or below 1 user"
    ));
    let throughput = chart(&page, "chart-sweep-throughput");
    assert!(throughput.contains("Throughput against concurrent users"));
    assert!(throughput.contains(">concurrent users<"));
    // 1, 5, 10, 50, 100 users: ticks of a log axis, and no demanded diagonal.
    for tick in [">1<", ">2<", ">5<", ">10<", ">20<", ">50<", ">100<"] {
        assert!(throughput.contains(tick), "{tick}");
    }
    assert!(!throughput.contains("demanded"));
    // 503s came back a hundred times faster than the good replies: a log axis keeps both seen.
    assert!(throughput.contains("replies per second (req/s, log scale)"));
    assert_eq!(hover(&page, "chart-sweep-latency")["t"][3], "50 users");
    assert!(page.contains("<th>users</th>"));
}

#[test]
fn a_capacity_report_leads_with_the_answer() {
    let c = fixtures::capacity(CAPACITY_OPEN);
    let page = html::render_capacity(&c);
    let verdict = &page[page.find("id=\"verdict\"").unwrap()..page.find("id=\"figures\"").unwrap()];
    assert!(verdict.contains(">CAPACITY: 400 req/s<"), "{verdict}");
    assert!(verdict.contains(
        "sustains 400 req/s with p99 &lt; 100 ms and errors &lt; 1%; beyond ~413 req/s p99 rises above 100 ms"
    ));
    assert!(verdict.contains("SLO: p99 &lt; 100 ms and errors &lt; 1%"));
    assert!(verdict.contains("11 probes") && verdict.contains("generator ok on every probe"));
    let figures = &page[page.find("id=\"figures\"").unwrap()..];
    assert!(figures.contains(">~413 req/s<") && figures.contains(">~425 req/s<"));
}

#[test]
fn a_capacity_report_draws_the_slo_the_answer_and_the_search() {
    let c = fixtures::capacity(CAPACITY_OPEN);
    let page = html::render_capacity(&c);
    // 11 probes at 9 levels (400 and 413 req/s twice): one point per level on the curves.
    let levels = 9;
    let good = series_paths(&page, "chart-capacity-throughput");
    assert_eq!(points(good[0]), levels);
    let throughput = chart(&page, "chart-capacity-throughput");
    for rule in [
        ">capacity: 400 req/s<",
        ">breaks: ~413 req/s<",
        ">knee: ~425 req/s<",
    ] {
        assert!(throughput.contains(rule), "{rule}");
    }
    assert_eq!(legend(&page, "chart-capacity-latency"), ["p50", "p99"]);
    assert!(chart(&page, "chart-capacity-latency").contains(">SLO: p99 &lt; 100 ms<"));
    assert!(chart(&page, "chart-capacity-errors").contains(">SLO: errors &lt; 1%<"));
    // The search: every probe in the order run, held in green, broken in red.
    let h = hover(&page, "chart-capacity-search");
    assert_eq!(h["t"].as_array().unwrap().len(), c.probes.len());
    assert_eq!(h["t"][9], "probe 10: confirm, 4.00 s");
    let held = h["s"][1]["v"].as_array().unwrap();
    let broke = h["s"][2]["v"].as_array().unwrap();
    assert_eq!(held.iter().filter(|v| !v.is_null()).count(), 5);
    assert_eq!(broke.iter().filter(|v| !v.is_null()).count(), 6);
    // The probes table, as the command printed it.
    let table = &page[page.find("class=\"capacity-probes\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 1 + c.probes.len());
    assert!(table.contains("<td>9</td><td>narrow</td><td>413 req/s</td><td>2.00 s</td><td>413</td><td>0%</td><td>72.1 ms</td><td><span class=\"improved\">held</span></td>"), "{table}");
    assert!(table.contains("broke: p99 127 ms &gt;= 100 ms"));
}

#[test]
fn a_capacity_in_users_counts_users() {
    let c = fixtures::capacity(CAPACITY_USERS);
    let page = html::render_capacity(&c);
    assert!(page.contains(">CAPACITY: 4 users<"));
    assert!(page.contains("sustains 4 concurrent users with p99 &lt; 30.0 ms"));
    assert!(chart(&page, "chart-capacity-latency").contains(">capacity: 4 users<"));
    assert_eq!(hover(&page, "chart-capacity-errors")["t"][0], "1 user");
    assert!(!chart(&page, "chart-capacity-throughput").contains("offered"));
}

#[test]
fn a_capacity_without_an_answer_says_why() {
    let mut c = fixtures::capacity(CAPACITY_OPEN);
    c.capacity_rps = None;
    c.ceiling = None;
    c.undecided = Some(Undecided::Noisy { level: 413.0 });
    c.sentence = herd_result::capacity::sentence(&c);
    let page = html::render_capacity(&c);
    assert!(page.contains(">NO ANSWER: TOO NOISY<"));
    assert!(page.contains("cannot decide the capacity of http://127.0.0.1:18600/big/"));
    assert!(!page.contains(">capacity: "), "no capacity drawn");
    c.probes[2].generator = GeneratorVerdict::GeneratorLimited;
    c.undecided = Some(Undecided::GeneratorLimited {
        level: 400.0,
        reasons: vec!["cpu".into()],
        at_least: Some(200.0),
    });
    let page = html::render_capacity(&c);
    assert!(page.contains(">NO ANSWER: HERD WAS THE BOTTLENECK<"));
    assert!(page.contains("1 probe limited by herd, run again"));
    assert!(chart(&page, "chart-capacity-search").contains("<path class=\"cross\""));
}

#[test]
fn a_series_cut_short_before_its_first_step_says_so() {
    let mut s = fixtures::sweep(SWEEP_OPEN);
    s.steps.clear();
    s.stopped_early = None;
    s.interrupted = true;
    let page = html::render_sweep(&s);
    assert!(page.contains(">INTERRUPTED<"));
    assert!(page.contains("No step finished"));
    assert!(!page.contains("<figure"));
    let mut c = fixtures::capacity(CAPACITY_OPEN);
    c.probes.clear();
    c.interrupted = true;
    c.capacity_rps = None;
    c.sentence = herd_result::capacity::sentence(&c);
    let page = html::render_capacity(&c);
    assert!(page.contains(">INTERRUPTED<") && page.contains("No probe finished"));
    assert!(page.contains("interrupted after 0 probes"));
}

#[test]
fn herd_report_draws_the_series_herd_plot_draws_in_the_same_colours_on_the_same_axis() {
    use herd_report::figure::{sweep_figure, XAxis};
    for (text, axis) in [(SWEEP_OPEN, XAxis::Linear), (SWEEP_CLOSED, XAxis::Log10)] {
        let s = fixtures::sweep(text);
        let fig = sweep_figure(&s.table(), "fixture");
        let page = html::render_sweep(&s);
        let ids = [
            "chart-sweep-throughput",
            "chart-sweep-latency",
            "chart-sweep-errors",
        ];
        for (panel, id) in fig.panels.iter().zip(ids) {
            let plotted: Vec<(&str, &str)> = panel
                .series
                .iter()
                .map(|l| (l.label.as_str(), l.color))
                .collect();
            let drawn = hover(&page, id);
            let drawn: Vec<(&str, &str)> = drawn["s"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (d["n"].as_str().unwrap(), d["c"].as_str().unwrap()))
                .filter(|(n, _)| *n != "limited by herd, not the target")
                .collect();
            assert_eq!(drawn, plotted, "{id}");
            assert_eq!(panel.x_axis, axis);
            // The y axis is logarithmic on the page when it is in the figure.
            let log_y = panel.y_axis == XAxis::Log10;
            let y_title = chart(&page, id).contains("log scale)");
            assert_eq!(y_title, log_y, "{id}");
        }
        // SWEEP_OPEN's latency spans 1 to 200 ms: both back ends draw it on a log axis.
        if text == SWEEP_OPEN {
            assert_eq!(fig.panels[1].y_axis, XAxis::Log10);
        }
        // Each target has one colour, the n-th of the palette, in every chart.
        for (i, target) in s.targets.iter().enumerate() {
            let mine = fig.panels.iter().flat_map(|p| &p.series);
            // One target's lines are not named after it.
            let one = s.targets.len() == 1;
            let mine: Vec<_> = mine
                .filter(|l| l.label != "demanded")
                .filter(|l| one || l.label.starts_with(&target.name))
                .collect();
            assert!(!mine.is_empty());
            assert!(mine.iter().all(|l| l.color == palette::cycle(i)));
        }
        // The page's x axis is the same kind: on a log axis 1 to 10 users is as wide as
        // 10 to 100.
        if axis == XAxis::Log10 {
            let xs: Vec<f64> = hover(&page, ids[0])["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let levels: Vec<f64> = s.steps.iter().map(|st| st.level).collect();
            assert_eq!(levels, [1.0, 5.0, 10.0, 50.0, 100.0]);
            assert!(((xs[2] - xs[0]) - (xs[4] - xs[2])).abs() < 0.2, "{xs:?}");
        }
    }
}

#[test]
fn herd_plot_draws_a_capacity_search_as_the_page_draws_it() {
    let doc = parse_document(CAPACITY_OPEN, "capacity-open.json").unwrap();
    let Document::Capacity(c) = doc else {
        panic!("not a capacity result")
    };
    let fig = herd_report::figure::capacity_figure(&c);
    let page = html::render_capacity(&c);
    let plotted: Vec<f64> = fig.panels[0].series[0].points.iter().map(|p| p.0).collect();
    let levels: Vec<f64> = c.by_level().iter().map(|p| p.level).collect();
    assert_eq!(plotted, levels);
    // One point per level, though levels were probed more than once.
    assert!(c.probes.len() > levels.len());
    let ids = [
        "chart-capacity-throughput",
        "chart-capacity-latency",
        "chart-capacity-errors",
    ];
    for (panel, id) in fig.panels.iter().zip(ids) {
        let drawn = hover(&page, id);
        let drawn: Vec<(&str, &str)> = drawn["s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["n"].as_str().unwrap(), d["c"].as_str().unwrap()))
            .filter(|(n, _)| *n != "limited by herd, not the target")
            .collect();
        let plotted: Vec<(&str, &str)> = panel
            .series
            .iter()
            .map(|l| (l.label.as_str(), l.color))
            .collect();
        assert_eq!(drawn, plotted, "{id}");
        for m in &panel.marks {
            let label = m.label.replace('<', "&lt;");
            assert!(
                chart(&page, id).contains(&format!(">{label}<")),
                "{id}: {label}"
            );
        }
    }
    assert_eq!(fig.panels[1].marks[0].label, "SLO: p99 < 100 ms");
}
