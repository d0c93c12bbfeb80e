//! A run's event streams second by second (Server-Sent Events, an LLM's tokens): the time to
//! first token from the intended and from the actual send, the gaps between tokens, and events
//! per second, read from the timeline's seconds as every other chart is. `None` for a run whose
//! seconds carry no stream.

use super::{fault_bands, max_y, mid, palette, run_end, Figure, Panel, Reading, Series};
use crate::{RunResult, TimelineEntry, TimelineStreams};

/// The time to first event, the gaps between events and events per second over time.
pub fn streams_figure(r: &RunResult) -> Option<Figure> {
    r.timeline.iter().find(|e| e.streams.is_some())?;
    // Whole seconds with streams: a second without any has no percentiles to draw.
    let pick = |f: fn(&TimelineStreams) -> f64| {
        r.samples()
            .filter_map(|e| e.streams.as_ref().map(|s| (mid(e), f(s))))
            .collect::<Vec<_>>()
    };
    let first = vec![
        Series::line(
            "p50 from the intended send",
            palette::BLUE,
            pick(|s| s.ttft_p50_ms),
        ),
        Series::line(
            "p99 from the intended send",
            palette::ORANGE,
            pick(|s| s.ttft_p99_ms),
        ),
        Series::line(
            "p50 from the actual send",
            palette::GREEN,
            pick(|s| s.ttft_sent_p50_ms),
        )
        .dashed(),
    ];
    let gaps = vec![
        Series::line("p50", palette::BLUE, pick(|s| s.itl_p50_ms)),
        Series::line("p99", palette::ORANGE, pick(|s| s.itl_p99_ms)),
    ];
    let events: Vec<(f64, f64)> = r
        .samples()
        .map(|e: &TimelineEntry| (mid(e), e.events as f64))
        .collect();
    let top = events.iter().map(|p| p.1).fold(0.0, f64::max);
    let end = run_end(r);
    let panels = vec![
        Panel::new(
            "chart-ttft",
            "Time to first event (token)",
            "Time to first event per second, of the streams that ended in it",
        )
        .over_time(end, Reading::Second)
        .y_to(
            "time to first event",
            Reading::Duration,
            max_y(&first, &[]) * 1.05,
        )
        .height(220.0)
        .series(first)
        .bands(fault_bands(r)),
        Panel::new(
            "chart-itl",
            "Gaps between events (inter-token latency)",
            "Gaps between consecutive events per second, of the streams that ended in it",
        )
        .over_time(end, Reading::Second)
        .y_to("gap", Reading::Duration, max_y(&gaps, &[]) * 1.05)
        .height(200.0)
        .series(gaps)
        .bands(fault_bands(r)),
        Panel::new(
            "chart-events",
            "Events per second",
            "Events of the streams that ended in each second",
        )
        .over_time(end, Reading::Second)
        .y_to(
            "events per second",
            Reading::Rate(" events/s".into()),
            top * 1.05,
        )
        .height(180.0)
        .series(vec![Series::line("events", palette::BLUE, events)]),
    ];
    Some(Figure {
        title: format!("herd run: {}: event streams", r.target),
        panels,
    })
}
