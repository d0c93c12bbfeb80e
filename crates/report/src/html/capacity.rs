//! The report of a capacity search: the answer in one sentence first, then the curves against
//! the level probed (with the SLO's limits, the capacity, where it broke and the knee), the
//! search probe by probe, and the probes table.

use super::curves::{self, chip, generator_cell};
use super::figure;
use super::page::{esc, facts, footer, table, Page};
use crate::capacity::{
    latency_at, measured, percentile_name, CapacityResult, Objective, ProbeRecord, Undecided,
};
use crate::figure::{capacity_figure, purpose, search_figure};
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
        page.section(
            "search",
            "The search, probe by probe",
            &figure::charts(&search_figure(c)),
        );
        page.section("probes", "Probes", &probes_table(c));
    }
    page.section("config", "Configuration", &config(c));
    page.finish(&footer(&c.target))
}

fn level(c: &CapacityResult, x: f64) -> String {
    c.level_text(x)
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
    let mut out = figure::charts(&capacity_figure(c));
    out.push_str(
        "<p class=\"quiet\">One point per level; a level probed more than once (a confirmation, a contradiction) shows its latest probe. Every probe is in the table below.</p>",
    );
    out
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
            ("warm-up per probe", crate::format::warmup(cfg.warmup_s)),
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
