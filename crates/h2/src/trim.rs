//! The client's header-block trimmer: between the server's bytes and nghttp2, it decodes
//! every header block itself (`decoder.rs`). The few fields herd reads of a response
//! (`:status`, `content-length`, an event stream's `content-type`) go straight to the
//! session's state (`Sink::header`), and nghttp2 gets the block's HEADERS frame empty: its
//! flags (END_STREAM) and nothing to inflate; its inflater's table stays empty. A stream
//! whose caller keeps its response (checks, extraction, cookies, gRPC's trailers) gets every
//! field through nghttp2, rewritten as one HEADERS frame (CONTINUATIONs only past a frame's
//! size) of literals without indexing or Huffman coding (`:status: 200` as its static index).
//! A server that sends the same head on every stream (nginx's static file within a second)
//! costs a comparison once its table is one that head leaves as it is (`Memo`).
//!
//! Every other frame (DATA, SETTINGS, ...) goes through as it came, in runs of the input as
//! read, unbuffered but for a frame header split across reads. The byte counts of the
//! connection are taken from the reads, before this, so they stay the wire's.

use crate::decoder::{Decoder, HpackError, DEFAULT_TABLE_SIZE};
use crate::H2Error;
use std::ops::Range;

use crate::frame::{
    headers_fragment, BadHeaders, CONTINUATION, END_HEADERS, END_STREAM, HEADERS, PUSH_PROMISE,
};
/// SETTINGS_MAX_FRAME_SIZE herd leaves at its default (RFC 9113 section 6.5.2).
const MAX_FRAME: usize = 16_384;
/// A header block larger than this (HEADERS and CONTINUATIONs) ends the connection: no
/// server's response head is near it, and a flood of CONTINUATIONs must not grow without end.
const MAX_BLOCK: usize = 1 << 20;
const PROTOCOL_ERROR: u32 = 0x1;
const FRAME_SIZE_ERROR: u32 = 0x6;
const COMPRESSION_ERROR: u32 = 0x9;

/// Where the trimmed bytes go: nghttp2's session, or a test's record.
pub(crate) trait Sink {
    /// Whether the stream keeps its response whole (every header field).
    fn keep(&self, stream_id: i32) -> bool;
    fn feed(&mut self, bytes: &[u8]) -> Result<(), H2Error>;
    /// A field herd reads of the response head of a stream that does not keep it, before
    /// the head's frame (emptied of its fields) is fed.
    fn header(&mut self, stream_id: i32, name: &[u8], value: &[u8]);
    /// Ends the connection with GOAWAY(code), as nghttp2 does on a connection error.
    fn terminate(&mut self, code: u32);
}

/// A header block being read: its stream, whether it ends the stream, its fragments so far.
#[derive(Debug, Clone, Copy)]
struct Open {
    stream_id: i32,
    end_stream: bool,
}

/// A frame header: payload length, type, flags, stream id.
#[derive(Debug, Clone, Copy, Default)]
struct Head {
    len: usize,
    kind: u8,
    flags: u8,
    stream_id: i32,
}

impl Head {
    fn parse(b: &[u8; 9]) -> Head {
        Head {
            len: usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream_id: i32::from_be_bytes([b[5] & 0x7f, b[6], b[7], b[8]]),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Trimmer {
    decoder: Decoder,
    /// The frame header being read, `have` bytes of it so far.
    head: [u8; 9],
    have: usize,
    /// Payload bytes of a frame passed through still to come.
    pass: usize,
    /// The header frame being collected: its header and payload bytes still to come.
    frame: Head,
    wanted: usize,
    payload: Vec<u8>,
    /// The header block being joined from HEADERS and CONTINUATIONs.
    open: Option<Open>,
    block: Vec<u8>,
    /// The rewritten frames handed to nghttp2.
    out: Vec<u8>,
    memo: Memo,
    /// A connection error ended the session: what comes after is dropped.
    broken: bool,
}

impl Default for Trimmer {
    fn default() -> Trimmer {
        Trimmer {
            decoder: Decoder::new(DEFAULT_TABLE_SIZE),
            head: [0; 9],
            have: 0,
            pass: 0,
            frame: Head::default(),
            wanted: 0,
            payload: Vec::with_capacity(1024),
            open: None,
            block: Vec::with_capacity(1024),
            out: Vec::with_capacity(1024),
            memo: Memo::default(),
            broken: false,
        }
    }
}

/// The last header block whose fields are known without decoding it again while the
/// decoder's table is as it was left (`Decoder::repeats`): a server that sends the same
/// response head on every stream (nginx's static file, within a second) costs a comparison.
#[derive(Debug, Default)]
struct Memo {
    block: Vec<u8>,
    /// The fields herd reads of it (for a stream that does not keep its response): their
    /// names' and values' bytes, and where each lies.
    fields: Vec<u8>,
    spans: Vec<(Range<usize>, Range<usize>)>,
    /// The decoder's table generation they hold for (generations only grow); `None`:
    /// nothing remembered.
    generation: Option<u64>,
    /// Blocks answered from the memo.
    #[cfg(test)]
    hits: usize,
}

/// A connection error the trimmer found: GOAWAY's code and what to tell the user.
struct Fault(u32, String);

impl From<HpackError> for Fault {
    fn from(e: HpackError) -> Fault {
        Fault(
            COMPRESSION_ERROR,
            format!("the server's header block is not valid HPACK (RFC 7541): {e}"),
        )
    }
}

impl Trimmer {
    /// Takes bytes read from the server, feeding `sink` what nghttp2 is to see of them.
    pub(crate) fn recv(&mut self, input: &[u8], sink: &mut impl Sink) -> Result<(), H2Error> {
        if self.broken {
            return Ok(());
        }
        match self.scan(input, sink) {
            Ok(()) => Ok(()),
            Err(Ok(Fault(code, message))) => {
                self.broken = true;
                sink.terminate(code);
                Err(H2Error::Broken { message })
            }
            Err(Err(e)) => Err(e),
        }
    }

    fn scan(&mut self, input: &[u8], sink: &mut impl Sink) -> Result<(), Result<Fault, H2Error>> {
        // Start of the input not yet fed that goes through as it is; `None` inside a header
        // frame's payload.
        let mut run = (self.wanted == 0).then_some(0);
        let mut i = 0;
        while i < input.len() {
            if self.pass > 0 {
                let n = self.pass.min(input.len() - i);
                self.pass -= n;
                i += n;
                continue;
            }
            if self.wanted > 0 {
                let n = self.wanted.min(input.len() - i);
                self.payload.extend_from_slice(&input[i..i + n]);
                self.wanted -= n;
                i += n;
                if self.wanted == 0 {
                    let payload = std::mem::take(&mut self.payload);
                    let read = self.frame_read(&payload, sink);
                    self.payload = payload;
                    read?;
                    run = Some(i);
                }
                continue;
            }
            let n = (9 - self.have).min(input.len() - i);
            self.head[self.have..self.have + n].copy_from_slice(&input[i..i + n]);
            let (start, held) = (i, self.have);
            self.have += n;
            i += n;
            if self.have < 9 {
                // A header split across reads: its bytes wait here for the rest.
                if let Some(r) = run.take() {
                    feed(sink, &input[r..start])?;
                }
                return Ok(());
            }
            self.have = 0;
            let head = Head::parse(&self.head);
            if !self.intercepts(&head)? {
                if held > 0 {
                    // The header's first bytes came with the last read (the run starts at 0).
                    feed(sink, &self.head[..held])?;
                }
                self.pass = head.len;
                continue;
            }
            if let Some(r) = run.take() {
                feed(sink, &input[r..start])?;
            }
            self.frame = head;
            if head.len <= input.len() - i {
                // The whole frame came in this read: read where it lies.
                self.frame_read(&input[i..i + head.len], sink)?;
                i += head.len;
                run = Some(i);
                continue;
            }
            self.payload.clear();
            self.wanted = head.len;
        }
        if let Some(r) = run {
            feed(sink, &input[r..])?;
        }
        Ok(())
    }

    /// Whether a frame is the trimmer's (a header block's), checking what nghttp2 would
    /// have checked of it.
    fn intercepts(&self, head: &Head) -> Result<bool, Result<Fault, H2Error>> {
        let fault = |code, message: &str| Err(Ok(Fault(code, message.to_string())));
        match (self.open, head.kind) {
            (Some(open), CONTINUATION) if open.stream_id == head.stream_id => {}
            (Some(_), _) => {
                return fault(
                    PROTOCOL_ERROR,
                    "a header block was cut by another frame (RFC 9113 section 6.10)",
                )
            }
            (None, CONTINUATION) => {
                return fault(
                    PROTOCOL_ERROR,
                    "CONTINUATION without a header block before it",
                )
            }
            (None, PUSH_PROMISE) => {
                return fault(
                    PROTOCOL_ERROR,
                    "the server sent PUSH_PROMISE though herd's SETTINGS disable push",
                )
            }
            (None, HEADERS) => {}
            (None, _) => return Ok(false),
        }
        if head.stream_id == 0 {
            return fault(PROTOCOL_ERROR, "a header block on stream 0");
        }
        if head.len > MAX_FRAME {
            return fault(
                FRAME_SIZE_ERROR,
                "a header frame larger than herd's SETTINGS allow",
            );
        }
        if self.block.len() + head.len > MAX_BLOCK {
            return fault(PROTOCOL_ERROR, "a header block larger than 1 MiB");
        }
        Ok(true)
    }

    /// A HEADERS or CONTINUATION frame is whole: its `payload`.
    fn frame_read(
        &mut self,
        payload: &[u8],
        sink: &mut impl Sink,
    ) -> Result<(), Result<Fault, H2Error>> {
        let head = self.frame;
        let mut fragment = payload;
        if head.kind == HEADERS {
            fragment = headers_fragment(head.flags, fragment).map_err(|bad| {
                Ok(match bad {
                    BadHeaders::NoPadLength => Fault(
                        FRAME_SIZE_ERROR,
                        "a padded HEADERS frame with no padding length".into(),
                    ),
                    BadHeaders::PaddingTooLong => Fault(
                        PROTOCOL_ERROR,
                        "HEADERS padding longer than its frame".into(),
                    ),
                    BadHeaders::ShortPriority => Fault(
                        FRAME_SIZE_ERROR,
                        "a HEADERS frame too short for its priority".into(),
                    ),
                })
            })?;
            self.block.clear();
            let open = Open {
                stream_id: head.stream_id,
                end_stream: head.flags & END_STREAM != 0,
            };
            if head.flags & END_HEADERS != 0 {
                // The whole block in one frame (as nearly every server sends it).
                self.rewrite(open, sink.keep(open.stream_id), fragment, sink)
                    .map_err(|e| Ok(e.into()))?;
                return feed(sink, &self.out);
            }
            self.open = Some(open);
        }
        self.block.extend_from_slice(fragment);
        if head.flags & END_HEADERS == 0 {
            return Ok(());
        }
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let block = std::mem::take(&mut self.block);
        let rewritten = self.rewrite(open, sink.keep(open.stream_id), &block, sink);
        self.block = block;
        rewritten.map_err(|e| Ok(e.into()))?;
        feed(sink, &self.out)
    }

    /// Decodes the whole block into `out` as frames holding only the fields herd reads: all
    /// of them for a kept stream; none for another, whose fields herd reads go straight to
    /// `sink.header` (nghttp2 then sees an empty block: its frame's flags, nothing to inflate).
    fn rewrite(
        &mut self,
        open: Open,
        keep: bool,
        block: &[u8],
        sink: &mut impl Sink,
    ) -> Result<(), HpackError> {
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(&[0; 9]);
        let id = open.stream_id;
        let memo = &mut self.memo;
        if keep {
            self.decoder
                .decode(block, |_| true, |name, value| encode(out, name, value))?;
        } else if memo.generation == Some(self.decoder.generation()) && memo.block == block {
            for (name, value) in &memo.spans {
                sink.header(id, &memo.fields[name.clone()], &memo.fields[value.clone()]);
            }
            #[cfg(test)]
            {
                memo.hits += 1;
            }
        } else {
            let want =
                |name: &[u8]| matches!(name, b":status" | b"content-length" | b"content-type");
            memo.generation = None;
            memo.fields.clear();
            memo.spans.clear();
            self.decoder.decode(block, want, |name, value| {
                // An ordinary content type matters only to a kept response; an event
                // stream's says its body is read as events (see `State::header`).
                if name == b"content-type" && !event_stream(value) {
                    return;
                }
                sink.header(id, name, value);
                let at = memo.fields.len();
                memo.fields.extend_from_slice(name);
                memo.fields.extend_from_slice(value);
                let (n, v) = (at + name.len(), memo.fields.len());
                memo.spans.push((at..n, n..v));
            })?;
            if self.decoder.repeats() {
                memo.block.clear();
                memo.block.extend_from_slice(block);
                memo.generation = Some(self.decoder.generation());
            }
        }
        // One HEADERS frame, and CONTINUATIONs if a kept block is larger than a frame.
        let total = out.len() - 9;
        let first = total.min(MAX_FRAME);
        let end = if open.end_stream { END_STREAM } else { 0 };
        let flags = end | if first == total { END_HEADERS } else { 0 };
        put_head(&mut out[..9], first, HEADERS, flags, open.stream_id);
        if first < total {
            let tail = out.split_off(9 + first);
            let mut chunks = tail.chunks(MAX_FRAME).peekable();
            while let Some(chunk) = chunks.next() {
                let flags = if chunks.peek().is_none() {
                    END_HEADERS
                } else {
                    0
                };
                let at = out.len();
                out.extend_from_slice(&[0; 9]);
                put_head(
                    &mut out[at..],
                    chunk.len(),
                    CONTINUATION,
                    flags,
                    open.stream_id,
                );
                out.extend_from_slice(chunk);
            }
        }
        Ok(())
    }
}

fn feed(sink: &mut impl Sink, bytes: &[u8]) -> Result<(), Result<Fault, H2Error>> {
    if bytes.is_empty() {
        return Ok(());
    }
    sink.feed(bytes).map_err(Err)
}

fn put_head(at: &mut [u8], len: usize, kind: u8, flags: u8, stream_id: i32) {
    at[..3].copy_from_slice(&(len as u32).to_be_bytes()[1..]);
    at[3] = kind;
    at[4] = flags;
    at[5..9].copy_from_slice(&stream_id.to_be_bytes());
}

/// One field of a kept stream's block as nghttp2 decodes it cheapest: the static table's
/// `:status: 200`, else a literal without indexing, its name by static index where herd's
/// names have one.
fn encode(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let index = match name {
        b":status" if value == b"200" => return out.push(0x88),
        b":status" => 8,
        b"content-length" => 28,
        b"content-type" => 31,
        _ => 0,
    };
    integer(out, 4, 0, index);
    if index == 0 {
        integer(out, 7, 0, name.len());
        out.extend_from_slice(name);
    }
    integer(out, 7, 0, value.len());
    out.extend_from_slice(value);
}

/// `text/event-stream`: a response read as events (see `State::header`).
fn event_stream(value: &[u8]) -> bool {
    value
        .get(..17)
        .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
}

/// An integer with an `n`-bit prefix after the bits `high` (RFC 7541 section 5.1).
pub(crate) fn integer(out: &mut Vec<u8>, n: u32, high: u8, value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(high | value as u8);
        return;
    }
    out.push(high | max as u8);
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{PADDED, PRIORITY};
    use crate::{ClientSession, Event, Inflater, Request, ServerSession, Settings};

    /// What nghttp2 would have been fed.
    #[derive(Default)]
    struct Record {
        fed: Vec<u8>,
        /// Fields handed over beside nghttp2: (stream id, "name: value").
        fields: Vec<(i32, String)>,
        keep: Vec<i32>,
        terminated: Option<u32>,
    }

    impl Sink for Record {
        fn header(&mut self, stream_id: i32, name: &[u8], value: &[u8]) {
            let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            self.fields
                .push((stream_id, format!("{}: {}", s(name), s(value))));
        }
        fn keep(&self, stream_id: i32) -> bool {
            self.keep.contains(&stream_id)
        }
        fn feed(&mut self, bytes: &[u8]) -> Result<(), H2Error> {
            self.fed.extend_from_slice(bytes);
            Ok(())
        }
        fn terminate(&mut self, code: u32) {
            self.terminated = Some(code);
        }
    }

    fn frame(kind: u8, flags: u8, stream_id: i32, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0; 9];
        put_head(&mut out, payload.len(), kind, flags, stream_id);
        out.extend_from_slice(payload);
        out
    }

    /// Frames as (type, flags, stream id, payload).
    fn frames(mut wire: &[u8]) -> Vec<(u8, u8, i32, Vec<u8>)> {
        let mut out = Vec::new();
        while wire.len() >= 9 {
            let head = Head::parse(wire[..9].try_into().unwrap());
            out.push((
                head.kind,
                head.flags,
                head.stream_id,
                wire[9..9 + head.len].to_vec(),
            ));
            wire = &wire[9 + head.len..];
        }
        assert!(wire.is_empty());
        out
    }

    /// A server's answer to three requests, as nghttp2 writes it (Huffman-coded literals
    /// indexed in its table, the second and third naming the first's entries), then a
    /// header block cut in a padded, prioritised HEADERS and a CONTINUATION, then DATA.
    fn server_wire() -> Vec<u8> {
        let mut client = ClientSession::new(&Settings::default()).unwrap();
        let mut server = ServerSession::new(&Settings::default()).unwrap();
        let request = Request {
            authority: b"example.test",
            ..Request::default()
        };
        for i in 0..3 {
            client.submit(&request, i, false).unwrap();
        }
        let mut to_server = Vec::new();
        client.send(&mut to_server).unwrap();
        server.recv(&to_server).unwrap();
        let ids: Vec<i32> = server
            .events()
            .events
            .filter_map(|e| match e {
                Event::Request { stream_id, .. } => Some(stream_id),
                _ => None,
            })
            .collect();
        let headers: [(&[u8], &[u8]); 4] = [
            (b"date", b"Sun, 29 Nov 2026 07:50:00 GMT"),
            (b"etag", b"\"6560a1b2-267\""),
            (b"content-type", b"text/html"),
            (b"server", b"nginx/1.24.0"),
        ];
        for id in ids {
            server.respond(id, 200, &headers, b"hello").unwrap();
        }
        let mut wire = Vec::new();
        server.send(&mut wire).unwrap();
        // Stream 7: ":status: 404", "content-length: 3", "x-a: b", "content-type:
        // text/event-stream" plainly, then the body.
        let block = b"\x8d\x0f\x0d\x013\x00\x03x-a\x01b\x0f\x10\x11text/event-stream";
        let mut first = vec![2u8]; // padding length
        first.extend_from_slice(&[0x80, 0, 0, 1, 16]); // priority
        first.extend_from_slice(&block[..4]);
        first.extend_from_slice(&[0, 0]);
        wire.extend(frame(HEADERS, PADDED | PRIORITY, 7, &first));
        wire.extend(frame(CONTINUATION, END_HEADERS, 7, &block[4..]));
        wire.extend(frame(0x0, END_STREAM, 7, b"abc"));
        wire
    }

    /// The fields of every header block: those handed over beside nghttp2 (each stream's in
    /// order, one head a stream), then those of its rewritten block, by nghttp2's own
    /// inflater.
    fn blocks(sink: &Record) -> Vec<(i32, Vec<String>)> {
        let mut inflater = Inflater::new().unwrap();
        frames(&sink.fed)
            .into_iter()
            .filter(|f| f.0 == HEADERS)
            .map(|(_, flags, id, payload)| {
                assert_ne!(flags & END_HEADERS, 0);
                let mut fields: Vec<String> = sink
                    .fields
                    .iter()
                    .filter(|f| f.0 == id)
                    .map(|f| f.1.clone())
                    .collect();
                if !fields.is_empty() {
                    // Handed over beside: nghttp2 sees an empty block.
                    assert!(payload.is_empty(), "stream {id}");
                }
                inflater
                    .inflate(&payload, |n, v| {
                        fields.push(format!(
                            "{}: {}",
                            String::from_utf8_lossy(n),
                            String::from_utf8_lossy(v)
                        ))
                    })
                    .unwrap();
                (id, fields)
            })
            .collect()
    }

    #[test]
    fn header_blocks_reach_nghttp2_cut_to_the_fields_herd_reads_unless_kept() {
        let wire = server_wire();
        let mut trim = Trimmer::default();
        let mut sink = Record {
            keep: vec![3],
            ..Record::default()
        };
        trim.recv(&wire, &mut sink).unwrap();
        let kept = [
            ":status: 200",
            "content-length: 5",
            "date: Sun, 29 Nov 2026 07:50:00 GMT",
            "etag: \"6560a1b2-267\"",
            "content-type: text/html",
            "server: nginx/1.24.0",
        ];
        let got = blocks(&sink);
        assert_eq!(got.len(), 4);
        for (id, fields) in &got[..3] {
            if *id == 3 {
                assert_eq!(fields, &kept);
            } else {
                assert_eq!(
                    fields,
                    &[":status: 200", "content-length: 5"],
                    "stream {id}"
                );
            }
        }
        // An event stream's content type goes through: its body is read as events.
        let stream_7 = [
            ":status: 404",
            "content-length: 3",
            "content-type: text/event-stream",
        ];
        assert_eq!(got[3], (7, stream_7.map(String::from).to_vec()));
        // Every other frame passes as it came, in order.
        let kinds = |w: &[u8]| -> Vec<(u8, i32)> { frames(w).iter().map(|f| (f.0, f.2)).collect() };
        let mut want = kinds(&wire);
        want.retain(|k| k.0 != CONTINUATION);
        assert_eq!(kinds(&sink.fed), want);
        let data = |w: &[u8]| -> Vec<Vec<u8>> {
            frames(w)
                .into_iter()
                .filter(|f| f.0 == 0)
                .map(|f| f.3)
                .collect()
        };
        assert_eq!(data(&sink.fed), data(&wire));
        assert_eq!(sink.terminated, None);
    }

    /// nginx's static file, stream after stream: once its head is known to repeat, it is
    /// not decoded again, and every stream still gets what decoding would give, kept
    /// streams every field, through a change of its date and a kept stream in between.
    #[test]
    fn a_repeated_head_is_remembered_and_reaches_nghttp2_as_decoded() {
        let nginx = crate::decoder::tests::hex(crate::decoder::tests::NGINX);
        let date = b"Sun, 29 Nov 2026 10:50:01 GMT";
        let later = [
            &nginx[..12],
            &[0x61, 0x80 | 0x16][..],
            &crate::huffman::encode(date),
            &nginx[36..],
        ]
        .concat();
        assert_eq!(later.len(), nginx.len());
        let mut wire = Vec::new();
        let mut heads = Vec::new();
        let mut reference = Decoder::new(DEFAULT_TABLE_SIZE);
        let mut want = Vec::new();
        let keep = vec![41, 101, 203];
        for k in 0..150 {
            let id = 1 + 2 * k;
            let block = if k < 60 { &nginx } else { &later };
            wire.extend(frame(HEADERS, END_HEADERS, id, block));
            wire.extend(frame(0x0, END_STREAM, id, &[b'x'; 615]));
            heads.push(block.clone());
            let mut fields = Vec::new();
            reference
                .decode(
                    block,
                    |_| true,
                    |n, v| {
                        let name = String::from_utf8_lossy(n);
                        if keep.contains(&id) || matches!(&*name, ":status" | "content-length") {
                            fields.push(format!("{name}: {}", String::from_utf8_lossy(v)));
                        }
                    },
                )
                .unwrap();
            want.push((id, fields));
        }
        let mut trim = Trimmer::default();
        let mut sink = Record {
            keep: keep.clone(),
            ..Record::default()
        };
        for piece in wire.chunks(1000) {
            trim.recv(piece, &mut sink).unwrap();
        }
        assert_eq!(blocks(&sink), want);
        assert_eq!(blocks(&sink)[0].1, [":status: 200", "content-length: 615"]);
        assert_eq!(blocks(&sink)[20].1.len(), 8);
        // The table is the one decoding every block leaves, and the memo was used.
        assert_eq!(trim.decoder.entries(), reference.entries());
        // Each date fills the table (14 heads of 291 bytes, and one more) before its head
        // is known to repeat; a kept stream decodes, and changes the table for the next.
        assert!(trim.memo.hits >= 150 - 2 * 15 - 2 * 3, "{}", trim.memo.hits);
    }

    #[test]
    fn the_same_bytes_split_anywhere_reach_nghttp2_the_same() {
        let wire = server_wire();
        let whole = {
            let mut sink = Record::default();
            Trimmer::default().recv(&wire, &mut sink).unwrap();
            (sink.fed, sink.fields)
        };
        for cut in 0..=wire.len() {
            for second in [cut, (cut + 1).min(wire.len()), (cut + 10).min(wire.len())] {
                let mut trim = Trimmer::default();
                let mut sink = Record::default();
                for piece in [&wire[..cut], &wire[cut..second], &wire[second..]] {
                    trim.recv(piece, &mut sink).unwrap();
                }
                assert_eq!((sink.fed, sink.fields), whole, "cut at {cut} and {second}");
            }
        }
        // Byte by byte.
        let mut trim = Trimmer::default();
        let mut sink = Record::default();
        for b in &wire {
            trim.recv(std::slice::from_ref(b), &mut sink).unwrap();
        }
        assert_eq!((sink.fed, sink.fields), whole);
    }

    #[test]
    fn broken_header_blocks_end_the_connection_with_the_right_code() {
        let cases: [(Vec<u8>, u32); 6] = [
            // Index 70 of an empty dynamic table.
            (frame(HEADERS, END_HEADERS, 1, &[0xc6]), COMPRESSION_ERROR),
            (frame(HEADERS, END_HEADERS, 0, &[0x88]), PROTOCOL_ERROR),
            (frame(CONTINUATION, END_HEADERS, 1, &[0x88]), PROTOCOL_ERROR),
            (
                frame(PUSH_PROMISE, END_HEADERS, 1, &[0, 0, 0, 2, 0x88]),
                PROTOCOL_ERROR,
            ),
            (
                [frame(HEADERS, 0, 1, &[0x88]), frame(0x0, 0, 1, b"x")].concat(),
                PROTOCOL_ERROR,
            ),
            (
                frame(HEADERS, PADDED | END_HEADERS, 1, &[5, 0x88]),
                PROTOCOL_ERROR,
            ),
        ];
        for (wire, code) in cases {
            let mut trim = Trimmer::default();
            let mut sink = Record::default();
            let e = trim.recv(&wire, &mut sink).unwrap_err();
            assert!(matches!(e, H2Error::Broken { .. }), "{e}");
            assert_eq!(sink.terminated, Some(code), "{e}");
            // What follows is dropped: the session is over.
            let before = sink.fed.len();
            trim.recv(&frame(0x0, 0, 1, b"x"), &mut sink).unwrap();
            assert_eq!(sink.fed.len(), before);
        }
    }

    #[test]
    fn random_header_frames_are_an_error_or_fields_never_a_panic() {
        let mut rng = crate::decoder::tests::Rng(0x1234_5678_9abc_def1);
        let mut errors = 0;
        for _ in 0..5_000 {
            let mut wire = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let kind = [HEADERS, CONTINUATION, 0x0, HEADERS][rng.below(4) as usize];
                let flags = rng.next() as u8;
                let payload: Vec<u8> = (0..rng.below(40)).map(|_| rng.next() as u8).collect();
                wire.extend(frame(kind, flags, 1 + 2 * rng.below(3) as i32, &payload));
            }
            let mut trim = Trimmer::default();
            let mut sink = Record::default();
            let cut = rng.below(wire.len() as u64 + 1) as usize;
            let broke = trim.recv(&wire[..cut], &mut sink).is_err()
                || trim.recv(&wire[cut..], &mut sink).is_err();
            errors += usize::from(broke);
        }
        assert!(errors > 2_500, "{errors}");
    }

    #[test]
    fn a_client_session_reports_a_malformed_block_as_a_connection_error_and_ends() {
        let mut client = ClientSession::new(&Settings::default()).unwrap();
        client.submit(&Request::default(), 0, false).unwrap();
        client.send(&mut Vec::new()).unwrap();
        let mut wire = frame(0x4, 0, 0, &[]); // the server's SETTINGS
        wire.extend(frame(
            HEADERS,
            END_HEADERS,
            1,
            &[0xff, 0xff, 0xff, 0xff, 0x7f],
        ));
        let e = client.recv(&wire).unwrap_err();
        assert!(e.to_string().contains("not valid HPACK"), "{e}");
        let mut out = Vec::new();
        client.send(&mut out).unwrap();
        let goaway = frames(&out)
            .into_iter()
            .find(|f| f.0 == 0x7)
            .expect("GOAWAY");
        assert_eq!(goaway.3[4..8], COMPRESSION_ERROR.to_be_bytes());
        assert!(!client.alive());
    }
}
