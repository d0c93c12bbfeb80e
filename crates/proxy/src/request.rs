//! A request as the HTTP-aware toxics see it (its method and path), and how they choose one.

/// A request as the faults match it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Req {
    pub method: String,
    pub path: String,
}

/// Whether a request has the method (upper case; "" for any) and a path the pattern names
/// (exact, without the query; a prefix ending in `*`; "" for any).
pub(crate) fn pattern_matches(method: &str, pattern: &str, req: &Req) -> bool {
    let method = method.is_empty() || method == req.method;
    let path = match pattern.strip_suffix('*') {
        _ if pattern.is_empty() => true,
        Some(prefix) => req.path.starts_with(prefix),
        None => req.path.split('?').next() == Some(pattern),
    };
    method && path
}

/// "attribute K must be WANT, got V": the API's answer to an attribute of the wrong kind.
pub(crate) fn bad_attribute(k: &str, want: &str, v: &serde_json::Value) -> crate::error::ApiError {
    crate::error::ApiError::bad_body(format!("attribute {k} must be {want}, got {v}"))
}

/// The attributes every request-choosing toxic shares (`method`, `path`, `rate`): sets the
/// one `k` names and says `Ok(true)`, or `Ok(false)` when `k` is none of them.
pub(crate) fn apply_choice(
    k: &str,
    v: &serde_json::Value,
    method: &mut String,
    path: &mut String,
    rate: &mut f64,
) -> Result<bool, crate::error::ApiError> {
    let text = || v.as_str().ok_or_else(|| bad_attribute(k, "a string", v));
    match k {
        "method" => *method = text()?.to_ascii_uppercase(),
        "path" => *path = text()?.into(),
        "rate" => {
            *rate = v
                .as_f64()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| bad_attribute(k, "a number from 0 to 1", v))?
        }
        _ => return Ok(false),
    }
    Ok(true)
}
