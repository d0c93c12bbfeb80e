//! Stacked bars with plotters: a layer per series, bar by bar, as the HTML page stacks them.

use super::format::Chart;
use crate::figure::{palette, Panel};
use plotters::prelude::*;

/// Each series is a layer: its value at a bar's start stacks on the layers before it. A
/// little gap keeps neighbouring bars apart; zero and missing values draw nothing.
pub(super) fn draw<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &Panel,
    starts: &[f64],
    width: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let gap = width * 0.06;
    let mut base = vec![0.0f64; starts.len()];
    for s in &p.series {
        let (r, g, b) = palette::rgb(s.color);
        let fill = RGBColor(r, g, b).filled();
        let mut bars = Vec::new();
        for (i, x) in starts.iter().enumerate() {
            let v = s.points.iter().find(|pt| pt.0 == *x).map_or(0.0, |pt| pt.1);
            if v <= 0.0 || !v.is_finite() {
                continue;
            }
            bars.push(Rectangle::new(
                [(x + gap, base[i]), (x + width - gap, base[i] + v)],
                fill,
            ));
            base[i] += v;
        }
        chart
            .draw_series(bars)?
            .label(s.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], fill));
    }
    Ok(())
}
