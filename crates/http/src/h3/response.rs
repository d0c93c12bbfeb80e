//! Reads one response from its request stream's bytes, sans-IO: HEADERS (1xx ones skipped),
//! DATA counted (kept only when asked), trailers and unknown frames skipped. The response ends
//! with the stream (FIN); the DATA payloads are never buffered, only counted as they pass (and
//! read as Server-Sent Events when the head says `text/event-stream`).

use super::frame::{get_frame_header, DATA, HEADERS};
use super::qpack;
use herd_engine::{EventStream, Failure, Response};
use herd_metrics::ErrorKind;
use std::time::Instant;

/// A header block larger than this is refused: herd keeps a partial one in memory.
const MAX_HEADER_BLOCK: u64 = 64 * 1024;

#[derive(Debug, Default)]
pub(crate) struct ResponseReader {
    /// Bytes of a frame header or of a HEADERS payload not yet complete.
    partial: Vec<u8>,
    /// Payload bytes of the current DATA (or skipped) frame still to come.
    skip: u64,
    /// Whether the bytes being skipped are body bytes.
    in_data: bool,
    /// The final (non-1xx) HEADERS has been read.
    headed: bool,
    keep: bool,
    /// An event-stream body is read as an LLM's tokens (`--sse llm`).
    llm: bool,
    scratch: Vec<u8>,
}

impl ResponseReader {
    pub fn start(&mut self, keep: bool, llm: bool) {
        self.partial.clear();
        self.skip = 0;
        self.in_data = false;
        self.headed = false;
        self.keep = keep;
        self.llm = llm;
    }

    pub fn keep(&mut self, keep: bool) {
        self.keep = keep;
    }

    /// Takes the next bytes of the stream, read at `now`, filling `resp` (`bytes_received`
    /// included).
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        now: Instant,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        resp.bytes_received += bytes.len() as u64;
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = (self.skip.min(bytes.len() as u64)) as usize;
                if self.in_data {
                    resp.body_len += n as u64;
                    if self.keep {
                        resp.body.extend_from_slice(&bytes[..n]);
                    }
                    if let Some(ev) = &mut resp.events {
                        crate::sse::scan(ev, &bytes[..n], now);
                    }
                }
                self.skip -= n as u64;
                bytes = &bytes[n..];
                continue;
            }
            // A frame header, then for HEADERS its whole payload, gathered in `partial`.
            let have = self.partial.len();
            self.partial.extend_from_slice(bytes);
            let Some(header) = get_frame_header(&self.partial) else {
                bytes = &[];
                continue;
            };
            if header.kind != HEADERS {
                let used = header.header_len - have;
                bytes = &bytes[used..];
                self.partial.clear();
                self.skip = header.len;
                self.in_data = header.kind == DATA;
                if self.in_data && !self.headed {
                    return Err(protocol("a DATA frame before the response's HEADERS"));
                }
                continue;
            }
            if header.len > MAX_HEADER_BLOCK {
                return Err(protocol("a header block over 64 KiB"));
            }
            let end = header.header_len + header.len as usize;
            if self.partial.len() < end {
                bytes = &[];
                continue;
            }
            bytes = &bytes[end - have..];
            let block = std::mem::take(&mut self.partial);
            self.headers(&block[header.header_len..end], resp)?;
            self.partial = block;
            self.partial.clear();
        }
        Ok(())
    }

    fn headers(&mut self, block: &[u8], resp: &mut Response) -> Result<(), Failure> {
        if self.headed {
            return Ok(()); // trailers: nothing herd reports
        }
        let keep = self.keep;
        let mut status = None;
        let mut headers = Vec::new();
        let mut event_stream = false;
        let want = |name: &[u8]| keep || name == b":status" || name == b"content-type";
        qpack::decode(block, want, &mut self.scratch, |name, value| {
            if name == b"content-type" {
                event_stream = crate::head::is_event_stream_type(value);
            }
            if name == b":status" {
                status = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u16>().ok());
            } else if keep && !name.starts_with(b":") {
                headers.push((
                    String::from_utf8_lossy(name).into_owned(),
                    String::from_utf8_lossy(value).into_owned(),
                ));
            }
        })
        .map_err(|e| Failure::new(ErrorKind::H3Protocol, e.to_string()))?;
        let status = status
            .filter(|s| (100..600).contains(s))
            .ok_or_else(|| protocol("a response without a valid :status"))?;
        if status >= 200 {
            self.headed = true;
            resp.status = status;
            resp.headers = headers.into();
            if event_stream {
                resp.events = Some(Box::new(EventStream::new(self.llm)));
            }
        }
        Ok(())
    }

    /// The stream ended (FIN): the response is complete if its head arrived and no frame was
    /// cut short.
    pub fn finish(&self) -> Result<(), Failure> {
        if !self.headed {
            return Err(Failure::new(
                ErrorKind::Eof,
                "the request stream ended before a response's HEADERS",
            ));
        }
        if self.skip > 0 || !self.partial.is_empty() {
            return Err(Failure::new(
                ErrorKind::Eof,
                "the request stream ended inside a frame",
            ));
        }
        Ok(())
    }
}

fn protocol(what: &str) -> Failure {
    Failure::new(ErrorKind::H3Protocol, format!("the server sent {what}"))
}

#[cfg(test)]
mod tests {
    use super::super::frame::put_frame_header;
    use super::*;

    /// A response stream: HEADERS of `block`, then DATA frames of `bodies`.
    fn stream(block: &[u8], bodies: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        put_frame_header(&mut out, HEADERS, block.len());
        out.extend_from_slice(block);
        for b in bodies {
            put_frame_header(&mut out, DATA, b.len());
            out.extend_from_slice(b);
        }
        out
    }

    fn read(bytes: &[u8], step: usize, keep: bool) -> Result<Response, Failure> {
        let (mut reader, mut resp) = (ResponseReader::default(), Response::default());
        reader.start(keep, false);
        for chunk in bytes.chunks(step) {
            reader.feed(chunk, Instant::now(), &mut resp)?;
        }
        reader.finish()?;
        Ok(resp)
    }

    #[test]
    fn status_and_body_length_in_any_split() {
        // :status 200, then "hello" in two DATA frames, then an unknown frame (type 0x21).
        let mut bytes = stream(&[0, 0, 0xc0 | 25], &[b"hel", b"lo"]);
        bytes.extend_from_slice(&[0x21, 0x02, 0xaa, 0xbb]);
        for step in [1, 2, 3, 7, bytes.len()] {
            let resp = read(&bytes, step, false).unwrap();
            assert_eq!(
                (resp.status, resp.body_len, resp.bytes_received),
                (200, 5, bytes.len() as u64),
                "step {step}"
            );
            assert!(resp.body.is_empty() && resp.headers.is_empty());
        }
    }

    #[test]
    fn kept_responses_hold_headers_and_body() {
        // :status 404, content-type text/plain (53).
        let bytes = stream(&[0, 0, 0xc0 | 27, 0xc0 | 53], &[b"nope"]);
        let resp = read(&bytes, 2, true).unwrap();
        assert_eq!(resp.status, 404);
        assert_eq!(resp.body, b"nope");
        assert_eq!(
            resp.headers,
            [("content-type".to_owned(), "text/plain".to_owned())]
        );
    }

    #[test]
    fn informational_heads_and_trailers_are_skipped() {
        // Indexes from 63 on take a continuation byte: 100 Continue is 63, 204 is 64.
        let mut bytes = stream(&[0, 0, 0xff, 0], &[]);
        bytes.extend(stream(&[0, 0, 0xff, 1], &[]));
        bytes.extend(stream(&[0, 0, 0xc0 | 6], &[])); // trailers
        assert_eq!(read(&bytes, 1, false).unwrap().status, 204);
    }

    #[test]
    fn broken_streams_fail_in_their_class() {
        let body_first = stream(&[], &[]);
        let mut data_first = Vec::new();
        put_frame_header(&mut data_first, DATA, 1);
        data_first.push(b'x');
        let cut = &stream(&[0, 0, 0xc0 | 25], &[b"hello"])[..6];
        let dynamic = stream(&[1, 0], &[]);
        let table: [(&[u8], ErrorKind); 5] = [
            (&[], ErrorKind::Eof),
            (&data_first, ErrorKind::H3Protocol),
            (cut, ErrorKind::Eof),
            (&dynamic, ErrorKind::H3Protocol),
            (&body_first, ErrorKind::H3Protocol),
        ];
        for (bytes, kind) in table {
            let got = read(bytes, 1, false).unwrap_err();
            assert_eq!(got.kind, kind, "{bytes:x?}: {}", got.message);
        }
    }

    #[test]
    fn an_event_stream_is_read_as_its_events_arrive() {
        // :status 200, content-type (static name 44) with the literal text/event-stream.
        let mut block = vec![0, 0, 0xc0 | 25, 0x5f, 44 - 15, 17];
        block.extend_from_slice(b"text/event-stream");
        let bytes = stream(&block, &[b"data: a\n\nda", b"ta: b\n\n"]);
        let t0 = Instant::now();
        let (mut reader, mut resp) = (ResponseReader::default(), Response::default());
        reader.start(false, false);
        // The second DATA frame (a 2-byte header and 7 bytes) 20 ms later.
        let split = bytes.len() - 9;
        reader.feed(&bytes[..split], t0, &mut resp).unwrap();
        let later = t0 + std::time::Duration::from_millis(20);
        reader.feed(&bytes[split..], later, &mut resp).unwrap();
        reader.finish().unwrap();
        let ev = resp.events.expect("read as events");
        assert_eq!((ev.events, ev.first), (2, Some(t0)));
        assert_eq!(ev.gaps, [20_000]);
        // Another type is a body, not events.
        let plain = stream(&[0, 0, 0xc0 | 25, 0xc0 | 53], &[b"data: a\n\n"]);
        assert!(read(&plain, 3, false).unwrap().events.is_none());
    }
}
