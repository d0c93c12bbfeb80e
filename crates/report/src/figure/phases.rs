//! Where each request name's time went: a horizontal bar per name, stacked by phase in the
//! order a request meets them (connect, TLS, blocked, waiting, receiving), each layer the
//! phase's mean per request of that name. k6 users read these as `http_req_connecting`,
//! `_tls_handshaking`, `_blocked`, `_waiting` and `_receiving`.

use super::{palette, Figure, Kind, Panel, Reading, Series, XAxis};
use crate::{NameResult, RunResult, Summary};

/// Bars drawn at most: a URL file may have thousands of names; the busiest are drawn.
const MAX_NAMES: usize = 30;

/// The breakdown of a workload's names, `None` when the result has no per-name phases (a plain
/// run, or a result written before them).
pub fn phases_figure(r: &RunResult) -> Option<Figure> {
    let mut names: Vec<&NameResult> = r.by_name.iter().filter(|n| n.phases.is_some()).collect();
    if names.is_empty() {
        return None;
    }
    let more = names.len().saturating_sub(MAX_NAMES);
    if more > 0 {
        names.sort_by_key(|n| std::cmp::Reverse(ended(n)));
        names.truncate(MAX_NAMES);
    }
    let layers: [(&str, &'static str); 5] = [
        ("connect", palette::GREY),
        ("TLS", palette::PURPLE),
        ("blocked", palette::ORANGE),
        ("waiting", palette::BLUE),
        ("receiving", palette::GREEN),
    ];
    let mut series: Vec<Series> = layers
        .iter()
        .map(|(label, color)| Series::line(label, color, Vec::with_capacity(names.len())))
        .collect();
    for (i, n) in names.iter().enumerate() {
        for (layer, v) in series.iter_mut().zip(per_request(n)) {
            layer.points.push((i as f64, v));
        }
    }
    // A phase no name had is left out of the legend too.
    series.retain(|s| s.points.iter().any(|p| p.1 > 0.0));
    let longest = (0..names.len())
        .map(|i| series.iter().map(|s| s.points[i].1).sum::<f64>())
        .fold(0.0, f64::max);
    let shown: Vec<String> = names.iter().map(|n| n.name.clone()).collect();
    let caption = if more > 0 {
        format!(
            "Mean time per request in each phase, the {MAX_NAMES} busiest request names ({more} more in the JSON)"
        )
    } else {
        "Mean time per request in each phase, by request name".to_owned()
    };
    let panel = Panel::new("chart-phases", "Phases by request name", &caption)
        .kind(Kind::Breakdown {
            names: shown.clone(),
        })
        .x(
            "mean per request",
            XAxis::Linear,
            Reading::Duration,
            (0.0, longest.max(f64::MIN_POSITIVE) * 1.05),
        )
        .y(
            "request name",
            XAxis::Linear,
            Reading::Ordinal(shown),
            (0.0, names.len() as f64),
        )
        .height(28.0 * names.len() as f64 + 12.0)
        .series(series);
    Some(Figure {
        title: format!("herd run: {}", r.target),
        panels: vec![panel],
    })
}

/// Requests of the name that ended, with a response or without.
fn ended(n: &NameResult) -> u64 {
    n.totals.completed + n.totals.errors
}

/// Each phase's mean per request of `n`, in milliseconds: a phase only some requests had (a
/// connection's set-up) is spread over all of them, so the layers add up to a typical request.
fn per_request(n: &NameResult) -> [f64; 5] {
    let Some(p) = &n.phases else { return [0.0; 5] };
    let requests = ended(n).max(1) as f64;
    let total = |s: &Summary| s.mean * s.count as f64;
    let connect = n.connect_ms.as_ref().map_or(0.0, total);
    let tls = total(&p.tls_ms);
    [
        (connect - tls).max(0.0),
        tls,
        total(&p.blocked_ms),
        total(&p.waiting_ms),
        total(&p.receiving_ms),
    ]
    .map(|t| t / requests)
}
