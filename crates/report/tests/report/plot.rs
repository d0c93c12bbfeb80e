//! Plots of sweeps: what the figure holds (series per target, crossed-out steps), and that the
//! PNG and SVG it renders to are real pictures with readable labels.

use herd_report::figure::{palette, Figure};
use herd_report::html;
use herd_report::plot::{render, sweep_figure, Format, XAxis};
use herd_result::sweep::{read_table, Extra, Row, Table, TableStep};
use herd_result::{GeneratorVerdict, Model};

const AUTOBENCH: &str = include_str!("../../../result/tests/fixtures/autobench_seed001.tsv");

fn row(rate: f64, generator: GeneratorVerdict) -> Row {
    Row {
        req_rate: rate,
        avg_rep_rate: rate.min(300.0),
        resp_time: 2.0,
        errors: if rate > 300.0 { 5.0 } else { 0.0 },
        extra: Some(Extra {
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.0,
            ok: 10,
            failed: 0,
            generator,
        }),
        ..Row::default()
    }
}

fn two_targets(model: Model, levels: &[f64]) -> Table {
    Table {
        model,
        targets: vec!["nginx".into(), "hunchentoot".into()],
        named: true,
        steps: levels
            .iter()
            .map(|&l| TableStep {
                level: l,
                rows: vec![
                    row(l, GeneratorVerdict::Ok),
                    row(
                        l,
                        if l >= 400.0 {
                            GeneratorVerdict::GeneratorLimited
                        } else {
                            GeneratorVerdict::Ok
                        },
                    ),
                ],
            })
            .collect(),
    }
}

#[test]
fn a_sweep_figure_has_a_line_per_target_and_crosses_out_limited_steps() {
    let fig = sweep_figure(&two_targets(Model::Open, &[100.0, 200.0, 400.0]), "cmp");
    assert_eq!(fig.panels.len(), 3);
    let rate = &fig.panels[0];
    let labels: Vec<&str> = rate.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "nginx good replies/s",
            "nginx replies/s (any status)",
            "hunchentoot good replies/s",
            "hunchentoot replies/s (any status)",
            "demanded"
        ]
    );
    assert_eq!(
        rate.series[0].points,
        // Good replies: 5% of the 300 replies/s at 400 req/s were errors.
        [(100.0, 100.0), (200.0, 200.0), (400.0, 285.0)]
    );
    assert!(rate.series[0].suspect.is_empty());
    assert_eq!(rate.series[2].suspect, [(400.0, 285.0)]);
    // The demanded rate is the diagonal, from the lowest level to the highest.
    assert_eq!(rate.series[4].points, [(100.0, 100.0), (400.0, 400.0)]);
    assert!(fig.title.contains("herd was the bottleneck"));
    // Response time: p50 and p99 per target; errors: one per target.
    assert_eq!(fig.panels[1].series.len(), 4);
    assert_eq!(fig.panels[2].series.len(), 2);
    // The axis title both back ends print (the HTML page's since the model frames its charts).
    assert_eq!(fig.panels[2].y_label, "not ok (%)");
}

#[test]
fn seed_004s_users_get_a_log_axis() {
    let fig = sweep_figure(
        &two_targets(Model::Closed, &[1.0, 5.0, 10.0, 100.0, 1000.0]),
        "users",
    );
    assert_eq!(fig.panels[0].x_axis, XAxis::Log10);
    assert_eq!(fig.panels[0].x_label, "concurrent users");
    assert_eq!(fig.panels[0].title, "Throughput");
    // No "demanded" line: users are not a rate.
    assert_eq!(fig.panels[0].series.len(), 4);
}

#[test]
fn autobenchs_tsv_renders_to_a_png_with_something_drawn() {
    let table = read_table(AUTOBENCH, "out_192.168.1.5.tsv", "out").unwrap();
    let png = render(&sweep_figure(&table, "out_192.168.1.5"), Format::Png).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(&png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1000, 1200));
    let pixels = &buf[..info.buffer_size()];
    let inked = pixels
        .chunks(3)
        .filter(|p| p.iter().any(|&c| c < 200))
        .count();
    let total = pixels.len() / 3;
    // Lines, axes and text, but mostly white paper.
    assert!(inked > total / 100, "{inked} of {total} pixels drawn");
    assert!(inked < total / 2, "{inked} of {total} pixels drawn");
    // The series colour (the first of the palette) is there: a line was drawn, not only axes.
    let (r, g, b) = palette::rgb(palette::cycle(0));
    let blue = pixels.chunks(3).filter(|p| p == &[r, g, b]).count();
    assert!(blue > 500, "{blue} pixels of the series colour");
}

#[test]
fn the_svg_names_its_axes_and_every_target() {
    let svg = render(
        &sweep_figure(&two_targets(Model::Open, &[100.0, 200.0, 400.0]), "cmp"),
        Format::Svg,
    )
    .unwrap();
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    for text in [
        "demanded rate (req/s)",
        "replies/s",
        "Response time",
        "Errors",
        "nginx good replies/s",
        "hunchentoot replies/s (any status)",
        "nginx p99",
        "hunchentoot not ok",
    ] {
        assert!(svg.contains(text), "the SVG lacks {text:?}");
    }
    // One polyline per solid series: 2 good rates, 2 p50 lines, 2 error lines (dashed ones are
    // segments),
    // 2 error lines.
    assert!(svg.matches("<polyline").count() >= 5);
}

#[test]
fn an_empty_table_is_refused_not_drawn_blank() {
    let t = Table {
        model: Model::Open,
        targets: vec!["x".into()],
        named: false,
        steps: Vec::new(),
    };
    let e = render(&sweep_figure(&t, "empty"), Format::Png).unwrap_err();
    assert!(e.to_string().contains("nothing to plot"), "{e}");
}

/// The (name, colour) of every series in each chart of an HTML page, from the hover data the
/// page's script reads.
fn html_series(page: &str) -> Vec<Vec<(String, String)>> {
    page.split("data-hover=\"")
        .skip(1)
        .map(|rest| {
            let raw = &rest[..rest.find('"').unwrap()];
            let json = raw.replace("&quot;", "\"").replace("&amp;", "&");
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            v["s"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["n"].as_str().unwrap().into(),
                        s["c"].as_str().unwrap().into(),
                    )
                })
                .collect()
        })
        .collect()
}

/// The hover positions of each chart's x axis, in viewBox units.
fn html_xs(page: &str) -> Vec<Vec<f64>> {
    page.split("data-hover=\"")
        .skip(1)
        .map(|rest| {
            let json = rest[..rest.find('"').unwrap()].replace("&quot;", "\"");
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            v["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn pixels_of(png_bytes: &[u8], hex: &str) -> usize {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (r, g, b) = palette::rgb(hex);
    buf[..info.buffer_size()]
        .chunks(3)
        .filter(|p| p == &[r, g, b])
        .count()
}

#[test]
fn one_sweep_figure_draws_the_same_series_colours_and_axes_in_both_back_ends() {
    let fig: Figure = sweep_figure(
        &two_targets(Model::Closed, &[1.0, 10.0, 100.0, 1000.0]),
        "users",
    );
    let want: Vec<Vec<(String, String)>> = fig
        .panels
        .iter()
        .map(|p| {
            p.series
                .iter()
                .map(|s| (s.label.clone(), s.color.to_owned()))
                .collect()
        })
        .collect();
    // Targets keep their palette colour in every panel.
    assert_eq!(want[0][0].1, palette::cycle(0));
    assert_eq!(want[0][2].1, palette::cycle(1));
    assert!(fig.panels.iter().all(|p| p.x_axis == XAxis::Log10));

    // The HTML back end: the same series, names and colours, chart by chart.
    let page = html::figure_svg(&fig);
    let crosses = "limited by herd, not the target";
    let mut drawn = html_series(&page);
    for (chart, panel) in drawn.iter_mut().zip(&fig.panels) {
        // Suspect points are crossed out, with a key of their own.
        let limited = panel.series.iter().any(|s| !s.suspect.is_empty());
        assert_eq!(chart.iter().any(|(n, _)| n == crosses), limited);
        chart.retain(|(n, _)| n != crosses);
    }
    assert_eq!(drawn, want);
    // ...on a log axis: 1, 10, 100 and 1,000 users are equally spaced.
    for xs in html_xs(&page) {
        let gaps: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps.len(), 3, "{xs:?}");
        assert!(gaps.iter().all(|g| (g - gaps[0]).abs() < 0.2), "{xs:?}");
    }

    // The plotters back end: every label in the SVG, every colour in the SVG and the PNG.
    let svg = String::from_utf8(render(&fig, Format::Svg).unwrap()).unwrap();
    let png = render(&fig, Format::Png).unwrap();
    for (label, color) in want.iter().flatten() {
        assert!(svg.contains(label.as_str()), "the SVG lacks {label:?}");
        assert!(
            svg.to_ascii_uppercase()
                .contains(&color.to_ascii_uppercase()),
            "the SVG lacks {label:?}'s colour {color}"
        );
        assert!(pixels_of(&png, color) > 100, "the PNG lacks {color}");
    }
}

#[test]
fn a_log_y_axis_is_drawn_by_both_back_ends() {
    // p99 of 3 ms against replies in the hundreds: the rate panel stays linear, and a latency
    // panel with p99 far above p50 goes logarithmic.
    let mut t = two_targets(Model::Open, &[100.0, 200.0, 400.0]);
    for step in &mut t.steps {
        for row in &mut step.rows {
            row.extra.as_mut().unwrap().p99 = 500.0;
        }
    }
    let fig = sweep_figure(&t, "slow tail");
    assert_eq!(fig.panels[0].y_axis, XAxis::Linear);
    assert_eq!(fig.panels[1].y_axis, XAxis::Log10);
    let png = render(&fig, Format::Png).unwrap();
    assert!(pixels_of(&png, palette::cycle(1)) > 100);
    let page = html::figure_svg(&fig);
    let latency = &html_series(&page)[1];
    let lines = latency
        .iter()
        .filter(|(n, _)| !n.starts_with("limited by herd"));
    assert_eq!(lines.count(), 4, "{latency:?}");
}

#[test]
fn knees_and_stop_rules_are_marks_both_back_ends_draw() {
    let text = include_str!("../../../result/tests/fixtures/sweep-open.json");
    let Ok(herd_result::Document::Sweep(s)) = herd_result::parse_document(text, "sweep-open.json")
    else {
        panic!("not a sweep")
    };
    let fig = herd_report::figure::sweep_result_figure(&s, "sweep-open");
    let labels: Vec<&str> = fig.panels[2]
        .marks
        .iter()
        .map(|m| m.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "stop rule: errors > 10%",
            "knee small: ~300",
            "knee big: ~500"
        ]
    );
    let svg = String::from_utf8(render(&fig, Format::Svg).unwrap()).unwrap();
    let page = html::figure_svg(&fig);
    for m in fig.panels.iter().flat_map(|p| &p.marks) {
        assert!(
            svg.contains(&m.label.replace('>', "&gt;")),
            "the SVG lacks {:?}",
            m.label
        );
        assert!(
            page.contains(&m.label.replace('>', "&gt;")),
            "the page lacks {:?}",
            m.label
        );
    }
}
