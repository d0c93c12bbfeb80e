//! Every kind of figure the report pages draw, drawn to PNG by plotters: the picture has the
//! size its panels ask for, is not blank, and shows every series' colour (lines, dashed lines,
//! points alone, stacked bars).

use super::{render, size, Format, PANEL_SIZE};
use crate::figure::*;
use crate::{parse_document, parse_json, Document, RunResult};

const WATCHED: &str = include_str!("../../../result/tests/fixtures/run-watched.json");
const ERRORS: &str = include_str!("../../../result/tests/fixtures/run-closed-errors.json");
const OPEN: &str = include_str!("../../../result/tests/fixtures/run-open.json");
const WORKLOAD: &str = include_str!("../../../result/tests/fixtures/run-workload.json");

fn run(text: &str) -> RunResult {
    parse_json(text, "fixture").unwrap()
}

fn document(text: &str) -> Document {
    parse_document(text, "fixture").unwrap()
}

/// Width, height and RGB pixels of a PNG.
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn figures() -> Vec<(&'static str, Figure)> {
    let (watched, errors) = (run(WATCHED), run(ERRORS));
    let Document::Sweep(sweep) = document(include_str!(
        "../../../result/tests/fixtures/sweep-open.json"
    )) else {
        panic!("not a sweep")
    };
    let Document::Capacity(capacity) = document(include_str!(
        "../../../result/tests/fixtures/capacity-users.json"
    )) else {
        panic!("not a capacity search")
    };
    vec![
        ("run", run_figure(&run(OPEN))),
        ("statuses", statuses_figure(&errors)),
        ("server", server_figure(&watched).unwrap()),
        ("generator", generator_figure(&run(WORKLOAD))),
        ("compare", compare_figure(&["a", "b"], &[&watched, &errors])),
        ("sweep", sweep_result_figure(&sweep, "sweep")),
        ("capacity", capacity_figure(&capacity)),
        ("search", search_figure(&capacity)),
    ]
}

#[test]
fn every_figure_kind_draws_to_a_png_of_its_size_with_every_series_colour() {
    for (name, fig) in figures() {
        assert!(!fig.is_empty(), "{name}");
        let png = render(&fig, Format::Png).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (w, h, rgb) = decode(&png);
        assert_eq!((w, h), size(&fig), "{name}");
        assert_eq!(h, PANEL_SIZE.1 * fig.panels.len() as u32, "{name}");
        let pixels: Vec<&[u8]> = rgb.chunks(3).collect();
        let inked = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
        assert!(inked * 100 > pixels.len(), "{name}: {inked} inked pixels");
        for panel in &fig.panels {
            for s in panel
                .series
                .iter()
                .filter(|s| s.points.iter().any(|p| p.1 > 0.0))
            {
                let (r, g, b) = palette::rgb(s.color);
                let n = pixels.iter().filter(|p| **p == [r, g, b]).count();
                assert!(
                    n > 20,
                    "{name}, {}: {} drawn in {n} pixels",
                    panel.id,
                    s.label
                );
            }
        }
        // The SVG of the same figure names every panel and every series.
        let svg = String::from_utf8(render(&fig, Format::Svg).unwrap()).unwrap();
        for panel in &fig.panels {
            // (An apostrophe is escaped in the SVG: look for the text around it.)
            let parts = panel.title.split('\'');
            assert!(
                parts.clone().all(|t| svg.contains(t)),
                "{name}: {}",
                panel.title
            );
        }
    }
}

#[test]
fn stacked_bars_stack_their_layers_in_the_png() {
    // The second layer (errors) sits on the first (2xx): both colours are drawn, and the
    // first more, as it has more replies per second.
    let fig = statuses_figure(&run(ERRORS));
    let (_, _, rgb) = decode(&render(&fig, Format::Png).unwrap());
    let count = |hex: &str| {
        let (r, g, b) = palette::rgb(hex);
        rgb.chunks(3).filter(|p| *p == [r, g, b]).count()
    };
    let layers: Vec<usize> = fig.panels[0]
        .series
        .iter()
        .map(|s| count(s.color))
        .collect();
    assert!(layers.iter().all(|n| *n > 100), "{layers:?}");
    // Bars are areas, not lines: the 2xx layer fills most of four seconds' bars.
    assert!(layers[0] > 20_000, "{layers:?}");
}
