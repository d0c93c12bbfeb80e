//! Stacked bar charts as inline SVG: a bar per second (or bucket of seconds), a layer per
//! status class or kind of error, on the chart layer's axes, legend and hover data.

use super::chart::{axes, empty, figure_at, Frame};
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
    fn no_bars_say_so() {
        let label = |v: f64| format!("{v}");
        let bars = stacked_bars(&frame(&label), &[0.0], 1.0, &[]);
        assert!(bars.contains("no data"));
    }
}
