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
