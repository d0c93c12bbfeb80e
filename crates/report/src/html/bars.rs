//! Stacked bar charts as inline SVG: a bar per second (or bucket of seconds), a layer per
//! status class or kind of error, on the chart layer's axes, legend and hover data.

use super::chart::{axes, empty, figure_at};
use super::frame::Frame;
use super::page::esc;
use std::fmt::Write;

/// One layer of a stacked bar chart: a value per bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub name: String,
    pub color: String,
    pub values: Vec<f64>,
}

/// A stacked bar chart: bar `i` spans `starts[i] .. starts[i] + width` on the x axis.
pub fn stacked_bars(f: &Frame, starts: &[f64], width: f64, stacks: &[Stack]) -> String {
    let mut svg = String::new();
    axes(f, &mut svg);
    let gap = ((f.px(width) - f.px(0.0)) * 0.12).min(3.0);
    let mut base = vec![0.0f64; starts.len()];
    for s in stacks {
        let _ = write!(
            svg,
            "<g fill=\"{}\"><title>{}</title>",
            esc(&s.color),
            esc(&s.name)
        );
        for (i, (&x, &v)) in starts.iter().zip(&s.values).enumerate() {
            if v <= 0.0 {
                continue;
            }
            let (x0, x1) = (f.px(x) + gap / 2.0, f.px(x + width) - gap / 2.0);
            let (y0, y1) = (f.py(base[i] + v), f.py(base[i]));
            base[i] += v;
            let _ = write!(
                svg,
                "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                (x1 - x0).max(0.5),
                (y1 - y0).max(0.0)
            );
        }
        svg.push_str("</g>");
    }
    if base.iter().all(|b| *b <= 0.0) {
        empty(f, &mut svg);
    }
    let centers: Vec<f64> = starts.iter().map(|x| x + width / 2.0).collect();
    let columns: Vec<Vec<Option<String>>> = stacks
        .iter()
        .map(|s| {
            s.values
                .iter()
                .map(|v| (*v > 0.0).then(|| (f.y_label)(*v)))
                .collect()
        })
        .collect();
    let keys: Vec<(&str, &str, &str)> = stacks
        .iter()
        .map(|s| (s.name.as_str(), s.color.as_str(), "box"))
        .collect();
    let heads: Vec<f64> = starts.to_vec();
    figure_at(f, &keys, &svg, &centers, &heads, &columns)
}

/// Horizontal stacked bars, one per name from the top, each layer's length along the x axis
/// (phases by request name). The name is written over its bar, inside the plot, so long names
/// need no margin; each piece of a bar tells its name, layer and value on hover.
pub fn breakdown(f: &Frame, names: &[String], stacks: &[Stack]) -> String {
    let mut svg = String::new();
    axes(f, &mut svg);
    let n = names.len() as f64;
    let mut ends = vec![0.0f64; names.len()];
    for (i, name) in names.iter().enumerate() {
        // Band i spans y = n - i - 1 .. n - i: the name in its upper part, the bar below.
        let top = f.py(n - i as f64);
        let _ = write!(
            svg,
            "<text class=\"bar-name\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            f.px(0.0) + 4.0,
            top + 11.0,
            esc(name)
        );
    }
    for s in stacks {
        let _ = write!(
            svg,
            "<g fill=\"{}\"><title>{}</title>",
            esc(&s.color),
            esc(&s.name)
        );
        for (i, &v) in s.values.iter().enumerate().take(names.len()) {
            if v <= 0.0 {
                continue;
            }
            let (top, bottom) = (f.py(n - i as f64), f.py(n - i as f64 - 1.0));
            let (y0, y1) = (top + (bottom - top) * 0.45, bottom - (bottom - top) * 0.1);
            let (x0, x1) = (f.px(ends[i]), f.px(ends[i] + v));
            ends[i] += v;
            let _ = write!(
                svg,
                "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}: {} {}</title></rect>",
                (x1 - x0).max(0.5),
                (y1 - y0).max(0.0),
                esc(&names[i]),
                esc(&s.name),
                esc(&(f.x_label)(v))
            );
        }
        svg.push_str("</g>");
    }
    if ends.iter().all(|e| *e <= 0.0) {
        empty(f, &mut svg);
    }
    let keys: Vec<(&str, &str, &str)> = stacks
        .iter()
        .map(|s| (s.name.as_str(), s.color.as_str(), "box"))
        .collect();
    figure_at(f, &keys, &svg, &[], &[], &vec![Vec::new(); keys.len()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::chart::tests::frame;

    #[test]
    fn bars_stack() {
        let label = |v: f64| format!("{v}");
        let html = stacked_bars(
            &frame(&label),
            &[0.0, 1.0],
            1.0,
            &[
                Stack {
                    name: "2xx".into(),
                    color: "#009E73".into(),
                    values: vec![10.0, 0.0],
                },
                Stack {
                    name: "5xx".into(),
                    color: "#D55E00".into(),
                    values: vec![5.0, 2.0],
                },
            ],
        );
        assert_eq!(html.matches("<rect x=").count(), 3);
    }

    #[test]
    fn a_breakdown_has_a_bar_per_name_and_a_piece_per_phase() {
        let label = |v: f64| format!("{v} ms");
        let names = ["login".to_owned(), "cart <all>".to_owned()];
        let html = breakdown(
            &frame(&label),
            &names,
            &[
                Stack {
                    name: "waiting".into(),
                    color: "#0072B2".into(),
                    values: vec![4.0, 2.0],
                },
                Stack {
                    name: "receiving".into(),
                    color: "#009E73".into(),
                    values: vec![1.0, 0.0],
                },
            ],
        );
        assert_eq!(html.matches("<rect x=").count(), 3);
        assert!(html.contains(">login</text>"), "{html}");
        assert!(html.contains(">cart &lt;all&gt;</text>"), "{html}");
        assert!(
            html.contains("<title>login: receiving 1 ms</title>"),
            "{html}"
        );
        assert!(!html.contains("no data"));
    }

    #[test]
    fn no_bars_say_so() {
        let label = |v: f64| format!("{v}");
        let bars = stacked_bars(&frame(&label), &[0.0], 1.0, &[]);
        assert!(bars.contains("no data"));
    }
}
