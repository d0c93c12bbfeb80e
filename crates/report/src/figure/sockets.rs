//! A WebSocket run's sockets second by second: the ping -> pong round trips' 99th percentile
//! (from each ping's intended send), the send backlog of a schedule of messages as each second
//! closed, and the closes the server began. Read from the timeline's seconds as every other
//! chart is; a panel only for what the run measured, `None` for a run with none of them.

use super::{fault_bands, max_y, mid, palette, run_end, Figure, Panel, Reading, Series};
use crate::{RunResult, SocketsSecond};

/// The pings' round trips, the send backlog and the server's closes over time.
pub fn sockets_figure(r: &RunResult) -> Option<Figure> {
    let pick = |f: &dyn Fn(&SocketsSecond) -> Option<f64>| {
        r.samples()
            .filter_map(|e| e.ws.as_deref().and_then(f).map(|v| (mid(e), v)))
            .collect::<Vec<_>>()
    };
    let end = run_end(r);
    let mut panels = Vec::new();
    let ping = pick(&|w| (w.pongs > 0).then_some(w.ping_p99_ms));
    if !ping.is_empty() {
        let series = vec![Series::line("p99", palette::ORANGE, ping)];
        panels.push(
            Panel::new(
                "chart-ping",
                "Ping round trips",
                "The 99th percentile of the pongs that came in each second, each timed from its \
                 ping's intended send",
            )
            .over_time(end, Reading::Second)
            .y_to("round trip", Reading::Duration, max_y(&series, &[]) * 1.05)
            .height(200.0)
            .series(series)
            .bands(fault_bands(r)),
        );
    }
    let backlog = pick(&|w| w.backlog_messages.map(|m| m as f64));
    if !backlog.is_empty() {
        let series = vec![Series::line("messages", palette::BLUE, backlog)];
        panels.push(
            Panel::new(
                "chart-backlog",
                "Send backlog",
                "Messages due by the schedule whose bytes no socket had taken, as each second \
                 closed: it grows while the server reads slower than the schedule",
            )
            .over_time(end, Reading::Second)
            .y_to(
                "messages",
                Reading::Count,
                (max_y(&series, &[]) * 1.05).max(1.0),
            )
            .height(180.0)
            .series(series)
            .bands(fault_bands(r)),
        );
    }
    let closes = pick(&|w| {
        let n: u64 = w.closes.values().sum();
        (n > 0).then_some(n as f64)
    });
    if !closes.is_empty() {
        let series = vec![Series::line("closes", palette::RED, closes)];
        panels.push(
            Panel::new(
                "chart-closes",
                "Closes by the server",
                "Sockets the server closed in each second, whatever the code",
            )
            .over_time(end, Reading::Second)
            .y_to("closes", Reading::Count, max_y(&series, &[]) * 1.05)
            .height(160.0)
            .series(series),
        );
    }
    (!panels.is_empty()).then(|| Figure {
        title: format!("herd run: {}: WebSocket", r.target),
        panels,
    })
}
