//! What nghttp2's callbacks do, in safe code: `ffi.rs` turns each callback's pointers into
//! slices and calls one of these methods on the session's [`State`].

use crate::streams::Streams;
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
                _ if name.starts_with(b":") => {}
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
            let status = std::str::from_utf8(value)
                .ok()
                .and_then(|s| s.parse::<u16>().ok())
                .unwrap_or(0);
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

    /// The peer ended its side of a stream: on a server, the request is whole.
    pub(crate) fn end_of_request(&mut self, stream_id: i32) {
        if !self.server {
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

    /// Fills `buf` with the next bytes of a stream's body: (bytes written, whether that was
    /// the end).
    pub(crate) fn read_body(&mut self, stream_id: i32, buf: &mut [u8]) -> (usize, bool) {
        let Some(stream) = self.streams.get(stream_id) else {
            return (0, true);
        };
        let rest = &stream.body[stream.sent..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        stream.sent += n;
        (n, stream.sent == stream.body.len())
    }
}

/// `content-type: text/event-stream`: a response read as events as they arrive.
fn event_stream(name: &[u8], value: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"content-type")
        && value
            .get(..17)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
}

/// A `content-length` value: its digits, or `u64::MAX` (no body is that long) when it is
/// no number.
fn length(value: &[u8]) -> u64 {
    match value {
        [] => u64::MAX,
        digits if digits.iter().all(u8::is_ascii_digit) => std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX),
        _ => u64::MAX,
    }
}

fn keep(kept: &mut Vec<u8>, bytes: &[u8]) -> std::ops::Range<usize> {
    let start = kept.len();
    kept.extend_from_slice(bytes);
    start..kept.len()
}
