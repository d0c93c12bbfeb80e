//! A first workload from a browser's HAR file (`herd model --har session.har -o workload.yaml`).
//!
//! A HAR file is what a browser's developer tools export after someone used a site: every
//! request with its headers and body, every response, grouped by page. The model keeps the
//! requests to the site as one scenario's steps (static files aside unless asked, redirect
//! chains as one step that follows them), the pauses between pages as think times, turns
//! values a later request sends back (a CSRF token, an id from a JSON answer) into extractions,
//! and credentials into `{{env.HAR_...}}` values, so the file holds no secret and each virtual
//! user runs its own session.
//!
//! It is its own crate rather than a part of herd-logs (server logs: counts and rates of many
//! clients, read as byte lines) or herd-workload (the compiler of workload files): a HAR is one
//! client's exact session, read as JSON, and what comes out is workload text the compiler reads
//! like any other.
//!
//! ```
//! let har = br#"{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z",
//!   "request": {"method": "GET", "url": "http://127.0.0.1:8080/"},
//!   "response": {"status": 200, "content": {"mimeType": "text/html"}}}]}}"#;
//! let m = herd_har::model(har, &herd_har::Options::default()).unwrap();
//! assert!(m.yaml.contains("target: http://127.0.0.1:8080"));
//! assert!(m.yaml.contains("- get: '/'"));
//! ```

pub mod har;
mod render;
mod reuse;
mod secret;
mod select;
mod step;

pub use har::ReadError;
use std::fmt::Write;

#[derive(Clone, Debug)]
pub struct Options {
    /// The site to test; by default the one the file recorded (its first request's).
    pub target: Option<String>,
    pub users: u64,
    /// How long the load holds, as the workload file writes it (`10m`).
    pub duration: String,
    /// Keep static files (css, js, images, fonts) as steps.
    pub assets: bool,
    /// The HAR file's name, for the comment at the top.
    pub source: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: None,
            users: 10,
            duration: "10m".into(),
            assets: false,
            source: "session.har".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("--target: `{0}` is not an http(s) URL (e.g. http://127.0.0.1:8080)")]
    Target(String),
    #[error("the HAR file holds no requests (log.entries is empty): export it from the developer tools' Network panel after using the site with the panel open")]
    NoEntries,
    #[error("the HAR file has no request to {origin} a workload can send ({why})")]
    Empty { origin: String, why: String },
}

/// What the model found, for the line the command prints.
#[derive(Debug)]
pub struct Model {
    pub yaml: String,
    pub steps: usize,
    pub pages: usize,
    pub extractions: usize,
    /// The environment values the workload needs (`-e NAME=...`), with what each stood for.
    pub secrets: Vec<(String, String)>,
    pub left_out: usize,
}

impl Model {
    /// What `herd model --har` says once the workload is in `output`: what it holds, what was
    /// left out, and how to check it (with the env values it needs).
    pub fn summary(&self, output: &std::path::Path) -> String {
        let env: String = self
            .secrets
            .iter()
            .map(|(n, _)| format!("-e {n}=... "))
            .collect();
        format!(
            "{}: {} steps in {} pages, {} values taken from responses, {} recorded requests left out (the file's last comment says which); check it with `herd validate {env}{}`",
            output.display(),
            self.steps,
            self.pages,
            self.extractions,
            self.left_out,
            output.display()
        )
    }
}

/// Reads the HAR file at `path` and writes the workload; messages name the file.
pub fn model_file(path: &std::path::Path, o: &Options) -> Result<Model, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    model(&bytes, o).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a HAR file's bytes and writes the workload.
pub fn model(bytes: &[u8], o: &Options) -> Result<Model, ModelError> {
    let har = har::read(bytes)?;
    if har.log.entries.is_empty() {
        return Err(ModelError::NoEntries);
    }
    let target = match &o.target {
        Some(t) => Some(
            url::Url::parse(t)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                .ok_or_else(|| ModelError::Target(t.clone()))?,
        ),
        None => None,
    };
    let sel = select::select(&har, target.as_ref(), o.assets)?;
    let l = &sel.left_out;
    if sel.steps.is_empty() {
        let why = if !l.assets.is_empty() && !o.assets {
            format!("{} static files: --assets keeps them", l.assets.len())
        } else {
            format!(
                "{} entries, none on this site with a response",
                har.log.entries.len()
            )
        };
        return Err(ModelError::Empty {
            origin: sel.origin,
            why,
        });
    }
    let mut steps = sel.steps;
    let entries = &har.log.entries;
    reuse::link(&mut steps, entries);
    let secrets = secret::hide(&mut steps, entries);
    let base = target
        .as_ref()
        .map_or(sel.origin.clone(), |t| t.origin().ascii_serialization());
    if base != sel.origin {
        rebase(&mut steps, &sel.origin, &base);
    }
    let defaults = shared_headers(&steps);

    let mut w = String::new();
    let c = &har.log.creator;
    let by = if c.name.is_empty() {
        String::new()
    } else {
        format!(", recorded by {} {}", c.name, c.version)
    };
    let pages = steps.iter().filter(|s| s.page.is_some()).count();
    let _ = writeln!(
        w,
        "# Workload modelled by `herd model --har` from {}{by}: {} steps in {pages} pages from {}.",
        o.source,
        steps.len(),
        sel.origin
    );
    let _ = writeln!(w, "# One scenario replays the session: each virtual user sends the recorded requests in order, pauses as the");
    let _ = writeln!(w, "# person did between pages, and takes tokens and ids from the responses (extract) where later requests reuse them.");
    if !secrets.names.is_empty() {
        let _ = writeln!(w, "# Credentials are not copied; give them when running:");
        let flags: Vec<String> = secrets
            .names
            .iter()
            .map(|(n, _)| format!("-e {n}=..."))
            .collect();
        let _ = writeln!(w, "#   herd run {} FILE.yaml", flags.join(" "));
        for (n, what) in &secrets.names {
            let _ = writeln!(w, "#   {n}: {what}");
        }
    }
    let _ = writeln!(
        w,
        "target: {base}{}",
        if o.target.is_some() {
            "   # --target"
        } else {
            "   # the recorded site (--target sets another)"
        }
    );
    if !defaults.is_empty() {
        let _ = writeln!(
            w,
            "defaults:\n  headers:   # sent by every recorded request"
        );
        for (n, v) in &defaults {
            let _ = writeln!(w, "    {}: {}", render::quote(n), render::quote(v));
        }
    }
    let _ = writeln!(
        w,
        "load:\n  model: closed\n  users: {}   # --users\n  duration: {}   # --duration",
        o.users, o.duration
    );
    let _ = writeln!(w, "scenarios:\n  - name: session\n    steps:");
    for s in &steps {
        render::step(&mut w, s, &steps, &defaults);
    }
    render::left_out(&mut w, l, o.assets);
    Ok(Model {
        yaml: w,
        steps: steps.len(),
        pages,
        extractions: steps.iter().map(|s| s.extracts.len()).sum(),
        secrets: secrets.names,
        left_out: l.assets.len() + l.other_hosts.len() + l.no_response.len() + l.methods.len(),
    })
}

/// Origin and Referer headers of the recorded site (`origin`) as those of `base`.
fn rebase(steps: &mut [step::Step], origin: &str, base: &str) {
    // A site that checks Origin or Referer against itself (a CSRF defence) sees its own.
    for (n, t) in steps.iter_mut().flat_map(|s| s.headers.iter_mut()) {
        if !(n.eq_ignore_ascii_case("origin") || n.eq_ignore_ascii_case("referer")) {
            continue;
        }
        if let Some(step::Piece::Lit(v)) = t.0.first_mut() {
            if let Some(rest) = v.strip_prefix(origin) {
                if rest.is_empty() || rest.starts_with('/') {
                    *v = format!("{base}{rest}");
                }
            }
        }
    }
}

/// Headers every step sends alike: they go once, under defaults.
fn shared_headers(steps: &[step::Step]) -> Vec<(String, String)> {
    steps[0]
        .headers
        .iter()
        .filter_map(|(n, t)| Some((n.clone(), t.literal()?.to_owned())))
        .filter(|(n, v)| {
            !n.eq_ignore_ascii_case("content-type")
                && steps.iter().all(|s| {
                    s.headers
                        .iter()
                        .any(|(m, t)| m == n && t.literal() == Some(v))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests;
