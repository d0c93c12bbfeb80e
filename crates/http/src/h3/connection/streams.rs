//! What arrives on a connection's streams: a response on each request stream, read into its
//! exchange as it comes, and the server's control stream, whose GOAWAY fails at once the
//! requests the server says it will never process.

use super::{H3Connection, H3Event, H3_REQUEST_CANCELLED};
use crate::h3::frame::{get_frame_header, get_varint, CONTROL_STREAM, GOAWAY};
use crate::h3::loss;
use quinn_proto::{ReadError, StreamId, VarInt};
use std::time::Instant;

impl H3Connection {
    pub(super) fn read(&mut self, id: StreamId, now: Instant) {
        if let Some(i) = self.exchanges.iter().position(|e| e.stream == id) {
            self.read_response(i, now);
        } else if let Some(i) = self.peer.iter().position(|p| p.id == id) {
            self.read_peer(i);
        }
    }

    fn read_response(&mut self, i: usize, now: Instant) {
        let ex = &mut self.exchanges[i];
        let mut recv = self.conn.recv_stream(ex.stream);
        let Ok(mut chunks) = recv.read(true) else {
            return;
        };
        let outcome = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    ex.response.first_byte.get_or_insert(now);
                    let before = ex.response.events.as_deref().map(|ev| ev.events);
                    if let Err(f) = ex.reader.feed(&chunk.bytes, now, &mut ex.response) {
                        break Some(Err(f));
                    }
                    // The head said it is a stream, or events counted: the loop's wait for
                    // the next one starts over (`--event-timeout`).
                    if let Some(ev) = ex.response.events.as_deref() {
                        if before.is_none_or(|n| n < ev.events) {
                            let (token, last) = (ex.token, ev.last);
                            self.events.push_back(H3Event::Stream { token, last });
                        }
                    }
                }
                Ok(None) => break Some(ex.reader.finish()),
                Err(ReadError::Blocked) => break None,
                Err(ReadError::Reset(code)) => break Some(Err(loss::stream_reset(code.into()))),
            }
        };
        let _ = chunks.finalize();
        let Some(outcome) = outcome else { return };
        let ex = self.exchanges.swap_remove(i);
        match outcome {
            Ok(()) => self.events.push_back(H3Event::Done {
                token: ex.token,
                response: ex.response,
            }),
            Err(failure) => {
                // The rest of a broken response is of no use: tell the server to stop.
                let _ = self
                    .conn
                    .recv_stream(ex.stream)
                    .stop(VarInt::from_u32(H3_REQUEST_CANCELLED));
                self.events.push_back(H3Event::Failed {
                    token: ex.token,
                    failure,
                    received: ex.response.bytes_received,
                    unseen: false,
                });
            }
        }
    }

    /// Reads a server-opened stream: the control stream's frames (GOAWAY matters; SETTINGS
    /// ask nothing of a client that sends no dynamic-table updates), the rest discarded.
    fn read_peer(&mut self, i: usize) {
        let p = &mut self.peer[i];
        let mut recv = self.conn.recv_stream(p.id);
        let Ok(mut chunks) = recv.read(true) else {
            return;
        };
        while let Ok(Some(chunk)) = chunks.next(usize::MAX) {
            if p.kind != Some(CONTROL_STREAM) && p.kind.is_some() {
                continue;
            }
            p.buf.extend_from_slice(&chunk.bytes);
            if p.kind.is_none() {
                if let Some((kind, n)) = get_varint(&p.buf) {
                    p.kind = Some(kind);
                    p.buf.drain(..n);
                }
            }
        }
        let _ = chunks.finalize();
        if p.kind != Some(CONTROL_STREAM) {
            p.buf.clear();
            return;
        }
        let mut at = 0;
        let mut goaway = None;
        while let Some(h) = get_frame_header(&p.buf[at..]) {
            let end = at + h.header_len + h.len as usize;
            if p.buf.len() < end {
                break;
            }
            if h.kind == GOAWAY {
                goaway = get_varint(&p.buf[at + h.header_len..end]).map(|(id, _)| id);
            }
            at = end;
        }
        p.buf.drain(..at);
        if let Some(id) = goaway {
            self.goaway = Some(id);
            // Requests on streams from `id` on will never be processed (RFC 9114 §5.2).
            let mut k = 0;
            while k < self.exchanges.len() {
                if self.exchanges[k].stream.index() * 4 >= id {
                    let ex = self.exchanges.swap_remove(k);
                    self.events.push_back(H3Event::Failed {
                        token: ex.token,
                        failure: loss::refused_by_goaway(),
                        received: ex.response.bytes_received,
                        unseen: true,
                    });
                } else {
                    k += 1;
                }
            }
        }
    }
}
