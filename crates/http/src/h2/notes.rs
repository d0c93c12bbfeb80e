//! What the server says becomes what the loop needs: nghttp2's events become responses and
//! failures (a stream's end, a RST_STREAM classed by its code, a GOAWAY's unprocessed streams
//! sent again elsewhere and counted once).

use super::{Stream, H2, HELD};
use herd_engine::{EventStream, Failed, Failure, Note};
use herd_h2::{code_name, Event, StreamEnd};
use herd_metrics::ErrorKind;
use std::time::Instant;

impl H2 {
    /// Every stream still in flight fails: `unseen` for those the server cannot have
    /// processed (above its GOAWAY's last stream id).
    pub(super) fn fail_all(&mut self, why: &Failure, out: &mut Vec<Note>) {
        let goaway = self.h2.goaway();
        for exchange in 0..self.streams.len() {
            let Some(s) = self.take(exchange) else {
                continue;
            };
            // A held exchange never left: the server cannot have seen it.
            let unseen = s.stream_id == HELD || goaway.is_some_and(|(last, _)| s.stream_id > last);
            let failure = match goaway {
                Some((last, code)) if s.stream_id <= last => Failure::new(
                    ErrorKind::H2Goaway,
                    format!(
                        "the connection ended after the server's GOAWAY ({}) before this stream completed: {}",
                        code_name(code),
                        why.message
                    ),
                ),
                _ => why.clone(),
            };
            out.push(Note::Failed(Failed {
                ticket: s.ticket,
                failure,
                received: s.resp.bytes_received,
                unseen,
                sent: Some(if s.stream_id == HELD {
                    0
                } else {
                    self.h2.sent(s.stream_id)
                }),
            }));
        }
        self.held.clear();
        self.held_until = None;
    }

    /// Turns what nghttp2 saw into notes.
    pub(super) fn settle(&mut self, now: Instant, out: &mut Vec<Note>) {
        // What the server's SETTINGS say by now (they came in the bytes these events are of).
        let limit = self.h2.max_streams();
        let mut events = self.h2.events();
        let kept = events.kept;
        for event in events.events.by_ref() {
            // The stream heard from the server: its first byte, and the connection's bytes
            // read so far. The response carries the instant: no `Note::FirstByte` per stream,
            // which the loop has no use for (as HTTP/1.1).
            if let Some(Some(s)) = about(&event).and_then(|x| self.streams.get_mut(x)) {
                s.resp.bytes_received += std::mem::take(&mut self.unclaimed);
                if s.resp.first_byte.is_none() {
                    s.resp.first_byte = Some(now);
                }
            }
            let text = |r: std::ops::Range<usize>| String::from_utf8_lossy(&kept[r]).into_owned();
            match event {
                Event::Status { exchange, status } => {
                    if let Some(Some(s)) = self.streams.get_mut(exchange) {
                        s.resp.status = status;
                    }
                }
                Event::Header {
                    exchange,
                    name,
                    value,
                } => {
                    if let Some(Some(s)) = self.streams.get_mut(exchange) {
                        if is_event_stream(&kept[name.clone()], &kept[value.clone()]) {
                            s.resp.events = Some(Box::new(EventStream::new(s.llm)));
                            out.push(Note::Stream(s.ticket, None));
                        } else if is_grpc(&kept[name.clone()], &kept[value.clone()]) {
                            // Only kept responses say their headers: a call keeps its own.
                            let mut ev = EventStream::new(false);
                            ev.grpc = true;
                            s.resp.events = Some(Box::new(ev));
                        }
                        if s.keep {
                            s.resp.headers.push((text(name), text(value)));
                        }
                    }
                }
                Event::Data {
                    exchange,
                    len,
                    kept: body,
                } => {
                    if let Some(Some(s)) = self.streams.get_mut(exchange) {
                        s.resp.body_len += len as u64;
                        if let Some(r) = body {
                            if let Some(ev) = &mut s.resp.events {
                                if ev.grpc {
                                    crate::grpc_messages::scan(ev, &kept[r.clone()], now);
                                } else {
                                    let before = ev.events;
                                    crate::sse::scan(ev, &kept[r.clone()], now);
                                    if ev.events > before {
                                        out.push(Note::Stream(s.ticket, ev.last));
                                    }
                                }
                            }
                            if s.keep {
                                s.resp.body.extend_from_slice(&kept[r]);
                            }
                        }
                    }
                }
                Event::GoAway { .. } => self.closing = true,
                Event::Closed {
                    exchange,
                    end,
                    sent,
                    ..
                } => {
                    let Some(mut stream) = self.streams.get_mut(exchange).and_then(Option::take)
                    else {
                        continue;
                    };
                    stream.resp.bytes_sent = sent;
                    let over = stream.early.is_some_and(|n| n > limit);
                    self.free.push(exchange);
                    self.in_flight -= 1;
                    out.push(ended(
                        stream,
                        end,
                        over,
                        self.closing && self.in_flight == 0,
                    ));
                }
                Event::Request { .. } => {}
            }
        }
    }
}

/// `content-type: application/grpc` (`+proto` and the like too): a call's reply, its
/// messages timed as they arrive.
fn is_grpc(name: &[u8], value: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"content-type")
        && value
            .get(..16)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"application/grpc"))
}

fn is_event_stream(name: &[u8], value: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"content-type")
        && value
            .get(..17)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
}

/// RFC 9113 section 7.
const REFUSED_STREAM: u32 = 0x7;

/// The note for a stream that ended `end`; `over`: it was opened past the limit the server's
/// SETTINGS said after; `last`: the connection closes after it.
fn ended(mut s: Stream, end: StreamEnd, over: bool, last: bool) -> Note {
    let failed = |kind, message: String, unseen| {
        Note::Failed(Failed {
            ticket: s.ticket,
            failure: Failure::new(kind, message),
            received: s.resp.bytes_received,
            unseen,
            sent: Some(s.resp.bytes_sent),
        })
    };
    match end {
        StreamEnd::Complete => {
            // The loop lets a connection go once a response says the server closes it.
            s.resp.keep_alive = !last;
            Note::Response(s.ticket, s.resp)
        }
        // A stream opened past the limit the server had not said yet, and refused, is one it
        // never processed (RFC 9113 section 8.7): it goes again, counted once. Otherwise
        // REFUSED_STREAM is the server's word, counted as h2load does: a request it keeps
        // refusing would go round for ever.
        StreamEnd::Reset(REFUSED_STREAM) if over => failed(
            ErrorKind::H2RefusedStream,
            "the server's SETTINGS allowed fewer streams than were opened before they came".into(),
            true,
        ),
        StreamEnd::Reset(code) => failed(
            ErrorKind::from_h2_code(code),
            format!("the stream was reset with {}", code_name(code)),
            false,
        ),
        StreamEnd::BadLength { said, got } => failed(
            ErrorKind::H2Protocol,
            match said {
                u64::MAX => {
                    format!("the response's content-length is no number ({got} bytes came)")
                }
                _ => format!("the response said content-length {said} and carried {got} bytes"),
            },
            false,
        ),
        StreamEnd::Unprocessed => failed(
            ErrorKind::H2Goaway,
            "the server's GOAWAY left this stream unprocessed".into(),
            true,
        ),
    }
}

/// The exchange an event is about, if any.
fn about(event: &Event) -> Option<usize> {
    match event {
        Event::Status { exchange, .. }
        | Event::Header { exchange, .. }
        | Event::Data { exchange, .. }
        | Event::Closed { exchange, .. } => Some(*exchange),
        Event::GoAway { .. } | Event::Request { .. } => None,
    }
}
