//! Which recorded requests become steps: those on the site under test that got a response,
//! static files aside unless asked, each redirect chain one step that follows it (as the
//! browser did); and the pause before each page (the gap the person left between pages).

use crate::har::{Entry, Har, ReadError};
use crate::step::{Body, Json, Step, Text};
use std::collections::HashMap;
use url::Url;

/// Why recorded requests were left out, with a few examples each.
#[derive(Debug, Default)]
pub struct LeftOut {
    pub assets: Vec<String>,
    pub other_hosts: Vec<String>,
    pub no_response: Vec<String>,
    pub methods: Vec<String>,
    /// Redirect hops the step before them follows.
    pub hops: usize,
}

pub struct Selected {
    /// `scheme://host:port` of the recorded site.
    pub origin: String,
    pub steps: Vec<Step>,
    pub left_out: LeftOut,
}

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// Headers the workload sets itself (Host, lengths, the cookie jar's Cookie), that would ask for
/// what herd does not do (compressed bodies, cached validators), or that only a browser sends.
fn dropped(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with(':')
        || n.starts_with("sec-")
        || matches!(
            n.as_str(),
            "host"
                | "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "te"
                | "upgrade"
                | "content-length"
                | "accept-encoding"
                | "if-none-match"
                | "if-modified-since"
                | "if-match"
                | "if-unmodified-since"
                | "if-range"
                | "cache-control"
                | "pragma"
                | "priority"
                | "upgrade-insecure-requests"
                | "purpose"
                | "cookie"
        )
}

pub fn is_asset(e: &Entry, url: &Url) -> bool {
    let kind = e.resource_type.as_deref().unwrap_or("");
    if ["stylesheet", "script", "image", "font", "media", "manifest"].contains(&kind) {
        return true;
    }
    let mime = e.response.content.mime_type.to_ascii_lowercase();
    let mime = mime.split(';').next().unwrap_or("").trim();
    mime == "text/css"
        || mime.ends_with("javascript")
        || mime == "application/wasm"
        || [
            "image/",
            "font/",
            "audio/",
            "video/",
            "application/font",
            "application/x-font",
        ]
        .iter()
        .any(|p| mime.starts_with(p))
        || herd_logs::pattern::is_asset(url.path().as_bytes())
}

fn origin(u: &Url) -> String {
    u.origin().ascii_serialization()
}

fn location(e: &Entry, url: &Url) -> Option<Url> {
    if !matches!(e.response.status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let loc = Some(e.response.redirect_url.as_str())
        .filter(|l| !l.is_empty())
        .or_else(|| {
            e.response
                .headers
                .iter()
                .find(|h| h.is("location"))
                .map(|h| h.value.as_str())
        })?;
    url.join(loc).ok()
}

/// Picks the steps. `target` is the site to keep when the file holds several; by default the
/// first request's.
pub fn select(har: &Har, target: Option<&Url>, assets: bool) -> Result<Selected, ReadError> {
    let entries = &har.log.entries;
    let mut urls = Vec::with_capacity(entries.len());
    let mut spans = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let u = Url::parse(&e.request.url).ok();
        urls.push(u.filter(|u| matches!(u.scheme(), "http" | "https")));
        let start = e.start_ms(i)?;
        spans.push((start, start + e.time.max(0.0)));
    }
    // Browsers write entries in the order they started; a file edited by hand may not be.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| spans[a].0.total_cmp(&spans[b].0));

    let recorded = target
        .map(origin)
        .filter(|t| urls.iter().flatten().any(|u| origin(u) == *t))
        .or_else(|| order.iter().find_map(|&i| urls[i].as_ref().map(origin)));
    let Some(recorded) = recorded else {
        let first = order
            .iter()
            .copied()
            .find(|&i| urls[i].is_none())
            .unwrap_or(0);
        return Err(ReadError::Url {
            entry: first,
            value: entries[first].request.url.clone(),
        });
    };
    let on_site = |i: usize| urls[i].as_ref().is_some_and(|u| origin(u) == recorded);

    let (last, absorbed) = chains(entries, &urls, &order, &recorded);
    let (page_of, pages) = pages(har, &order, &spans, &absorbed);

    let mut left = LeftOut::default();
    let mut steps: Vec<Step> = Vec::new();
    let mut last_page: Option<usize> = None;
    let mut page_no = 0;
    for &i in &order {
        let e = &entries[i];
        if absorbed[i] {
            if on_site(i) {
                left.hops += 1;
            }
            continue;
        }
        let Some(url) = urls[i].as_ref().filter(|_| on_site(i)) else {
            left.other_hosts.push(e.request.url.clone());
            continue;
        };
        let method = e.request.method.to_ascii_uppercase();
        if e.response.status == 0 {
            left.no_response.push(format!("{method} {url}"));
            continue;
        }
        if !METHODS.contains(&method.as_str()) {
            left.methods.push(format!("{method} {url}"));
            continue;
        }
        if !assets && is_asset(e, url) {
            left.assets.push(url.path().to_owned());
            continue;
        }
        let (mut think_ms, mut page) = (None, None);
        let p = page_of[i];
        if last_page != Some(p) {
            let (gap, title) = &pages[p];
            think_ms = (gap.is_finite() && *gap >= 1.0).then(|| gap.round() as u64);
            page_no += 1;
            page = Some((page_no, title.clone()));
            last_page = Some(p);
        }
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let (headers, body) = request_parts(e);
        steps.push(Step {
            entry: i,
            last: last[i],
            method,
            path: Text::lit(path),
            headers,
            body,
            status: entries[last[i]].response.status,
            follow: last[i] != i,
            think_ms,
            page,
            extracts: Vec::new(),
        });
    }
    Ok(Selected {
        origin: recorded,
        steps,
        left_out: left,
    })
}

/// Redirect chains on the site, as the browser followed them: `last[i]` ends i's chain, and
/// `absorbed[j]` says j is a hop of an earlier request's chain.
fn chains(
    entries: &[Entry],
    urls: &[Option<Url>],
    order: &[usize],
    recorded: &str,
) -> (Vec<usize>, Vec<bool>) {
    let on_site = |i: usize| urls[i].as_ref().is_some_and(|u| origin(u) == recorded);
    let mut last: Vec<usize> = (0..entries.len()).collect();
    let mut absorbed = vec![false; entries.len()];
    for (k, &i) in order.iter().enumerate() {
        if absorbed[i] || !on_site(i) {
            continue;
        }
        let mut at = i;
        while let Some(next) = urls[at]
            .as_ref()
            .and_then(|u| location(&entries[at], u))
            .filter(|n| origin(n) == recorded)
            .and_then(|n| {
                order[k + 1..].iter().copied().find(|&j| {
                    !absorbed[j] && urls[j].as_ref().is_some_and(|u| u.as_str() == n.as_str())
                })
            })
        {
            absorbed[next] = true;
            at = next;
        }
        last[i] = at;
    }
    (last, absorbed)
}

/// Each entry's page and each page's (pause before it, title).
#[allow(clippy::type_complexity)]
fn pages(
    har: &Har,
    order: &[usize],
    spans: &[(f64, f64)],
    absorbed: &[bool],
) -> (Vec<usize>, Vec<(f64, String)>) {
    let entries = &har.log.entries;
    // Pages: a new one at each page of the file and at each navigation (exporters such as
    // chrome-har keep one page per tab); the pause before a page is the time from the end of
    // everything before it to its first request.
    let titles: HashMap<&str, &str> = har
        .log
        .pages
        .iter()
        .map(|p| (p.id.as_str(), p.title.as_str()))
        .collect();
    let mut page_of = vec![0usize; entries.len()];
    // (the pause before it, its title)
    let mut pages: Vec<(f64, String)> = Vec::new();
    let mut end = f64::NEG_INFINITY;
    let mut prev_ref: Option<&Option<String>> = None;
    for &i in order {
        let e = &entries[i];
        let navigation = e.resource_type.as_deref() == Some("document") && !absorbed[i];
        let unmarked = e.pageref.is_none() && e.resource_type.is_none();
        let new_ref = prev_ref != Some(&e.pageref);
        if new_ref || navigation || unmarked {
            let title = e
                .pageref
                .as_deref()
                .and_then(|r| titles.get(r))
                .filter(|t| new_ref && !t.is_empty())
                .map_or_else(
                    || format!("{} {}", e.request.method, e.request.url),
                    |t| t.to_string(),
                );
            pages.push((spans[i].0 - end, title));
        }
        prev_ref = Some(&e.pageref);
        page_of[i] = pages.len() - 1;
        end = end.max(spans[i].1);
    }
    (page_of, pages)
}

/// The headers worth sending again (each once: exporters may list one twice) and the body.
fn request_parts(e: &Entry) -> (Vec<(String, Text)>, Body) {
    let mut headers: Vec<(String, Text)> = Vec::new();
    for h in &e.request.headers {
        if dropped(&h.name) || headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&h.name)) {
            continue;
        }
        headers.push((h.name.clone(), Text::lit(h.value.clone())));
    }
    let Some(post) = &e.request.post_data else {
        return (headers, Body::None);
    };
    let mime = post.mime_type.to_ascii_lowercase();
    let text = match &post.text {
        Some(t) => t.clone(),
        // Some exporters give only the parsed fields of a form.
        None if !post.params.is_empty()
            && mime.starts_with("application/x-www-form-urlencoded") =>
        {
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(post.params.iter().map(|p| (&p.name, &p.value)))
                .finish()
        }
        None => return (headers, Body::None),
    };
    let content_type = |headers: &mut Vec<(String, Text)>| {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
    };
    if mime.starts_with("application/x-www-form-urlencoded") {
        let fields: Vec<(String, String)> = url::form_urlencoded::parse(text.as_bytes())
            .into_owned()
            .collect();
        let unique = fields
            .iter()
            .enumerate()
            .all(|(k, (n, _))| fields[..k].iter().all(|(m, _)| m != n));
        if unique {
            content_type(&mut headers);
            return (
                headers,
                Body::Form(fields.into_iter().map(|(n, v)| (n, Text::lit(v))).collect()),
            );
        }
    } else if mime.starts_with("application/json") {
        if let Ok(j) = serde_json::from_str::<Json>(&text) {
            content_type(&mut headers);
            return (headers, Body::Json(j));
        }
    }
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        && !post.mime_type.is_empty()
    {
        headers.push(("Content-Type".into(), Text::lit(post.mime_type.clone())));
    }
    (headers, Body::Raw(Text::lit(text)))
}
