//! What the server needs to know about a parsed request head: how its body is framed and
//! whether the connection stays open afterwards.

/// How the request body is delimited (RFC 9112 section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// The parts of a request head that decide how to read the rest and how to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) framing: Framing,
    pub(crate) keep_alive: bool,
    pub(crate) http10: bool,
    pub(crate) head_only: bool,
    pub(crate) expect_continue: bool,
}

/// Reads framing and persistence from a complete request. Ambiguous framing is an error rather
/// than a guess, as RFC 9112 asks, since guessing is how request smuggling starts.
pub(crate) fn inspect(req: &httparse::Request<'_, '_>) -> Result<Head, &'static str> {
    let mut length: Option<u64> = None;
    let mut chunked = None;
    let (mut close, mut keep_alive, mut expect_continue) = (false, false, false);
    for h in req.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(h.value).ok_or("bad Content-Length")?;
            if length.is_some_and(|m| m != n) {
                return Err("conflicting Content-Length headers");
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case("expect") {
            expect_continue = h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        }
    }
    let framing = match (chunked, length) {
        (Some(_), Some(_)) => return Err("both Content-Length and Transfer-Encoding"),
        (Some(true), None) => Framing::Chunked,
        (Some(false), None) => return Err("Transfer-Encoding other than chunked"),
        (None, Some(0)) | (None, None) => Framing::None,
        (None, Some(n)) => Framing::Length(n),
    };
    let http10 = req.version == Some(0);
    Ok(Head {
        framing,
        keep_alive: !close && (!http10 || keep_alive),
        http10,
        head_only: req.method == Some("HEAD"),
        expect_continue,
    })
}

fn parse_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(raw: &str) -> Result<Head, &'static str> {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        assert!(req.parse(raw.as_bytes()).unwrap().is_complete(), "{raw}");
        inspect(&req)
    }

    #[test]
    fn framing_and_persistence() {
        let h = head("GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (h.framing, h.keep_alive, h.head_only),
            (Framing::None, true, false)
        );
        assert!(
            !head("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n")
                .unwrap()
                .keep_alive
        );
        assert!(!head("GET / HTTP/1.0\r\n\r\n").unwrap().keep_alive);
        let h = head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(h.keep_alive && h.http10);
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n")
                .unwrap()
                .framing,
            Framing::Length(12)
        );
        let h = head(
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\nExpect: 100-continue\r\n\r\n",
        )
        .unwrap();
        assert_eq!((h.framing, h.expect_continue), (Framing::Chunked, true));
        assert!(head("HEAD / HTTP/1.1\r\n\r\n").unwrap().head_only);
    }

    #[test]
    fn ambiguous_framing_is_rejected() {
        assert!(
            head("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
                .is_err()
        );
        assert!(head("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").is_err());
        assert!(head("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").is_err());
        assert!(head("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n").is_err());
        assert!(head("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").is_err());
        assert!(head("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").is_ok());
    }
}
