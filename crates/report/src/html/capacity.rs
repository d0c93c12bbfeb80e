//! The report of a capacity search: the answer in one sentence first, then the curves against
//! the level probed (with the SLO's limits, the capacity, where it broke and the knee), the
//! search probe by probe, and the probes table.

use super::chart::{lines_with, Frame, Series};
use super::curves::{self, chip, generator_cell, latency_axis, load_axis, max_y, rate_axis};
use super::figure;
use super::marks::Rule;
use super::page::{esc, facts, footer, table, Page};
use super::{axis::Axis, palette};
use crate::capacity::{
    latency_at, measured, percentile_name, CapacityResult, Objective, ProbeRecord, Purpose,
    Undecided,
};
use crate::figure::capacity_figure;
use crate::format::{count, duration_ms, duration_s, percent, rate};
use crate::{GeneratorVerdict, Model};
use std::fmt::Write;

pub fn render(c: &CapacityResult) -> String {
    let mut page = Page::new(&format!("herd capacity: {}", c.target));
    page.push(&format!(
        "<header><h1>herd capacity</h1><p class=\"sub\"><code>{}</code> &middot; SLO {} &middot; {} model &middot; {} probes</p></header>",
        esc(&c.target),
        esc(&c.slo.phrase()),
        c.model.name(),
        c.probes.len()
    ));
    page.push(&verdict(c));
    page.section("figures", "Key figures", &cards(c));
    if c.probes.is_empty() {
        page.section(
            "probes",
            "Probes",
            "<p class=\"quiet\">No probe finished: there is nothing to draw.</p>",
        );
    } else {
        page.section("curves", "Against the level probed", &charts(c));
        page.section("search", "The search, probe by probe", &search_chart(c));
        page.section("probes", "Probes", &probes_table(c));
    }
    page.section("config", "Configuration", &config(c));
    page.finish(&footer(&c.target))
}

fn level(c: &CapacityResult, x: f64) -> String {
    c.level_text(x)
}

fn open_unit(c: &CapacityResult) -> &'static str {
    c.open_unit()
}

fn limited(p: &ProbeRecord) -> bool {
    p.generator == GeneratorVerdict::GeneratorLimited
}

fn verdict(c: &CapacityResult) -> String {
    let found = c.capacity_rps.or(c.capacity_users.map(|u| u as f64));
    let (class, word) = match (&c.undecided, found) {
        _ if c.interrupted => ("warn", "INTERRUPTED".to_owned()),
        (_, Some(x)) if x > 0.0 => ("", format!("CAPACITY: {}", level(c, x))),
        (_, Some(_)) => ("bad", "DOES NOT MEET THE SLO".to_owned()),
        (Some(Undecided::TooFewRequests { .. }), None) => {
            ("warn", "NO ANSWER: TOO FEW REQUESTS".to_owned())
        }
        (Some(Undecided::GeneratorLimited { .. }), None) => {
            ("warn", "NO ANSWER: HERD WAS THE BOTTLENECK".to_owned())
        }
        (Some(Undecided::Noisy { .. }), None) => ("warn", "NO ANSWER: TOO NOISY".to_owned()),
        (Some(Undecided::NeverBroke { .. }), None) => {
            ("warn", "NO ANSWER: THE SLO NEVER BROKE".to_owned())
        }
        (Some(Undecided::OutOfProbes { .. }), None) => {
            ("warn", "NO ANSWER: OUT OF PROBES".to_owned())
        }
        (None, None) => ("warn", "NO ANSWER".to_owned()),
    };
    let n_limited = c.probes.iter().filter(|p| limited(p)).count();
    let mut chips = vec![
        chip("", format!("SLO: {}", c.slo.phrase())),
        chip("", format!("{} probes", c.probes.len())),
    ];
    chips.push(if n_limited == 0 {
        chip("ok", "generator ok on every probe")
    } else {
        chip(
            "warn",
            format!(
                "{n_limited} probe{} limited by herd, run again",
                if n_limited == 1 { "" } else { "s" }
            ),
        )
    });
    chips.push(if c.interrupted {
        chip("warn", "interrupted")
    } else {
        chip("ok", "search ended")
    });
    curves::verdict(class, &word, std::slice::from_ref(&c.sentence), &chips, &[])
}

fn cards(c: &CapacityResult) -> String {
    let card = |label: &str, value: String, note: String| {
        format!(
            "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"note\">{}</div></div>",
            esc(label),
            esc(&value),
            esc(&note)
        )
    };
    let found = c.capacity_rps.or(c.capacity_users.map(|u| u as f64));
    let mut out = String::from("<div class=\"cards\">");
    out += &card(
        "capacity",
        found.map_or("-".to_owned(), |x| level(c, x)),
        format!("within {}", c.slo.phrase()),
    );
    out += &card(
        "breaks at",
        c.ceiling
            .map_or("-".to_owned(), |x| format!("~{}", level(c, x))),
        "the lowest level seen to break the SLO".to_owned(),
    );
    out += &card(
        "knee",
        c.knee
            .map_or("-".to_owned(), |k| format!("~{}", level(c, k.level))),
        c.knee
            .map_or("good throughput never levelled off".to_owned(), |k| {
                format!("good replies level off near {} req/s", rate(k.throughput))
            }),
    );
    let best = c
        .probes
        .iter()
        .filter(|p| !limited(p))
        .map(|p| measured(&p.result).goodput)
        .fold(0.0, f64::max);
    out += &card(
        "best good throughput",
        format!("{} req/s", rate(best)),
        "over every probe herd could trust".to_owned(),
    );
    out + "</div>"
}

fn charts(c: &CapacityResult) -> String {
    // The series and marks are the ones `herd plot` draws: one figure, two back ends.
    let fig = capacity_figure(c);
    let levels: Vec<f64> = c.by_level().iter().map(|p| p.level).collect();
    let x_title = match c.model {
        Model::Open => format!("offered rate ({})", open_unit(c)),
        Model::Closed => "concurrent users".to_owned(),
    };
    let x = load_axis(c.model, &x_title, &levels);
    let head = |v: f64| level(c, v);

    let throughput = figure::series(&fig.panels[0]);
    let rps = |v: f64| format!("{} req/s", rate(v));
    let mut out = lines_with(
        &Frame {
            id: "chart-capacity-throughput",
            title: "Good replies against the level probed",
            x: x.clone(),
            y: rate_axis(&throughput, &throughput[..1]),
            height: 260.0,
            x_label: &head,
            y_label: &rps,
        },
        &throughput,
        &figure::rules(&fig.panels[0]),
    );

    let latency = figure::series(&fig.panels[1]);
    let slo_ms = limits(&fig.panels[1]);
    let ms = |v: f64| duration_ms(v);
    out.push_str(&lines_with(
        &Frame {
            id: "chart-capacity-latency",
            title: "Latency against the level probed, from the intended send time",
            x: x.clone(),
            y: latency_axis(&latency, &slo_ms),
            height: 260.0,
            x_label: &head,
            y_label: &ms,
        },
        &latency,
        &figure::rules(&fig.panels[1]),
    ));

    let errors = figure::series(&fig.panels[2]);
    let limit = limits(&fig.panels[2]);
    let pct = |v: f64| percent(v);
    out.push_str(&lines_with(
        &Frame {
            id: "chart-capacity-errors",
            title: "Requests without an OK answer against the level probed",
            x,
            y: Axis::linear(
                "not ok (%)",
                (max_y(&errors, &limit) * 1.1).clamp(1.0, 100.0),
            ),
            height: 200.0,
            x_label: &head,
            y_label: &pct,
        },
        &errors,
        &figure::rules(&fig.panels[2]),
    ));
    out.push_str(
        "<p class=\"quiet\">One point per level; a level probed more than once (a confirmation, a contradiction) shows its latest probe. Every probe is in the table below.</p>",
    );
    out
}

/// The limits drawn across a panel (the SLO's): its axis must reach them.
fn limits(p: &crate::figure::Panel) -> Vec<f64> {
    p.marks
        .iter()
        .filter(|m| !m.vertical)
        .map(|m| m.at)
        .collect()
}

fn purpose(p: Purpose) -> &'static str {
    match p {
        Purpose::Ramp => "ramp",
        Purpose::Narrow => "narrow",
        Purpose::Confirm => "confirm",
    }
}

/// The level of each probe in the order run: the ramp, the bisection, the confirmation.
fn search_chart(c: &CapacityResult) -> String {
    let at = |keep: &dyn Fn(&ProbeRecord) -> bool| -> Vec<(f64, f64)> {
        c.probes
            .iter()
            .enumerate()
            .filter(|(_, p)| keep(p))
            .map(|(i, p)| ((i + 1) as f64, p.level))
            .collect()
    };
    let limited_points = at(&limited);
    let series = vec![
        Series::new("level probed", palette::GREY, at(&|_| true)),
        Series::new("held", palette::GREEN, at(&|p| !limited(p) && p.held)).scatter(),
        Series::new(
            "broke the SLO",
            palette::RED,
            at(&|p| !limited(p) && !p.broke.is_empty()),
        )
        .scatter(),
        Series::new("limited by herd", palette::GREY, limited_points.clone())
            .scatter()
            .flag((0..limited_points.len()).collect()),
    ];
    let mut rules = Vec::new();
    let found = c.capacity_rps.or(c.capacity_users.map(|u| u as f64));
    if let Some(x) = found.filter(|x| *x > 0.0) {
        rules.push(Rule::y(
            x,
            &format!("capacity: {}", level(c, x)),
            palette::GREEN,
        ));
    }
    if let Some(x) = c.ceiling {
        rules.push(Rule::y(
            x,
            &format!("breaks: ~{}", level(c, x)),
            palette::RED,
        ));
    }
    let n = c.probes.len();
    let x = curves::ordinal_axis("probe, in the order run", n);
    let head = |v: f64| {
        let i = (v.round() as usize).clamp(1, n.max(1)) - 1;
        c.probes.get(i).map_or(String::new(), |p| {
            format!(
                "probe {}: {}, {}",
                i + 1,
                purpose(p.purpose),
                duration_s(p.duration_s)
            )
        })
    };
    let lv = |v: f64| level(c, v);
    let max = c.probes.iter().map(|p| p.level).fold(0.0, f64::max);
    let title = match c.model {
        Model::Open => format!("level ({})", open_unit(c)),
        Model::Closed => "level (users)".to_owned(),
    };
    lines_with(
        &Frame {
            id: "chart-capacity-search",
            title: "Level of each probe: ramp up until the SLO breaks, bisect, confirm",
            x,
            y: Axis::linear(&title, max * 1.1),
            height: 200.0,
            x_label: &head,
            y_label: &lv,
        },
        &series,
        &rules,
    )
}

fn probes_table(c: &CapacityResult) -> String {
    let percentiles: Vec<f64> = c
        .slo
        .objectives
        .iter()
        .filter_map(|o| match *o {
            Objective::Latency { percentile, .. } => Some(percentile),
            Objective::Errors { .. } => None,
        })
        .chain(std::iter::once(99.0))
        .fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });
    let rows: Vec<Vec<String>> = c
        .probes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let m = measured(&p.result);
            let mut row = vec![
                count(i as u64 + 1),
                purpose(p.purpose).to_owned(),
                level(c, p.level),
                duration_s(p.duration_s),
                rate(m.goodput),
                percent(m.error_percent),
            ];
            row.extend(
                percentiles
                    .iter()
                    .map(|q| duration_ms(latency_at(&p.result.latency_ms, *q))),
            );
            row.push(if limited(p) {
                generator_cell(true, &p.result.generator.reasons, "target")
            } else if p.held {
                "<span class=\"improved\">held</span>".to_owned()
            } else if let Some(s) = p.too_few {
                format!(
                    "too few to judge: {} of {} requests",
                    crate::format::count(s.have),
                    crate::format::count(s.need)
                )
            } else {
                format!(
                    "<span class=\"regressed\">broke: {}</span>",
                    esc(&p.broke.join(", "))
                )
            });
            row
        })
        .collect();
    let names: Vec<String> = percentiles.iter().map(|q| percentile_name(*q)).collect();
    let mut header = vec!["probe", "purpose", "level", "length", "good/s", "not ok"];
    header.extend(names.iter().map(String::as_str));
    header.push("verdict");
    table("capacity-probes", &header, &rows)
}

fn config(c: &CapacityResult) -> String {
    let mut pairs = vec![
        ("target", format!("<code>{}</code>", esc(&c.target))),
        ("model", c.model.name().to_owned()),
        ("SLO", format!("<code>{}</code>", esc(&c.slo.text))),
        ("probes run", count(c.probes.len() as u64)),
    ];
    if let Some(r) = c.probes.first().map(|p| &p.result) {
        let cfg = &r.config;
        pairs.extend([
            ("method", esc(&cfg.method)),
            ("threads", count(cfg.threads)),
            ("timeout", duration_s(cfg.timeout_s)),
            (
                "calls per connection",
                cfg.calls_per_conn.map_or("-".to_owned(), count),
            ),
            ("warm-up per probe", duration_s(cfg.warmup_s)),
        ]);
        if c.model == Model::Open {
            pairs.push(("max connections", count(cfg.connections)));
        }
    }
    pairs.push(("herd", esc(&c.herd_version)));
    let mut out = facts(&pairs);
    if let Some(u) = &c.undecided {
        let _ = write!(
            out,
            "<p class=\"quiet\">Undecided: <code>{}</code></p>",
            esc(&serde_json::to_string(u).unwrap_or_default())
        );
    }
    out
}
