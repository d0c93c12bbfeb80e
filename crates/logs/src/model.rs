//! `herd model`: a workload file from what a log showed. The request types (path patterns)
//! that make up at least 95% of the log's requests become scenarios (one request and a think
//! time each) weighted by their share, and the comment at the end says which types are left
//! out and why; ids come from the log (the observed ones with their frequencies, or a Zipf
//! source with the fitted exponent), and so do query values (the observed ones, in proportion);
//! the load reaches the observed peak rate. Every number carries a comment saying where it
//! came from, so the engineer can check and adjust it.

use crate::analysis::round;
use crate::summary::{LogsReport, TypeSummary};
use std::fmt::Write;

/// How ids are written into the data section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataChoice {
    /// Observed ids when few enough to list (at most 100 distinct), else Zipf.
    Auto,
    /// The most requested ids, repeated in proportion to their requests.
    Values,
    /// `zipf: { n, s }` with the fitted exponent: ids 1..n.
    Zipf,
}

impl DataChoice {
    /// `values`, `zipf`, else auto (the flag's parser admits only those three).
    pub fn parse(s: &str) -> DataChoice {
        match s {
            "values" => DataChoice::Values,
            "zipf" => DataChoice::Zipf,
            _ => DataChoice::Auto,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ModelOptions {
    pub target: String,
    /// The most request types written; `None`: as many as cover [`COVER`] of the requests.
    pub scenarios: Option<usize>,
    /// Multiplies the peak rate (`--scale 2x`).
    pub scale: f64,
    pub duration: String,
    pub data: DataChoice,
    /// Model static files too (left out by default: browsers cache them, CDNs serve them).
    pub assets: bool,
    /// Open model at the peak rate, without think times.
    pub open: bool,
}

/// The share of the log's requests (static files aside, unless modelled) the scenarios cover
/// when `--scenarios` does not say how many.
pub const COVER: f64 = 95.0;
/// Scenarios written at most to reach [`COVER`]: past this the tail is listed, not modelled.
const MAX_SCENARIOS: usize = 200;

/// `2x`, `2`, `150%` as a factor.
pub fn parse_scale(s: &str) -> Option<f64> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().ok()? / 100.0
    } else {
        t.trim_end_matches(['x', 'X']).trim().parse::<f64>().ok()?
    };
    (v.is_finite() && v > 0.0).then_some(v)
}

fn source_name(t: &TypeSummary, suffix: &str, used: &mut Vec<String>) -> String {
    let path = t.name.split_once(' ').map_or(t.name.as_str(), |(_, p)| p);
    let path = path.split('?').next().unwrap_or(path);
    let word = path
        .split('/')
        .take_while(|s| *s != "{id}")
        .filter(|s| !s.is_empty())
        .last()
        .unwrap_or("item");
    let mut base = word_of(word);
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base = format!("id_{base}");
    }
    base.push('_');
    base.push_str(&word_of(suffix));
    let mut name = base.clone();
    let mut k = 2;
    while used.contains(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    used.push(name.clone());
    name
}

/// `s` as a workload variable's word: ASCII letters and digits lowercased, anything else `_`
/// (the caller makes it start with a letter).
pub fn word_of(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn yaml_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The path of a scenario's request: `{id}` -> `{{source}}`, `{q}` -> its parameter's source,
/// or the example's value when it has none.
fn step_path(t: &TypeSummary, source: Option<&str>, params: &[(String, String)]) -> String {
    let path = t.name.split_once(' ').map_or(t.name.as_str(), |(_, p)| p);
    let (p, q) = path
        .split_once('?')
        .map_or((path, None), |(p, q)| (p, Some(q)));
    let mut out = match source {
        Some(s) => p.replacen("{id}", &format!("{{{{{s}}}}}", s = s), 1),
        None => p.to_owned(),
    };
    // a second `{id}` in the same path takes the example's value
    let ex_path = t.example.split('?').next().unwrap_or("");
    if out.contains("{id}") {
        let segs: Vec<&str> = out.split('/').collect();
        let ex: Vec<&str> = ex_path.split('/').collect();
        out = segs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if *s == "{id}" {
                    ex.get(i).copied().unwrap_or("1")
                } else {
                    s
                }
            })
            .collect::<Vec<_>>()
            .join("/");
    }
    if let Some(q) = q {
        let ex_q = t.example.split_once('?').map_or("", |(_, q)| q);
        let params: Vec<String> = q
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, "{q}")) if params.iter().any(|(n, _)| n == k) => {
                    let (_, s) = params.iter().find(|(n, _)| n == k).expect("checked");
                    format!("{k}={{{{{s}}}}}")
                }
                Some((k, "{q}")) => {
                    let v = ex_q
                        .split('&')
                        .find_map(|e| e.strip_prefix(&format!("{k}=")))
                        .unwrap_or("");
                    format!("{k}={v}")
                }
                _ => p.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

/// Observed values repeated in proportion to their requests, so a uniform pick draws each
/// with its observed frequency: exactly when the counts reduce to a short list (4:2:1:1), else
/// within 1 in 400.
fn in_proportion(top: &[(String, u64)]) -> Vec<String> {
    let listed: u64 = top.iter().map(|(_, n)| n).sum();
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let common = top.iter().fold(0, |g, (_, n)| gcd(g, *n)).max(1);
    let exact = listed / common <= 400;
    let mut values = Vec::new();
    for (v, n) in top {
        let copies = if exact {
            (n / common) as usize
        } else {
            ((*n as f64 / listed.max(1) as f64) * 400.0)
                .round()
                .max(1.0) as usize
        };
        values.extend(std::iter::repeat_n(yaml_str(v), copies));
    }
    values
}

/// A data source for each query parameter of `t` whose values were observed: (parameter,
/// source name), the sources written into `data`.
fn query_sources(
    t: &TypeSummary,
    used: &mut Vec<String>,
    data: &mut String,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in t.params.iter().filter(|p| !p.top.is_empty()) {
        let name = source_name(t, &p.name, used);
        let listed: u64 = p.top.iter().map(|(_, n)| n).sum();
        let _ = writeln!(
            data,
            "  # {}: `{}` took {} distinct values; the {} most requested ({:.1}% of its requests), each repeated in proportion to its requests",
            t.name,
            p.name,
            p.distinct,
            p.top.len(),
            100.0 * listed as f64 / (listed + p.untracked).max(1) as f64
        );
        let _ = writeln!(
            data,
            "  {name}: {{ pick: random, values: [{}] }}",
            in_proportion(&p.top).join(", ")
        );
        out.push((p.name.clone(), name));
    }
    out
}

/// Why a request type is not a scenario.
fn left_out_because(t: &TypeSummary, o: &ModelOptions) -> &'static str {
    if t.asset && !o.assets {
        "static file (browsers cache them, CDNs serve them; --assets models them)"
    } else if o.scenarios.is_some() {
        "beyond --scenarios"
    } else {
        "rare: the scenarios above already cover 95% of the modelled requests"
    }
}

/// The request types that become scenarios: the `--scenarios` most requested, or as many as
/// cover [`COVER`] of the modelled requests.
pub fn pick<'r>(r: &'r LogsReport, o: &ModelOptions) -> Vec<&'r TypeSummary> {
    let modelled: Vec<&TypeSummary> = r.types.iter().filter(|t| o.assets || !t.asset).collect();
    let modelled_share: f64 = modelled.iter().map(|t| t.share).sum();
    match o.scenarios {
        Some(n) => modelled.iter().copied().take(n.max(1)).collect(),
        None => {
            let mut covered = 0.0;
            modelled
                .iter()
                .copied()
                .take_while(|t| {
                    let more = covered < COVER * modelled_share / 100.0;
                    covered += t.share;
                    more
                })
                .take(MAX_SCENARIOS)
                .collect()
        }
    }
}

/// What `herd model` says once the workload from `r` is in `output`: its scenarios, the
/// share of the requests they cover, and how to check it.
pub fn summary(r: &LogsReport, o: &ModelOptions, output: &std::path::Path) -> String {
    let picked = pick(r, o);
    let covered: f64 = picked.iter().map(|t| t.share).sum();
    format!(
        "{}: {} scenarios from {} requests ({} request types), covering {:.1}% of the requests (the file's last comment lists the types left out and why); check it with `herd validate {}`",
        output.display(),
        picked.len(),
        r.input.records,
        r.types.len(),
        covered,
        output.display()
    )
}

/// Writes the workload file.
pub fn render(r: &LogsReport, o: &ModelOptions) -> String {
    let mut y = String::new();
    let w = &mut y;
    let total = r.input.records;
    let _ = writeln!(
        w,
        "# Workload modelled by `herd model` from {} ({} requests, {} .. {}).",
        r.input.files.join(", "),
        herd_result::format::count(total),
        r.span.first,
        r.span.last
    );
    let _ = writeln!(w, "# Every number says where it came from; check them before a real test. `herd validate` reads this file.");
    let _ = writeln!(
        w,
        "target: {}   # not in the log: set the system under test (--target)",
        o.target
    );
    let _ = writeln!(w, "seed: 1");
    let picked = pick(r, o);
    let rest: Vec<&TypeSummary> = r
        .types
        .iter()
        .filter(|t| !picked.iter().any(|p| p.name == t.name))
        .collect();
    let picked_share: f64 = picked.iter().map(|t| t.share).sum();

    let use_think = render_load(w, r, o);
    let (sources, param_sources) = render_data(w, &picked, o);
    render_scenarios(
        w,
        &picked,
        &sources,
        &param_sources,
        picked_share,
        use_think,
        r,
        o,
    );
    render_left_out(w, &rest, picked_share, o);
    y
}

/// `load:`: the peak second's rate, as users who think (closed) or arrivals (open); whether the
/// scenarios think between requests.
fn render_load(w: &mut String, r: &LogsReport, o: &ModelOptions) -> bool {
    let peak = r.rate.peak_second.rps;
    let rate = round(peak * o.scale, 1).max(0.1);
    let think = &r.clients.think_time_s;
    let taken_s = r.time_taken_ms.as_ref().map_or(0.0, |t| t.mean / 1000.0);
    let use_think = !o.open && think.count > 0 && think.mean > 0.0;
    let _ = writeln!(w, "load:");
    let _ = writeln!(
        w,
        "  # observed: peak second {} req/s at {}, p99 of seconds {} req/s, peak minute {} req/s, mean {} req/s",
        r.rate.peak_second.requests, r.rate.peak_second.at, r.rate.p99_second_rps, r.rate.peak_minute.rps, r.rate.mean_rps
    );
    if use_think {
        let users = (rate * (think.mean + taken_s)).ceil().max(1.0) as u64;
        let _ = writeln!(w, "  # closed model: each user sends a request then thinks; by Little's law users = rate x (think + time taken)");
        let _ = writeln!(
            w,
            "  #   = {rate} req/s (peak second x {} --scale) x ({:.3} s mean think + {:.3} s mean time taken) = {users} users",
            o.scale, think.mean, taken_s
        );
        let _ = writeln!(w, "  # (`herd model --open` writes an open model at the same rate without think times instead)");
        let _ = writeln!(w, "  model: closed");
        let _ = writeln!(w, "  stages:");
        let _ = writeln!(w, "    - {{ duration: 1m, target: {users} }}   # ramp-up");
        let _ = writeln!(
            w,
            "    - {{ duration: {}, target: {users} }}   # hold at the peak (--duration)",
            o.duration
        );
    } else {
        let _ = writeln!(w, "  # open model: iterations (one request each) started per second = peak second x {} (--scale)", o.scale);
        let _ = writeln!(w, "  model: open");
        let _ = writeln!(w, "  rate: {rate}");
        let _ = writeln!(w, "  duration: {}   # --duration", o.duration);
        let cap = ((rate * (taken_s.max(0.05) * 4.0)).ceil() as u64).max(1000);
        let _ = writeln!(w, "  max_connections: {cap}");
    }
    use_think
}

/// `data:`: a source of ids for each picked type whose path has one, and of its query's
/// values; (the id source's name, the query's sources) for each type.
#[allow(clippy::type_complexity)]
fn render_data(
    w: &mut String,
    picked: &[&TypeSummary],
    o: &ModelOptions,
) -> (Vec<Option<String>>, Vec<Vec<(String, String)>>) {
    let mut used = Vec::new();
    let mut sources: Vec<Option<String>> = Vec::new();
    let mut data = String::new();
    let mut param_sources: Vec<Vec<(String, String)>> = Vec::new();
    for t in picked {
        param_sources.push(query_sources(t, &mut used, &mut data));
        let Some(ids) = t.ids.as_ref().filter(|_| t.name.contains("{id}")) else {
            sources.push(None);
            continue;
        };
        let name = source_name(t, "id", &mut used);
        let zipf = ids.zipf.as_ref();
        let choice = match o.data {
            DataChoice::Auto if ids.distinct as usize <= ids.top.len() || zipf.is_none() => {
                DataChoice::Values
            }
            DataChoice::Auto => DataChoice::Zipf,
            DataChoice::Zipf if zipf.is_none() => DataChoice::Values,
            c => c,
        };
        let fit = zipf.map_or("no Zipf fit (too few ids)".to_owned(), |z| {
            format!(
                "fitted Zipf s = {} over {} ids, {} fit (KS distance {})",
                z.s, z.n, z.fit, z.ks
            )
        });
        let _ = writeln!(
            data,
            "  # {}: {} distinct ids seen; {fit}",
            t.name, ids.distinct
        );
        if choice == DataChoice::Zipf {
            let z = zipf.expect("checked above");
            let _ = writeln!(data, "  # ids 1..n drawn like the log's popularity; map them onto real ids, or use --data values for the observed ones");
            let _ = writeln!(
                data,
                "  {name}: {{ zipf: {{ n: {}, s: {} }} }}",
                ids.distinct, z.s
            );
        } else {
            // repetition gives each id its observed frequency under a uniform pick
            let listed: u64 = ids.top.iter().map(|(_, n)| n).sum();
            let values = in_proportion(&ids.top);
            let _ = writeln!(
                data,
                "  # the {} most requested ids ({:.1}% of this type's requests), each repeated in proportion to its requests",
                ids.top.len(),
                100.0 * listed as f64 / t.requests.max(1) as f64
            );
            let _ = writeln!(
                data,
                "  {name}: {{ pick: random, values: [{}] }}",
                values.join(", ")
            );
        }
        sources.push(Some(name));
    }
    if !data.is_empty() {
        let _ = writeln!(w, "data:");
        w.push_str(&data);
    }
    (sources, param_sources)
}

/// `scenarios:`: one per picked type, weighted by its share, with the session's think time.
#[allow(clippy::too_many_arguments)]
fn render_scenarios(
    w: &mut String,
    picked: &[&TypeSummary],
    sources: &[Option<String>],
    param_sources: &[Vec<(String, String)>],
    picked_share: f64,
    use_think: bool,
    r: &LogsReport,
    o: &ModelOptions,
) {
    let think = &r.clients.think_time_s;
    let _ = writeln!(w, "scenarios:");
    let _ = writeln!(
        w,
        "  # the top {} request types{} cover {:.1}% of the log's requests (see the end for those left out and why); weights are their shares in basis points\n  # (the load above is the whole log's rate: the types not modelled are spread over these by weight)",
        picked.len(),
        if o.assets { "" } else { " (static files left out: --assets keeps them)" },
        picked_share
    );
    for ((t, src), params) in picked.iter().zip(sources).zip(param_sources) {
        let (method, _) = t.name.split_once(' ').unwrap_or(("GET", ""));
        let method = method.to_ascii_lowercase();
        let method = if ["get", "post", "put", "patch", "delete", "head", "options"]
            .contains(&method.as_str())
        {
            method
        } else {
            "get".into()
        };
        let weight = ((t.share * 100.0).round() as u64).max(1);
        let _ = writeln!(w, "  - name: {}", yaml_str(&t.name));
        let tt = t.time_taken_ms.as_ref().map_or(String::new(), |x| {
            format!(", server time taken p50 {} ms, p95 {} ms", x.p50, x.p95)
        });
        let _ = writeln!(
            w,
            "    weight: {weight}   # {:.2}% of requests ({}){tt}",
            t.share, t.requests
        );
        let _ = writeln!(w, "    steps:");
        let _ = writeln!(
            w,
            "      - {method}: {}",
            yaml_str(&step_path(t, src.as_deref(), params))
        );
        let _ = writeln!(w, "        name: {}", yaml_str(&t.name));
        if use_think {
            let _ = writeln!(
                w,
                "      - think: {{ exponential: {}ms }}   # mean gap between a session's page requests: {:.3} s (p50 {:.3} s, p95 {:.3} s, {} gaps)",
                (think.mean * 1000.0).round().max(1.0),
                think.mean,
                think.p50,
                think.p95,
                think.count
            );
        }
    }
}

/// The request types not modelled, and why, as comments at the end.
fn render_left_out(w: &mut String, rest: &[&TypeSummary], picked_share: f64, o: &ModelOptions) {
    if !rest.is_empty() {
        let _ = writeln!(
            w,
            "# Request types not modelled ({} types, {:.1}% of requests):",
            rest.len(),
            (100.0 - picked_share).max(0.0)
        );
        let mut reasons: Vec<(&str, usize, f64)> = Vec::new();
        for t in rest {
            let why = left_out_because(t, o);
            match reasons.iter_mut().find(|r| r.0 == why) {
                Some(r) => {
                    r.1 += 1;
                    r.2 += t.share;
                }
                None => reasons.push((why, 1, t.share)),
            }
        }
        for (why, n, share) in &reasons {
            let _ = writeln!(w, "#   {share:>6.2}%  {n} types: {why}");
        }
        for t in rest.iter().take(30) {
            let _ = writeln!(
                w,
                "#   {:>6.2}%  {}{}",
                t.share,
                t.name,
                if t.asset { "  (static file)" } else { "" }
            );
        }
        if rest.len() > 30 {
            let _ = writeln!(w, "#   ... and {} more (see `herd logs`)", rest.len() - 30);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales() {
        assert_eq!(parse_scale("2x"), Some(2.0));
        assert_eq!(parse_scale("150%"), Some(1.5));
        assert_eq!(parse_scale("0"), None);
        assert_eq!(parse_scale("abc"), None);
    }
}
