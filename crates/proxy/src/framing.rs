//! Where an HTTP/1.1 message's body ends: a length, chunks, or the connection's end. Enough
//! to follow requests and responses through a connection, not to read them.

/// What is left of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(u64),
    Chunked(Chunk),
    /// Until the connection closes (a response without length).
    UntilClose,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Reading a size line (its digits so far).
    Size(u64, bool),
    /// In a chunk's data: bytes left, then its CRLF (2 bytes).
    Data(u64),
    /// After the last chunk: the trailer lines, ended by an empty one (bytes of the line so far).
    Trailer(usize),
}

impl Framing {
    /// From a message's headers: (name, value) pairs.
    pub fn of(headers: &[httparse::Header<'_>], until_close: bool) -> Option<Framing> {
        let mut length = None;
        for h in headers {
            if h.name.eq_ignore_ascii_case("transfer-encoding") {
                let v = String::from_utf8_lossy(h.value).to_ascii_lowercase();
                if v.trim_end().ends_with("chunked") {
                    return Some(Framing::Chunked(Chunk::Size(0, false)));
                }
            } else if h.name.eq_ignore_ascii_case("content-length") {
                length = std::str::from_utf8(h.value).ok()?.trim().parse().ok();
            }
        }
        match length {
            Some(n) => Some(Framing::Length(n)),
            None if until_close => Some(Framing::UntilClose),
            None => Some(Framing::Length(0)),
        }
    }

    /// Takes what of `buf` belongs to the body; returns the bytes taken and whether the body
    /// ended there. `None`: the chunk framing is broken.
    pub fn consume(&mut self, buf: &[u8]) -> Option<(usize, bool)> {
        match self {
            Framing::Length(left) => {
                let n = (*left).min(buf.len() as u64);
                *left -= n;
                Some((n as usize, *left == 0))
            }
            Framing::UntilClose => Some((buf.len(), false)),
            Framing::Chunked(state) => {
                let mut i = 0;
                while i < buf.len() {
                    match state {
                        Chunk::Size(n, in_ext) => {
                            let b = buf[i];
                            i += 1;
                            match b {
                                b'\n' => {
                                    *state = if *n == 0 {
                                        Chunk::Trailer(0)
                                    } else {
                                        Chunk::Data(*n + 2)
                                    };
                                }
                                b'\r' => {}
                                b';' => *in_ext = true,
                                _ if *in_ext => {}
                                _ => {
                                    let d = (b as char).to_digit(16)?;
                                    *n = n.checked_mul(16)?.checked_add(u64::from(d))?;
                                }
                            }
                        }
                        Chunk::Data(left) => {
                            let n = (*left).min((buf.len() - i) as u64);
                            *left -= n;
                            i += n as usize;
                            if *left == 0 {
                                *state = Chunk::Size(0, false);
                            }
                        }
                        Chunk::Trailer(line) => {
                            let b = buf[i];
                            i += 1;
                            match b {
                                b'\n' if *line == 0 => return Some((i, true)),
                                b'\n' => *line = 0,
                                b'\r' => {}
                                _ => *line += 1,
                            }
                        }
                    }
                }
                Some((i, false))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_after_the_last_chunk_and_its_trailer() {
        let body = b"5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nTrailer: v\r\n\r\nNEXT";
        for split in 1..body.len() {
            let mut f = Framing::Chunked(Chunk::Size(0, false));
            let (a, done) = f.consume(&body[..split]).unwrap();
            let total = if done {
                a
            } else {
                let (b, done) = f.consume(&body[split..]).unwrap();
                assert!(done, "split at {split}");
                a + b
            };
            assert_eq!(total, body.len() - 4, "split at {split}");
        }
    }

    #[test]
    fn a_length_takes_only_its_bytes() {
        let mut f = Framing::Length(3);
        assert_eq!(f.consume(b"abcdef"), Some((3, true)));
    }
}
