//! A `Transfer-Encoding: chunked` decoder that keeps its place between reads, so a chunk header or
//! CRLF split across two TCP segments costs nothing extra and the body is never copied to be
//! reassembled.

/// Where the decoder is within the chunked body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading the hex size; `any` is whether a digit was seen.
    Size {
        value: u64,
        any: bool,
    },
    /// Skipping a chunk extension (`;name=value`) up to the end of the line.
    Extension {
        size: u64,
    },
    /// Saw CR after the size line, want LF.
    SizeLf {
        size: u64,
    },
    Data {
        remaining: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line, or of the final empty line.
    TrailerStart,
    /// Skipping a trailer field.
    Trailer,
    /// Saw CR of the final empty line, want LF.
    EndLf,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkError {
    pub reason: &'static str,
    /// Offset in the input passed to [`ChunkedDecoder::decode`] of the offending byte.
    pub at: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct ChunkedDecoder {
    state: State,
}

impl ChunkedDecoder {
    pub fn new() -> Self {
        ChunkedDecoder {
            state: State::Size {
                value: 0,
                any: false,
            },
        }
    }

    /// Consumes framing from `input` and hands each run of body bytes to `on_data`. Returns how
    /// many bytes were consumed and whether the body (trailers included) is complete; bytes after
    /// the end are left unconsumed for the next response. Bare LF is accepted for CRLF, as most
    /// clients do.
    pub fn decode(
        &mut self,
        input: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<(usize, bool), ChunkError> {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Done => return Ok((i, true)),
                State::Data { remaining } => {
                    let take = remaining.min((input.len() - i) as u64) as usize;
                    on_data(&input[i..i + take]);
                    i += take;
                    self.state = match remaining - take as u64 {
                        0 => State::DataCr,
                        remaining => State::Data { remaining },
                    };
                    continue;
                }
                _ => {}
            }
            let b = input[i];
            let err = |reason| Err(ChunkError { reason, at: i });
            self.state = match (self.state, b) {
                (State::Size { value, .. }, _) if b.is_ascii_hexdigit() => {
                    let digit = (b as char).to_digit(16).unwrap_or(0) as u64;
                    match value.checked_mul(16) {
                        Some(v) => State::Size {
                            value: v + digit,
                            any: true,
                        },
                        None => return err("chunk size too large"),
                    }
                }
                (State::Size { any: false, .. }, _) => return err("bad chunk size"),
                (State::Size { value, .. }, b';' | b' ' | b'\t') => {
                    State::Extension { size: value }
                }
                (State::Size { value, .. }, b'\r') => State::SizeLf { size: value },
                (State::Size { value, .. }, b'\n') => after_size(value),
                (State::Size { .. }, _) => return err("bad chunk size"),
                (State::Extension { size }, b'\r') => State::SizeLf { size },
                (State::Extension { size }, b'\n') => after_size(size),
                (State::Extension { size }, _) => State::Extension { size },
                (State::SizeLf { size }, b'\n') => after_size(size),
                (State::SizeLf { .. }, _) => return err("expected LF after chunk size"),
                (State::DataCr, b'\r') => State::DataLf,
                (State::DataCr | State::DataLf, b'\n') => State::Size {
                    value: 0,
                    any: false,
                },
                (State::DataCr | State::DataLf, _) => return err("expected CRLF after chunk data"),
                (State::TrailerStart, b'\r') => State::EndLf,
                (State::TrailerStart, b'\n') => State::Done,
                (State::Trailer, b'\n') => State::TrailerStart,
                (State::TrailerStart | State::Trailer, _) => State::Trailer,
                (State::EndLf, b'\n') => State::Done,
                (State::EndLf, _) => return err("expected LF after trailers"),
                (State::Data { .. } | State::Done, _) => unreachable!("handled above"),
            };
            i += 1;
        }
        Ok((i, self.state == State::Done))
    }
}

fn after_size(size: u64) -> State {
    match size {
        0 => State::TrailerStart,
        remaining => State::Data { remaining },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces cut at `cuts`, as successive reads would deliver it.
    fn decode_in_pieces(input: &[u8], cuts: &[usize]) -> Result<(Vec<u8>, usize), ChunkError> {
        let mut dec = ChunkedDecoder::new();
        let mut body = Vec::new();
        let mut start = 0;
        for &end in cuts.iter().chain([&input.len()]) {
            let (used, done) = dec
                .decode(&input[start..end], |d| body.extend_from_slice(d))
                .map_err(|e| ChunkError {
                    at: e.at + start,
                    ..e
                })?;
            if done {
                return Ok((body, start + used));
            }
            assert_eq!(
                used,
                end - start,
                "an unfinished body consumes all its input"
            );
            start = end;
        }
        panic!("body not complete: {:?}", String::from_utf8_lossy(input));
    }

    #[test]
    fn decodes_the_same_whatever_the_read_boundaries() {
        let table: [(&[u8], &[u8]); 5] = [
            (b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", b"hello world"),
            (b"0\r\n\r\n", b""),
            (
                b"A;name=\"v\"\r\n0123456789\r\n0;last\r\n\r\n",
                b"0123456789",
            ),
            (
                b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n",
                b"abc",
            ),
            (b"00004\nabcd\n0\n\n", b"abcd"),
        ];
        for (wire, body) in table {
            for cut in 0..=wire.len() {
                let (got, used) = decode_in_pieces(wire, &[cut]).unwrap();
                assert_eq!((got.as_slice(), used), (body, wire.len()), "cut at {cut}");
            }
            let every_byte: Vec<usize> = (1..wire.len()).collect();
            assert_eq!(decode_in_pieces(wire, &every_byte).unwrap().0, body);
        }
    }

    #[test]
    fn bytes_after_the_body_are_left_for_the_next_response() {
        let wire = b"2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n";
        let mut dec = ChunkedDecoder::new();
        let (used, done) = dec.decode(wire, |_| {}).unwrap();
        assert!(done);
        assert_eq!(&wire[used..], b"HTTP/1.1 200 OK\r\n");
    }

    #[test]
    fn malformed_framing_is_an_error_at_the_offending_byte() {
        let table: [(&[u8], &str, usize); 7] = [
            (b"zz\r\n", "bad chunk size", 0),
            (b"\r\n", "bad chunk size", 0),
            (b"-5\r\n", "bad chunk size", 0),
            (b"5x\r\nhello", "bad chunk size", 1),
            (b"1ffffffffffffffff\r\n", "chunk size too large", 16),
            (b"2\r\nokX\r\n", "expected CRLF after chunk data", 5),
            (b"2\rX", "expected LF after chunk size", 2),
        ];
        for (wire, reason, at) in table {
            let err = decode_in_pieces(wire, &[]).unwrap_err();
            assert_eq!(
                err,
                ChunkError { reason, at },
                "{:?}",
                String::from_utf8_lossy(wire)
            );
        }
    }
}
