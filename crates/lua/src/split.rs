//! The bytes a script returns, split into the requests they hold: wrk pipelines a string of
//! several requests, so each must be found (its head, then `Content-Length` bytes of body).

use herd_engine::Request;

/// Every request in `bytes`, in order; a message saying what is wrong (as `line:column`, like
/// wrk) when they are not complete HTTP/1.1 requests.
pub(crate) fn split(bytes: &[u8], keep_response: bool) -> Result<Vec<Request>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut req = httparse::Request::new(&mut headers);
        let head = match req.parse(rest) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                return Err(format!(
                    "an incomplete request at {}",
                    position(bytes, bytes.len())
                ))
            }
            Err(e) => {
                return Err(format!(
                    "an invalid request ({e}) at {}",
                    position(bytes, at)
                ))
            }
        };
        let mut body = 0usize;
        for h in req.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                body = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| format!("a bad Content-Length at {}", position(bytes, at)))?;
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(format!(
                    "a chunked request at {}: give the body with a Content-Length (wrk.format does)",
                    position(bytes, at)
                ));
            }
        }
        let end = at + head + body;
        if end > bytes.len() {
            return Err(format!(
                "a body shorter than its Content-Length at {}",
                position(bytes, bytes.len())
            ));
        }
        let mut r = Request::new(&bytes[at..end]);
        r.head = req.method == Some("HEAD");
        r.keep_response = keep_response;
        out.push(r);
        at = end;
    }
    if out.is_empty() {
        return Err("an empty string, not a request".to_owned());
    }
    Ok(out)
}

/// `line:column` of byte `at`, both from 1.
fn position(bytes: &[u8], at: usize) -> String {
    let before = &bytes[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    format!("{line}:{column}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipeline_of_three_is_three_requests() {
        let one = b"GET /?foo HTTP/1.1\r\nhost: a\r\n\r\n";
        let post = b"POST /p HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc";
        let all = [&one[..], &post[..], &one[..]].concat();
        let reqs = split(&all, false).unwrap();
        assert_eq!(reqs.len(), 3);
        assert_eq!(&*reqs[1].bytes, &post[..]);
    }

    #[test]
    fn a_truncated_request_says_where() {
        let e = split(b"GET / HTTP/1.1\r\nhost: a\r\n", false).unwrap_err();
        assert!(e.contains("incomplete request at 3:1"), "{e}");
        let e = split(b"", false).unwrap_err();
        assert!(e.contains("empty"), "{e}");
    }
}
