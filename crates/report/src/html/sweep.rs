//! The report of a sweep: where each target saturated, first, then the saturation curves
//! (achieved against demanded rate, latency and errors against the level, one line per
//! target, steps where herd itself was the bottleneck crossed), the steps and the settings.

use super::curves::{self, chip, generator_cell};
use super::figure;
use super::page::{esc, facts, footer, table, Page};
use crate::figure::sweep_result_figure;
use crate::format::{count, duration_ms, duration_s, percent, rate};
use crate::sweep::{good_rate, level_text, row_of, SweepResult};
use crate::{GeneratorVerdict, Model};

pub fn render(s: &SweepResult) -> String {
    let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
    let mut page = Page::new(&format!("herd sweep: {}", names.join(", ")));
    page.push(&header(s));
    page.push(&verdict(s));
    if s.steps.is_empty() {
        page.section(
            "steps",
            "Steps",
            "<p class=\"quiet\">No step finished: there is nothing to draw.</p>",
        );
    } else {
        page.section("curves", "Saturation curves", &charts(s));
        page.section("steps", "Steps", &steps_table(s));
    }
    page.section("config", "Configuration", &config(s));
    page.finish(&footer(&names.join(", ")))
}

fn header(s: &SweepResult) -> String {
    let unit = s.level_unit();
    let levels = match (s.steps.first(), s.steps.last()) {
        (Some(a), Some(b)) if s.steps.len() > 1 => {
            format!("{} to {} {unit}", level_text(a.level), level_text(b.level))
        }
        (Some(a), _) => format!("{} {unit}", level_text(a.level)),
        _ => format!("no step of {} levels asked", s.config.levels.len()),
    };
    let length = match (s.config.step_duration_s, s.config.requests_per_step) {
        (Some(d), _) => format!("steps of {}", duration_s(d)),
        (None, Some(n)) => format!("steps of {} requests", count(n)),
        _ => String::new(),
    };
    let targets: Vec<String> = s
        .targets
        .iter()
        .map(|t| format!("<code>{}</code>", esc(&t.url)))
        .collect();
    format!(
        "<header><h1>herd sweep</h1><p class=\"sub\">{} &middot; {} model &middot; {} steps, {} &middot; {}</p></header>",
        targets.join(", "),
        s.model.name(),
        s.steps.len(),
        esc(&levels),
        esc(&length)
    )
}

fn verdict(s: &SweepResult) -> String {
    let knees = s.knees();
    let limited: usize = knees.iter().map(|k| k.limited_steps).sum();
    let (class, word) = if s.interrupted {
        ("warn", "INTERRUPTED")
    } else if limited > 0 {
        ("warn", "SOME STEPS NOT VALID: GENERATOR-LIMITED")
    } else if s.stopped_early.is_some() {
        ("", "STOPPED EARLY")
    } else {
        ("", "COMPLETED")
    };
    let answer: Vec<String> = knees
        .iter()
        .map(|k| k.sentence_in(&s.level_unit()))
        .collect();
    let runs = s.steps.iter().map(|st| st.runs.len()).sum::<usize>();
    let mut chips = vec![chip(
        "",
        format!(
            "{} steps x {} target{}",
            s.steps.len(),
            s.targets.len(),
            if s.targets.len() == 1 { "" } else { "s" }
        ),
    )];
    chips.push(if limited == 0 {
        chip("ok", "generator ok on every step")
    } else {
        chip(
            "warn",
            format!("{limited} of {runs} runs limited by herd, not the server"),
        )
    });
    chips.push(match (&s.stopped_early, s.interrupted) {
        (_, true) => chip("warn", "interrupted: later levels did not run"),
        (Some(_), _) => chip("ok", "stopped early by the stop rule"),
        (None, _) => chip("ok", "ran every level"),
    });
    let mut details = Vec::new();
    if let Some(why) = &s.stopped_early {
        details.push(format!("stopped early: {why}"));
    }
    if limited > 0 {
        details.push(
            "steps marked with a cross were limited by herd itself: their numbers describe herd, not the server".to_owned(),
        );
    }
    curves::verdict(class, word, &answer, &chips, &details)
}

fn charts(s: &SweepResult) -> String {
    // The figure `herd plot` draws for this sweep: one figure, two back ends.
    figure::charts(&sweep_result_figure(s, ""))
}

fn steps_table(s: &SweepResult) -> String {
    let many = s.targets.len() > 1;
    let mut rows = Vec::new();
    for step in &s.steps {
        for (i, run) in step.runs.iter().enumerate() {
            let r = row_of(run);
            let limited = run.generator.verdict == GeneratorVerdict::GeneratorLimited;
            let mut row = vec![level_text(step.level)];
            if many {
                row.push(esc(s.targets.get(i).map_or("", |t| t.name.as_str())));
            }
            // A step with no response has no latency: "0 us" would read as a very fast server.
            let time = |ms: f64| {
                if run.totals.completed > 0 {
                    duration_ms(ms)
                } else {
                    "-".to_owned()
                }
            };
            row.extend([
                rate(r.req_rate),
                format!(
                    "{} / {} / {}",
                    rate(r.min_rep_rate),
                    rate(r.avg_rep_rate),
                    rate(r.max_rep_rate)
                ),
                rate(good_rate(&r)),
                time(r.resp_time),
                time(run.latency_ms.p50),
                time(run.latency_ms.p99),
                percent(r.errors),
                generator_cell(limited, &run.generator.reasons, "server"),
            ]);
            rows.push(row);
        }
    }
    let level = match s.model {
        Model::Open => "req/s asked",
        Model::Closed => "users",
    };
    let mut header = vec![level];
    if many {
        header.push("target");
    }
    header.extend([
        "sent/s",
        "replies/s min / avg / max",
        "good/s",
        "mean",
        "p50",
        "p99",
        "not ok",
        "generator",
    ]);
    table("sweep-steps", &header, &rows)
}

fn config(s: &SweepResult) -> String {
    let c = &s.config;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    let stop = &c.stop;
    let mut stop_when = Vec::new();
    if let Some(e) = stop.max_error_percent {
        let op = if stop.errors_strict { ">=" } else { ">" };
        stop_when.push(format!("errors {op} {}", percent(e)));
    }
    if let Some(p) = stop.max_p99_ms {
        let op = if stop.p99_strict { ">=" } else { ">" };
        stop_when.push(format!("p99 {op} {}", duration_ms(p)));
    }
    for o in &stop.streams {
        if let herd_result::capacity::Objective::Latency {
            percentile,
            max_ms,
            inclusive,
            of,
        } = o
        {
            let op = if *inclusive { ">" } else { ">=" };
            let p = herd_result::capacity::percentile_name(*percentile);
            stop_when.push(format!("{}{p} {op} {}", of.prefix(), duration_ms(*max_ms)));
        }
    }
    let stop_text = if stop_when.is_empty() {
        "never (--no-stop)".to_owned()
    } else {
        format!(
            "{} for {} steps in a row, every target",
            stop_when.join(" or "),
            stop.consecutive
        )
    };
    let levels: Vec<String> = c.levels.iter().map(|l| level_text(*l)).collect();
    let first = s.steps.first().and_then(|st| st.runs.first());
    let mut pairs = Vec::new();
    for t in &s.targets {
        pairs.push((
            "target",
            format!("{} = <code>{}</code>", esc(&t.name), esc(&t.url)),
        ));
    }
    pairs.extend([
        ("model", s.model.name().to_owned()),
        (
            "levels asked",
            format!("{} ({})", esc(&levels.join(", ")), s.level_unit()),
        ),
        ("step length", opt(c.step_duration_s.map(duration_s))),
        ("requests per step", opt(c.requests_per_step.map(count))),
        ("calls per connection", opt(c.calls_per_conn.map(count))),
        ("timeout", duration_s(c.timeout_s)),
        ("cooldown", duration_s(c.cooldown_s)),
        ("stop", esc(&stop_text)),
    ]);
    if let Some(r) = first {
        pairs.extend([
            ("method", esc(&r.config.method)),
            ("threads", count(r.config.threads)),
            ("warm-up per step", crate::format::warmup(r.config.warmup_s)),
        ]);
    }
    pairs.push(("herd", esc(&s.herd_version)));
    facts(&pairs)
}
