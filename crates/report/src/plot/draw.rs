//! Drawing a [`Figure`] with plotters on a bitmap (encoded as PNG) or an SVG string.

use super::format::{size, Chart, Format, PlotError};
use super::{Figure, Panel, XAxis};
use crate::figure::{palette, Kind, Reading};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::Once;

pub(super) const FONT: &str = "sans-serif";

/// Draws the figure as PNG or SVG bytes.
pub fn render(fig: &Figure, format: Format) -> Result<Vec<u8>, PlotError> {
    if fig.is_empty() {
        return Err(PlotError::Empty(format!("{} has no points", fig.title)));
    }
    draw(fig, format)
}

/// plotters' ab_glyph text has no fonts of its own: register DejaVu Sans under the family name
/// every style below asks for.
fn register_font() -> Result<(), PlotError> {
    static ONCE: Once = Once::new();
    let mut ok = true;
    ONCE.call_once(|| {
        ok = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok();
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Draw("the bundled font did not load".into()))
    }
}

fn draw(fig: &Figure, format: Format) -> Result<Vec<u8>, PlotError> {
    register_font()?;
    let (w, h) = size(fig);
    match format {
        Format::Svg => {
            let mut out = String::new();
            {
                let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
                draw_figure(&root, fig).map_err(PlotError::Draw)?;
                root.present().map_err(|e| PlotError::Draw(e.to_string()))?;
            }
            Ok(out.into_bytes())
        }
        Format::Png => {
            let mut rgb = vec![0u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw_figure(&root, fig).map_err(PlotError::Draw)?;
                root.present().map_err(|e| PlotError::Draw(e.to_string()))?;
            }
            encode_png(&rgb, w, h)
        }
    }
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, PlotError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc
        .write_header()
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    writer
        .write_image_data(rgb)
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    writer
        .finish()
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    Ok(out)
}

fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let root = root
        .titled(&fig.title, (FONT, 26).into_font().style(FontStyle::Bold))
        .map_err(e)?;
    let areas = root.split_evenly((fig.panels.len().max(1), 1));
    for (area, panel) in areas.iter().zip(&fig.panels) {
        draw_panel(area, panel).map_err(e)?;
    }
    Ok(())
}

/// Where a value is drawn on the x axis.
fn place(axis: XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Linear => x,
        XAxis::Log10 => x.max(1e-9).log10(),
        XAxis::Percentile => x,
    }
}

/// The label at a drawn position, in the unit its values read in. On the log axes only whole
/// powers of ten (10, 100; 90%, 99%) are labelled: the ticks between them would read 68.3772%.
fn label(axis: XAxis, reads: &Reading, v: f64) -> String {
    if axis != XAxis::Linear && (v - v.round()).abs() > 1e-6 {
        return String::new();
    }
    let v = match axis {
        XAxis::Linear => v,
        XAxis::Log10 => 10f64.powf(v),
        XAxis::Percentile => {
            let p = 100.0 * (1.0 - 10f64.powf(-v));
            let s = format!("{p:.4}");
            return format!("{}%", s.trim_end_matches('0').trim_end_matches('.'));
        }
    };
    match reads {
        _ if v == 0.0 => "0".to_owned(),
        Reading::Duration => crate::format::duration_ms(v),
        Reading::Bytes => crate::format::bytes(v),
        Reading::Percent if v > 0.0 => crate::format::percent(v),
        _ => number(v),
    }
}

/// Axis numbers: whole from 10 up with thousands separators, else up to three digits.
fn number(v: f64) -> String {
    if v.abs() >= 10.0 || v == 0.0 {
        crate::format::count(v.round().max(0.0) as u64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let xs = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|pt| place(p.x_axis, pt.0)));
    let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    // The model's extent: a run's whole time axis, every probe, bars to their ends.
    if p.x_axis != XAxis::Log10 {
        x1 = x1.max(p.x_range.1);
    }
    if let Kind::StackedBars { starts, width } = &p.kind {
        x1 = x1.max(starts.last().map_or(0.0, |s| s + width));
    }
    if p.x_axis == XAxis::Linear {
        x0 = x0.min(0.0);
    }
    if let Reading::Ordinal(_) = p.x_reads {
        (x0, x1) = (0.5, x1 + 0.5);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    let ys = || p.series.iter().flat_map(|s| s.points.iter().map(|pt| pt.1));
    let (ymin, ymax) = crate::figure::span(ys());
    let ylog = p.y_axis == XAxis::Log10 && ymin.is_finite();
    // On a log axis the panel spans the values' decades; on a linear one it starts at zero.
    let (y0, y1) = if ylog {
        (
            ymin.log10().floor(),
            (ymax * 1.1).log10().max(ymin.log10() + 1.0),
        )
    } else if p.y_range.1 > 0.0 {
        // Linear from zero to the model's top: stacked bars, limits drawn as marks.
        (0.0, p.y_range.1.max(ymax))
    } else {
        (0.0, if ymax > 0.0 { ymax * 1.1 } else { 1.0 })
    };
    let yaxis = if ylog { XAxis::Log10 } else { XAxis::Linear };
    let axis = p.x_axis;
    let x_fmt = |v: &f64| label(axis, &p.x_reads, *v);
    let y_fmt = |v: &f64| label(yaxis, &p.y_reads, *v);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 20))
        .margin(12)
        .margin_right(36)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_labels(8)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    // Fault windows shaded behind everything.
    for b in &p.bands {
        let (r, g, bl) = palette::rgb(b.color);
        let fill = RGBColor(r, g, bl).mix(0.12).filled();
        let (from, to) = (place(axis, b.from), place(axis, b.to));
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, y0), (to, y1)],
            fill,
        )))?;
    }
    // Marks behind the series: a thin dashed line across the panel, its label at one end.
    let (mut down, mut across) = (0.0, 0.0);
    for m in &p.marks {
        let (r, g, b) = palette::rgb(m.color);
        let style = ShapeStyle::from(&RGBColor(r, g, b)).stroke_width(1);
        let line = if m.vertical {
            let x = place(axis, m.at);
            [(x, y0), (x, y1)]
        } else if ylog && m.at <= 0.0 {
            continue;
        } else {
            let y = place(yaxis, m.at);
            [(x0, y), (x1, y)]
        };
        chart.draw_series(DashedLineSeries::new(line, 4, 4, style))?;
        let font = (FONT, 13).into_font().color(&RGBColor(r, g, b));
        // A vertical mark is labelled at its top; a limit at its left, clear of the right edge.
        // Labels of marks close together are staggered a line apart, as on the HTML page.
        let nth = if m.vertical { &mut down } else { &mut across };
        let at = if m.vertical {
            (line[1].0, line[1].1 - (y1 - y0) * 0.07 * *nth)
        } else {
            (line[0].0 + (x1 - x0) * 0.2 * *nth, line[0].1)
        };
        *nth += 1.0;
        chart.draw_series(std::iter::once(Text::new(m.label.clone(), at, font)))?;
    }
    if let Kind::StackedBars { starts, width } = &p.kind {
        super::bars::draw(&mut chart, p, starts, *width)?;
    } else {
        for s in &p.series {
            draw_series(&mut chart, s, axis, yaxis, ylog)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}

/// One series: its line (solid or dashed) unless its points stand alone, its dots, and a
/// cross on each suspect point.
fn draw_series<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &crate::figure::Series,
    axis: XAxis,
    yaxis: XAxis,
    ylog: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (r, g, b) = palette::rgb(s.color);
    let color = RGBColor(r, g, b);
    let style = ShapeStyle::from(&color).stroke_width(2);
    let pts: Vec<(f64, f64)> = s
        .points
        .iter()
        .filter(|pt| !ylog || pt.1 > 0.0)
        .map(|&(x, y)| (place(axis, x), place(yaxis, y)))
        .collect();
    let fill = color.filled();
    if !s.joined {
        chart
            .draw_series(pts.iter().map(|&pt| Circle::new(pt, 4, fill)))?
            .label(s.label.as_str())
            .legend(move |(x, y)| Circle::new((x + 12, y), 4, fill));
    } else {
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))?
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))?
        };
        drawn
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        if s.markers && pts.len() <= 60 {
            chart.draw_series(pts.iter().map(|&pt| Circle::new(pt, 3, fill)))?;
        }
    }
    let cross = ShapeStyle::from(&BLACK).stroke_width(2);
    chart.draw_series(
        s.suspect
            .iter()
            .filter(|pt| !ylog || pt.1 > 0.0)
            .map(|&(x, y)| Cross::new((place(axis, x), place(yaxis, y)), 7, cross)),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_axis_spreads_the_tail() {
        // Positions are nines: 1 is 90%, 2 is 99%, 3 is 99.9%.
        let table = [(0.0, "0%"), (1.0, "90%"), (2.0, "99%"), (3.0, "99.9%")];
        for (x, want) in table {
            assert_eq!(
                label(
                    XAxis::Percentile,
                    &Reading::Number,
                    place(XAxis::Percentile, x)
                ),
                want
            );
        }
        assert_eq!(
            label(XAxis::Log10, &Reading::Number, place(XAxis::Log10, 1000.0)),
            "1,000"
        );
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(12_345.0), "12,345");
    }
}
