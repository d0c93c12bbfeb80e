//! Following a redirect: which method and body the next request carries. RFC 9110 15.4: 307 and
//! 308 repeat the request as it was (method and body); 303 asks for a GET (a HEAD stays a HEAD);
//! 301 and 302 turn a POST into a GET, as every browser does (the Fetch standard), and keep
//! other methods.

/// The request that follows a redirect response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// Where to: a path, or an absolute URL on the target.
    pub location: String,
    pub method: String,
    /// Whether the body (and its Content-Type) goes again.
    pub keep_body: bool,
}

impl Redirect {
    /// The redirect a `status` response to `request` (serialized, its request line first)
    /// asks for, to `location`.
    pub fn after(status: u16, request: &[u8], location: String) -> Redirect {
        let line = request.split(|&b| b == b' ').next().unwrap_or_default();
        let method = std::str::from_utf8(line).unwrap_or("GET");
        let (method, keep_body) = next_method(status, method);
        Redirect {
            location,
            method: method.to_owned(),
            keep_body,
        }
    }
}

/// The method after a `status` redirect of a `method` request, and whether the body is kept.
pub fn next_method(status: u16, method: &str) -> (&str, bool) {
    match status {
        307 | 308 => (method, true),
        303 if method == "HEAD" => ("HEAD", false),
        303 => ("GET", false),
        301 | 302 if method == "POST" => ("GET", false),
        _ => (method, !matches!(method, "GET" | "HEAD")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_keep_or_change_the_method_as_rfc_9110_says() {
        let table = [
            (307, "POST", "POST", true),
            (308, "POST", "POST", true),
            (307, "PUT", "PUT", true),
            (308, "GET", "GET", true),
            (303, "POST", "GET", false),
            (303, "PUT", "GET", false),
            (303, "HEAD", "HEAD", false),
            (303, "GET", "GET", false),
            (301, "POST", "GET", false),
            (302, "POST", "GET", false),
            (302, "GET", "GET", false),
            (302, "HEAD", "HEAD", false),
            (301, "PUT", "PUT", true),
            (302, "DELETE", "DELETE", true),
        ];
        for (status, method, want, body) in table {
            assert_eq!(
                next_method(status, method),
                (want, body),
                "{status} after {method}"
            );
        }
    }

    #[test]
    fn the_method_is_read_from_the_request_line() {
        let r = Redirect::after(307, b"PATCH /a HTTP/1.1\r\n\r\n", "/b".into());
        assert_eq!((r.method.as_str(), r.keep_body), ("PATCH", true));
        let r = Redirect::after(302, b"POST /a HTTP/1.1\r\n\r\n", "/b".into());
        assert_eq!((r.method.as_str(), r.keep_body), ("GET", false));
    }
}
