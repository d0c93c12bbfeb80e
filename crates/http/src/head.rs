//! What a response head says about the rest of the exchange: how the body is framed and whether
//! the connection can carry another request (RFC 9112 §6.3 and §9.3).

/// How the body of a response is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body: HEAD, 1xx, 204, 304.
    Empty,
    Length(u64),
    Chunked,
    /// Neither length nor chunked: the body ends when the server closes.
    UntilClose,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub status: u16,
    pub framing: Framing,
    pub keep_alive: bool,
    /// `Content-Type: text/event-stream`: the body is read as events as they arrive.
    pub event_stream: bool,
}

impl Head {
    /// An interim response (100 Continue, 103 Early Hints): the real one follows on the same
    /// connection. 101 is final: after it the connection no longer speaks HTTP.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// Reads framing and persistence from a parsed head. `version` is httparse's minor version.
pub(crate) fn interpret(
    version: u8,
    status: u16,
    headers: &[httparse::Header<'_>],
    head_request: bool,
) -> Result<Head, &'static str> {
    let mut length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut chunked = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut event_stream = false;
    for h in headers {
        // Dispatch on length first: most headers are none of these three.
        let name = h.name.as_bytes();
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let n = match parse_length(h.value) {
                    Some(n) => n,
                    None => list_length(h.value)?,
                };
                if length.is_some_and(|l| l != n) {
                    return Err("conflicting Content-Length values");
                }
                length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                transfer_encoding = true;
                // Only the last coding frames the message: "gzip, chunked" is chunked.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
                chunked = trim(last).eq_ignore_ascii_case(b"chunked");
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                if h.value.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive_token = true;
                    continue;
                }
                for token in h.value.split(|&b| b == b',') {
                    let token = trim(token);
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep_alive_token |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            12 if name.eq_ignore_ascii_case(b"content-type") => {
                event_stream = is_event_stream_type(h.value);
            }
            _ => {}
        }
    }
    let mut keep_alive = !close && (version >= 1 || keep_alive_token);
    let framing = if head_request || (100..200).contains(&status) || status == 204 || status == 304
    {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if transfer_encoding {
        // A coding other than chunked last: RFC 9112 §6.3 says the body runs to the close.
        Framing::UntilClose
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    if framing == Framing::UntilClose || status == 101 {
        keep_alive = false;
    }
    Ok(Head {
        status,
        framing,
        keep_alive,
        event_stream,
    })
}

/// "5, 5": a list is allowed when every item is the same length.
fn list_length(value: &[u8]) -> Result<u64, &'static str> {
    let mut items = value
        .split(|&b| b == b',')
        .map(|item| parse_length(trim(item)));
    let first = items.next().flatten().ok_or("bad Content-Length")?;
    for item in items {
        if item.ok_or("bad Content-Length")? != first {
            return Err("conflicting Content-Length values");
        }
    }
    Ok(first)
}

fn parse_length(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// A `Content-Type` value whose essence is `text/event-stream` (parameters aside).
pub(crate) fn is_event_stream_type(value: &[u8]) -> bool {
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    trim(essence).eq_ignore_ascii_case(b"text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interprets a head written as on the wire, with `\n` line ends for brevity.
    fn head(text: &str, head_request: bool) -> Result<Head, &'static str> {
        let wire = format!("{text}\n\n").replace('\n', "\r\n");
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut parsed = httparse::Response::new(&mut headers);
        assert!(
            parsed.parse(wire.as_bytes()).unwrap().is_complete(),
            "{text}"
        );
        interpret(
            parsed.version.unwrap(),
            parsed.code.unwrap(),
            parsed.headers,
            head_request,
        )
    }

    #[test]
    fn keep_alive_follows_version_and_connection_header() {
        let table = [
            ("HTTP/1.1 200 OK", true),
            ("HTTP/1.1 200 OK\nConnection: close", false),
            ("HTTP/1.1 200 OK\nConnection: Keep-Alive, CLOSE", false),
            ("HTTP/1.1 200 OK\nConnection: upgrade", true),
            ("HTTP/1.0 200 OK", false),
            ("HTTP/1.0 200 OK\nConnection: keep-alive", true),
            ("HTTP/1.0 200 OK\nConnection:  Keep-Alive ", true),
            ("HTTP/1.0 200 OK\nConnection: keep-alive, close", false),
        ];
        for (text, keep_alive) in table {
            let text = format!("{text}\nContent-Length: 0");
            assert_eq!(head(&text, false).unwrap().keep_alive, keep_alive, "{text}");
        }
    }

    #[test]
    fn framing_follows_rfc_9112() {
        use Framing::*;
        // (head, HEAD request?, framing, keep-alive?)
        let table = [
            ("200 OK\nContent-Length: 12", false, Length(12), true),
            (
                "200 OK\ncontent-length: 5, 5\nContent-Length: 5",
                false,
                Length(5),
                true,
            ),
            ("200 OK\nTransfer-Encoding: chunked", false, Chunked, true),
            (
                "200 OK\nTransfer-Encoding: gzip, Chunked",
                false,
                Chunked,
                true,
            ),
            (
                "200 OK\nTransfer-Encoding: chunked\nContent-Length: 3",
                false,
                Chunked,
                true,
            ),
            ("200 OK\nTransfer-Encoding: gzip", false, UntilClose, false),
            ("200 OK", false, UntilClose, false),
            ("200 OK\nContent-Length: 12", true, Empty, true),
            ("204 No Content", false, Empty, true),
            ("304 Not Modified\nContent-Length: 99", false, Empty, true),
            ("100 Continue", false, Empty, true),
            (
                "101 Switching Protocols\nConnection: upgrade",
                false,
                Empty,
                false,
            ),
        ];
        for (text, head_request, framing, keep_alive) in table {
            let h = head(&format!("HTTP/1.1 {text}"), head_request).unwrap();
            assert_eq!((h.framing, h.keep_alive), (framing, keep_alive), "{text}");
        }
    }

    #[test]
    fn bad_lengths_are_protocol_errors() {
        for value in [
            "",
            "-1",
            "1e3",
            "0x10",
            "99999999999999999999",
            "1 2",
            "1,,1",
        ] {
            let text = format!("HTTP/1.1 200 OK\nContent-Length: {value}");
            assert_eq!(head(&text, false), Err("bad Content-Length"), "{value:?}");
        }
        let text = "HTTP/1.1 200 OK\nContent-Length: 1\nContent-Length: 2";
        assert_eq!(head(text, false), Err("conflicting Content-Length values"));
    }

    #[test]
    fn only_non_101_1xx_are_interim() {
        let interim = |status| {
            head(&format!("HTTP/1.1 {status} X"), false)
                .unwrap()
                .is_interim()
        };
        assert!(interim(100) && interim(103));
        assert!(!interim(101) && !interim(200));
    }
}
