//! What nghttp2's callbacks do, in safe code: `ffi.rs` turns each callback's pointers into
//! slices and calls one of these methods on the session's [`State`].

use crate::streams::{Field, Streams};
use crate::{Event, Events, StreamEnd};

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) server: bool,
    pub(crate) events: Vec<Event>,
    /// Header and body bytes of `keep` streams received by the last `recv`.
    pub(crate) kept: Vec<u8>,
    pub(crate) streams: Streams,
    /// The peer's GOAWAY: (last stream id, error code).
    pub(crate) goaway: Option<(i32, u32)>,
    /// The peer's first SETTINGS arrived: its stream limit is known.
    pub(crate) settled: bool,
    /// Bytes written that belong to no stream (the preface, SETTINGS, acknowledgements,
    /// window updates): the next stream to close carries them, so the streams' bytes add up
    /// to the connection's.
    pub(crate) unclaimed_out: u64,
    /// nghttp2's last word on what the peer did wrong, during the current `recv`.
    pub(crate) complaint: Option<String>,
    /// Server side, `ServerSession::stream_requests`: requests are handed over in [`Part`]s
    /// as they arrive (head, body pieces, end) instead of as one `Event::Request` once whole.
    pub(crate) partial: bool,
    pub(crate) parts: Vec<Part>,
}

/// A piece of a request, for a server that answers before the request is whole (a gRPC
/// stream from the client, a bidirectional one); see `ServerSession::stream_requests`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// The request's head: method, path, and the other fields as `name: value\r\n` lines
    /// (an extended CONNECT's `:protocol: websocket` among them).
    Head {
        stream_id: i32,
        method: Box<[u8]>,
        path: Box<[u8]>,
        fields: Box<[u8]>,
    },
    /// Body bytes, in order (consecutive pieces of one stream come as one).
    Data { stream_id: i32, bytes: Vec<u8> },
    /// The client's side of the stream is over.
    End { stream_id: i32 },
}

/// What the body provider does next for a stream.
pub(crate) enum Read {
    /// `n` bytes written; `end` when that was the last of them.
    Bytes { n: usize, end: bool },
    /// Nothing to send yet: hold the stream's DATA until more is written.
    Defer,
    /// The last bytes (`n` of them) are out; these trailers end the stream.
    Trailers { n: usize, fields: Vec<Field> },
}

impl State {
    /// Before new input or output: kept bytes are dropped once every event naming them was
    /// taken.
    pub(crate) fn start(&mut self) {
        if self.events.is_empty() {
            self.kept.clear();
        }
    }

    pub(crate) fn events(&mut self) -> Events<'_> {
        Events {
            events: self.events.drain(..),
            kept: &self.kept,
        }
    }

    /// A peer's HEADERS begins a stream: on a server, a new request.
    pub(crate) fn begin_request(&mut self, stream_id: i32) {
        if self.server {
            if let Some(stream) = self.streams.open(stream_id) {
                stream.exchange = usize::try_from(stream_id).unwrap_or(0);
            }
        }
    }

    pub(crate) fn header(&mut self, stream_id: i32, name: &[u8], value: &[u8]) {
        let server = self.server;
        let Some(stream) = self.streams.get(stream_id) else {
            return;
        };
        if server {
            match name {
                b":method" => stream.method = value.to_vec(),
                b":path" => stream.path = value.to_vec(),
                // An extended CONNECT's protocol (RFC 8441), kept among the fields.
                _ if name.starts_with(b":") && name != b":protocol" => {}
                _ => {
                    stream.fields.extend_from_slice(name);
                    stream.fields.extend_from_slice(b": ");
                    stream.fields.extend_from_slice(value);
                    stream.fields.extend_from_slice(b"\r\n");
                }
            }
            return;
        }
        let exchange = stream.exchange;
        if name == b":status" {
            let status = status(value);
            // 1xx heads are interim; only the final status is the response's.
            if status >= 200 {
                self.events.push(Event::Status { exchange, status });
                // Its body is as long as its content-length says, unless it has none.
                stream.bodiless = stream.head || status == 204 || status == 304;
                stream.length = None;
            }
            return;
        }
        if name == b"content-length" && !stream.bodiless {
            stream.length = Some(length(value));
        }
        if stream.keep || event_stream(name, value) {
            stream.events |= event_stream(name, value);
            let name = keep(&mut self.kept, name);
            let value = keep(&mut self.kept, value);
            self.events.push(Event::Header {
                exchange,
                name,
                value,
            });
        }
    }

    pub(crate) fn data(&mut self, stream_id: i32, bytes: &[u8]) {
        let Some(stream) = self.streams.get(stream_id) else {
            return;
        };
        if self.server && self.partial {
            stream.received += bytes.len();
            match self.parts.last_mut() {
                Some(Part::Data {
                    stream_id: last,
                    bytes: kept,
                }) if *last == stream_id => kept.extend_from_slice(bytes),
                _ => self.parts.push(Part::Data {
                    stream_id,
                    bytes: bytes.to_vec(),
                }),
            }
            return;
        }
        if self.server {
            stream.received += bytes.len();
            let room = crate::KEPT_BODY.saturating_sub(stream.request_body.len());
            stream
                .request_body
                .extend_from_slice(&bytes[..room.min(bytes.len())]);
            return;
        }
        let (exchange, len) = (stream.exchange, bytes.len());
        stream.received += len;
        let kept = (stream.keep || stream.events).then(|| keep(&mut self.kept, bytes));
        // A response's DATA frames arrive together: one event for a run of them.
        if let Some(Event::Data {
            exchange: last,
            len: total,
            kept: last_kept,
        }) = self.events.last_mut()
        {
            if *last == exchange {
                match (last_kept, kept) {
                    (None, None) => {
                        *total += len;
                        return;
                    }
                    (Some(range), Some(more)) if range.end == more.start => {
                        range.end = more.end;
                        *total += len;
                        return;
                    }
                    (_, kept) => {
                        self.events.push(Event::Data {
                            exchange,
                            len,
                            kept,
                        });
                        return;
                    }
                }
            }
        }
        self.events.push(Event::Data {
            exchange,
            len,
            kept,
        });
    }

    /// A request's HEADERS arrived whole: with `partial`, its head goes out now.
    pub(crate) fn request_head(&mut self, stream_id: i32) {
        if !(self.server && self.partial) {
            return;
        }
        if let Some(stream) = self.streams.get(stream_id) {
            self.parts.push(Part::Head {
                stream_id,
                method: std::mem::take(&mut stream.method).into(),
                path: std::mem::take(&mut stream.path).into(),
                fields: std::mem::take(&mut stream.fields).into(),
            });
        }
    }

    /// The peer ended its side of a stream: on a server, the request is whole.
    pub(crate) fn end_of_request(&mut self, stream_id: i32) {
        if !self.server {
            return;
        }
        if self.partial {
            if self.streams.get(stream_id).is_some() {
                self.parts.push(Part::End { stream_id });
            }
            return;
        }
        if let Some(stream) = self.streams.get(stream_id) {
            self.events.push(Event::Request {
                stream_id,
                method: std::mem::take(&mut stream.method).into(),
                path: std::mem::take(&mut stream.path).into(),
                fields: std::mem::take(&mut stream.fields).into(),
                body: std::mem::take(&mut stream.request_body).into(),
                body_len: stream.received,
            });
        }
    }

    /// A frame of `len` bytes (its 9-byte header included) went into the output.
    pub(crate) fn frame_sent(&mut self, stream_id: i32, len: u64) {
        match self.streams.get(stream_id) {
            Some(stream) if stream_id != 0 => stream.wire_out += len,
            _ => self.unclaimed_out += len,
        }
    }

    pub(crate) fn goaway(&mut self, last_stream_id: i32, code: u32) {
        self.goaway = Some((last_stream_id, code));
        self.events.push(Event::GoAway {
            last_stream_id,
            code,
        });
    }

    pub(crate) fn closed(&mut self, stream_id: i32, code: u32) {
        let Some(stream) = self.streams.close(stream_id) else {
            return;
        };
        let unprocessed = match self.goaway {
            // nghttp2 closes the streams a GOAWAY left out with REFUSED_STREAM; requests it
            // never sent are above the last id too.
            Some((last, _)) => stream_id > last,
            None => false,
        };
        let end = if unprocessed && !self.server {
            StreamEnd::Unprocessed
        } else if code == 0 {
            match stream.length {
                Some(said) if said != stream.received as u64 => StreamEnd::BadLength {
                    said,
                    got: stream.received as u64,
                },
                _ => StreamEnd::Complete,
            }
        } else {
            StreamEnd::Reset(code)
        };
        let sent = stream.wire_out + std::mem::take(&mut self.unclaimed_out);
        self.events.push(Event::Closed {
            exchange: stream.exchange,
            stream_id,
            end,
            sent,
        });
    }

    /// Fills `buf` with the next bytes of a stream's body and says what comes after them.
    pub(crate) fn read_body(&mut self, stream_id: i32, buf: &mut [u8]) -> Read {
        let Some(stream) = self.streams.get(stream_id) else {
            return Read::Bytes { n: 0, end: true };
        };
        let rest = &stream.body[stream.sent..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        stream.sent += n;
        let drained = stream.sent == stream.body.len();
        if !stream.streaming {
            return Read::Bytes { n, end: drained };
        }
        if !drained {
            return Read::Bytes { n, end: false };
        }
        if !stream.finished {
            if n > 0 {
                return Read::Bytes { n, end: false };
            }
            stream.deferred = true;
            return Read::Defer;
        }
        Read::Trailers {
            n,
            fields: std::mem::take(&mut stream.trailers),
        }
    }
}

/// `content-type: text/event-stream`: a response read as events as they arrive.
fn event_stream(name: &[u8], value: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"content-type")
        && value
            .get(..17)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
}

/// A `:status` value as Rust's `u16` reads it (a leading `+` allowed), 0 if it is no number:
/// nghttp2's checks of it are off (`ffi.rs`).
fn status(value: &[u8]) -> u16 {
    let unsigned = value.strip_prefix(b"+").unwrap_or(value);
    digits(unsigned).map_or(0, |n| u16::try_from(n).unwrap_or(0))
}

/// A `content-length` value: its digits, or `u64::MAX` (no body is that long) when it is
/// no number.
fn length(value: &[u8]) -> u64 {
    digits(value).unwrap_or(u64::MAX)
}

/// A number written in decimal digits alone (no sign, no space), if it is one that fits.
fn digits(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

fn keep(kept: &mut Vec<u8>, bytes: &[u8]) -> std::ops::Range<usize> {
    let start = kept.len();
    kept.extend_from_slice(bytes);
    start..kept.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_lengths_read_as_rusts_parsers_read_them() {
        for v in [
            "200",
            "0200",
            "+200",
            "++200",
            "+",
            "",
            " 200",
            "20x",
            "65535",
            "65536",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "٣",
        ] {
            let want = v.parse::<u16>().unwrap_or(0);
            assert_eq!(status(v.as_bytes()), want, "{v:?}");
            let want = if v.bytes().all(|b| b.is_ascii_digit()) {
                v.parse::<u64>().unwrap_or(u64::MAX)
            } else {
                u64::MAX
            };
            assert_eq!(length(v.as_bytes()), want, "{v:?}");
        }
    }
}
