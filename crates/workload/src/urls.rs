//! siege's URL file: one `URL [METHOD data]` per line (`POST a=1&b=2`, or `POST </path/file`
//! for the body from a file), `#` comments and blank lines skipped. Each URL becomes a
//! one-request scenario; users walk them in order, as siege's users do without `-i`.
//! `herd run`'s `-m`, `-H` and `--body` apply to every line: the method and body to lines that
//! name no method of their own, the headers to all of them (a line's own words win).

use crate::diag::{Diag, Diagnostics, Pos};
use crate::program::{Program, Scenario, Send, Step};
use crate::template::Template;
use herd_engine::Request;
use herd_http::{prepare, RequestSpec, Target};
use std::path::Path;

/// What the command line says about every request of a URL file.
#[derive(Clone, Debug, Default)]
pub struct UrlDefaults {
    /// The method of lines without one (`-m`); GET when `None`.
    pub method: Option<String>,
    /// Added to every request (`-H`).
    pub headers: Vec<(String, String)>,
    /// The body of lines without a method of their own (`--body`).
    pub body: Vec<u8>,
}

pub fn read(path: &Path, defaults: &UrlDefaults) -> Result<Program, Diagnostics> {
    let fail = |d: Vec<Diag>| Diagnostics::new(path, d);
    let text = std::fs::read_to_string(path).map_err(|e| {
        fail(vec![Diag::new(
            Pos { line: 1, col: 1 },
            format!("cannot read the URL file {}: {e}", path.display()),
        )])
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut diags = Vec::new();
    let mut target: Option<Target> = None;
    let mut scenarios = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |col: usize| Pos { line: i + 1, col };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let col = line.len() - line.trim_start().len() + 1;
        let (url, rest) = trimmed
            .split_once(char::is_whitespace)
            .map_or((trimmed, ""), |(u, r)| (u, r.trim()));
        let url = if url.contains("://") {
            url.to_owned()
        } else {
            format!("http://{url}")
        };
        let t = match &target {
            Some(t) => t.clone(),
            None => match Target::parse(&url) {
                Ok(t) => {
                    target = Some(t.clone());
                    t
                }
                Err(e) => {
                    diags.push(Diag::new(at(col), e.to_string()));
                    continue;
                }
            },
        };
        let (method, body) = match method_and_body(rest, trimmed, defaults, base, at, col) {
            Ok(mb) => mb,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let mut headers = defaults.headers.clone();
        let typed = headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        if !body.is_empty() && !typed {
            headers.push((
                "Content-Type".to_owned(),
                "application/x-www-form-urlencoded".to_owned(),
            ));
        }
        let spec = RequestSpec {
            method: method.clone(),
            path: url.clone(),
            headers,
            body,
        };
        let mut req = match prepare(&t, &spec) {
            Ok(r) => r,
            Err(e) => {
                diags.push(Diag::new(at(col), e.to_string()));
                continue;
            }
        };
        let name = format!("{method} {}", url);
        let index = names.iter().position(|n| *n == name).unwrap_or_else(|| {
            names.push(name.clone());
            names.len() - 1
        });
        req.name = index as u32;
        req.keep_response = true;
        let send = prebuilt(method, &url, index, spec, req);
        scenarios.push(Scenario {
            name,
            weight: 1,
            steps: vec![Step::Send(Box::new(send))],
            sources: Vec::new(),
        });
    }
    match target {
        Some(t) if diags.is_empty() && !scenarios.is_empty() => Ok(Program::new(
            t,
            Vec::new(),
            scenarios,
            names,
            Vec::new(),
            0,
            true,
            true,
            0,
        )),
        _ => {
            if diags.is_empty() {
                diags.push(
                    Diag::new(Pos { line: 1, col: 1 }, "the URL file has no URLs")
                        .hint("one `URL [POST data]` per line"),
                );
            }
            Err(fail(diags))
        }
    }
}

/// A line's method and body after its URL: the defaults (`-m`, `--body`) when it has none,
/// `POST data` or `POST <file` (read from beside the URL file).
fn method_and_body(
    rest: &str,
    trimmed: &str,
    defaults: &UrlDefaults,
    base: &Path,
    at: impl Fn(usize) -> Pos,
    col: usize,
) -> Result<(String, Vec<u8>), Diag> {
    match rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(m, d)| (m, d.trim()))
    {
        ("", _) => Ok((
            defaults.method.clone().unwrap_or_else(|| "GET".to_owned()),
            defaults.body.clone(),
        )),
        (m, data)
            if ["POST", "PUT", "PATCH", "DELETE", "GET", "HEAD"]
                .contains(&m.to_ascii_uppercase().as_str()) =>
        {
            let body = match data.strip_prefix('<') {
                Some(file) => match std::fs::read(base.join(file.trim())) {
                    Ok(b) => b,
                    Err(e) => {
                        return Err(Diag::new(
                            at(col),
                            format!(
                                "cannot read the body file {}: {e}",
                                base.join(file.trim()).display()
                            ),
                        ))
                    }
                },
                None => data.as_bytes().to_vec(),
            };
            Ok((m.to_ascii_uppercase(), body))
        }
        (m, _) => Err(Diag::new(
            at(col + trimmed.find(m).unwrap_or(0)),
            format!("`{m}` is not a method"),
        )
        .hint("a line is `URL`, or `URL POST data`")),
    }
}

/// A URL line's request, made once: the step every user sends as is.
fn prebuilt(method: String, url: &str, index: usize, spec: RequestSpec, req: Request) -> Send {
    Send {
        llm: false,
        lua_check: None,
        json_checks: Vec::new(),
        grpc: None,
        name: index as u32,
        method,
        path: Template::literal(url),
        headers: spec
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), Template::literal(v)))
            .collect(),
        body: Template::literal(&String::from_utf8_lossy(&spec.body)),
        keep: true,
        only_cookies: false,
        status: Vec::new(),
        status_check: None,
        body_contains: None,
        extract: Vec::new(),
        follow: false,
        sent_check: None,
        prebuilt: Some((spec, req)),
        cache_slot: None,
        expect: None,
        close: false,
        socket: herd_engine::SocketRole::None,
    }
}
