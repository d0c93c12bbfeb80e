//! Following an h2c connection (HTTP/2 with prior knowledge) through the proxy, for the
//! `http2` toxic: the client's frames are walked and its header blocks decoded in order
//! (nghttp2's HPACK inflater through herd-h2: the dynamic table is the connection's, so a
//! connection is followed from its preface, whether or not a toxic is in force yet, and a
//! toxic added later reaches it); the server's frames are walked for where they end and which
//! streams they end.
//!
//! Nothing is rewritten but one flag: frames are passed whole, held (a header block until its
//! last CONTINUATION, so the GOAWAY fault can keep it from the server), dropped (streams after
//! a GOAWAY), or new ones put between two frames (RST_STREAM, GOAWAY); a response to reset
//! loses END_STREAM from its last frame, and the reset follows it (a frame of the stream after
//! the reset would be a connection error to the client). Header blocks are never dropped on
//! their way to a peer that goes on decoding, so neither HPACK table loses step. With no
//! `http2` toxic in force, the bytes go on as they came and are only followed (no copy).

use herd_h2::Inflater;

use crate::h2_fault::{H2Action, H2Hit};
use crate::request::Req;

/// What an h2c client sends first.
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A header block larger than this is not followed (the connection passes untouched).
const BLOCK_MAX: usize = 1 << 20;

use herd_h2::frame::{
    headers_fragment, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, RST_STREAM,
};

/// A frame's 9-byte head.
#[derive(Clone, Copy, Debug, Default)]
struct Head {
    len: usize,
    kind: u8,
    flags: u8,
    stream: u32,
}

impl Head {
    fn parse(b: &[u8; 9]) -> Head {
        Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize,
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Where one direction's byte stream is: in a frame's head, or in its payload.
#[derive(Default)]
struct Framer {
    head: [u8; 9],
    got: usize,
    frame: Head,
    left: usize,
    /// In a header block (HEADERS without END_HEADERS, then CONTINUATIONs): nothing may be put
    /// between its frames.
    in_block: bool,
    /// A whole frame went by: on the server's side, its SETTINGS, which must come before
    /// anything the proxy puts in.
    started: bool,
    /// Bytes of the head in hand that went on as they came (read while nothing could change):
    /// the rest of the head is all that may still be passed.
    passed: usize,
}

impl Framer {
    /// Between two frames, after the first, and not inside a header block.
    fn at_boundary(&self) -> bool {
        self.started && self.got == 0 && !self.in_block
    }

    /// Takes head bytes from `bytes`; `Some` once the head is whole (its bytes in `self.head`).
    fn head_from(&mut self, bytes: &mut &[u8]) -> Option<Head> {
        let n = (9 - self.got).min(bytes.len());
        self.head[self.got..self.got + n].copy_from_slice(&bytes[..n]);
        self.got += n;
        *bytes = &bytes[n..];
        (self.got == 9).then(|| {
            self.frame = Head::parse(&self.head);
            self.left = self.frame.len;
            if self.frame.kind == HEADERS || self.frame.kind == CONTINUATION {
                self.in_block = self.frame.flags & END_HEADERS == 0;
            }
            self.frame
        })
    }

    /// Takes payload bytes from `bytes`; the slice taken and whether the frame ended.
    fn payload_from<'a>(&mut self, bytes: &mut &'a [u8]) -> (&'a [u8], bool) {
        let n = self.left.min(bytes.len());
        let (taken, rest) = bytes.split_at(n);
        *bytes = rest;
        self.left -= n;
        let ended = self.left == 0;
        if ended {
            self.got = 0;
            self.started = true;
        }
        (taken, ended)
    }
}

/// What a client frame's bytes do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Pass,
    /// A header block kept back until it is whole, its stream's fate decided.
    Hold,
    /// A header block passed as it comes, and copied to be decoded once whole.
    Copy,
    Drop,
}

/// Where bytes for the other side go: `None` when the caller passes what it read as it was
/// (nothing to hold, drop or put in), so following costs no copy.
type Sink<'a> = Option<&'a mut Vec<u8>>;

fn emit(out: &mut Sink, bytes: &[u8]) {
    if let Some(o) = out.as_deref_mut() {
        o.extend_from_slice(bytes);
    }
}

/// What following some bytes found, for the proxy's counters and its connection.
#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub resets: u64,
    pub goaways: u64,
}

/// One h2c connection as the proxy follows it.
pub(crate) struct H2Conn {
    preface_left: usize,
    up: Framer,
    route: Route,
    down: Framer,
    /// `None` once a block failed to decode or grew too large: the connection is no longer
    /// followed, everything passes.
    hpack: Option<Inflater>,
    /// The client's frames of the header block in hand (held or copied), and its fragments
    /// joined.
    block: Vec<u8>,
    fragment: Vec<u8>,
    block_head: Head,
    /// The block in hand is held (its stream's fate is decided), not only copied.
    block_held: bool,
    /// Streams to reset for the client at the end of their response, and the code.
    resetting: Vec<(u32, u32)>,
    /// The server's frame in hand ends such a stream: the reset follows it.
    reset_at_end: Option<(u32, u32)>,
    /// Streams the server got and has not ended.
    open: Vec<u32>,
    highest: u32,
    /// The last stream the server got: a GOAWAY's last-stream-id.
    forwarded: u32,
    going_away: bool,
    /// Frames for the client, put in at its stream's next boundary.
    pending: Vec<u8>,
    /// The connection closes once `pending` is out.
    close_pending: bool,
    closed: bool,
    /// Reused for what goes on.
    pub(crate) out: Vec<u8>,
}

impl H2Conn {
    /// A connection whose first `seen` bytes of the preface already went on.
    pub fn new(seen: usize) -> H2Conn {
        H2Conn {
            preface_left: PREFACE.len().saturating_sub(seen),
            up: Framer::default(),
            route: Route::Pass,
            down: Framer::default(),
            hpack: Inflater::new().ok(),
            block: Vec::new(),
            fragment: Vec::new(),
            block_head: Head::default(),
            block_held: false,
            resetting: Vec::new(),
            reset_at_end: None,
            open: Vec::new(),
            highest: 0,
            forwarded: 0,
            going_away: false,
            pending: Vec::new(),
            close_pending: false,
            closed: false,
            out: Vec::new(),
        }
    }

    /// Whether the client's bytes may pass as they are, only followed: no toxic to decide a
    /// stream's fate (`faulty` false) and no GOAWAY sent.
    pub fn up_quiet(&self, faulty: bool) -> bool {
        !faulty && !self.going_away && !self.block_held && self.up.got == self.up.passed
    }

    /// Whether the server's bytes may pass as they are: nothing waits to be put in for the
    /// client, no response to end with a reset, and no GOAWAY sent.
    pub fn down_quiet(&self) -> bool {
        self.pending.is_empty()
            && self.resetting.is_empty()
            && !self.going_away
            && self.down.got == self.down.passed
    }

    /// The client's bytes: what goes to the server is appended to `out` (`None`: they all go
    /// as they are); a stream's fate is asked of `choose` (the connection's `http2` toxics)
    /// once its request head is whole.
    pub fn up(
        &mut self,
        mut bytes: &[u8],
        choose: &mut dyn FnMut(&Req) -> Option<H2Hit>,
        mut out: Sink,
        found: &mut Found,
    ) {
        let n = self.preface_left.min(bytes.len());
        emit(&mut out, &bytes[..n]);
        self.preface_left -= n;
        bytes = &bytes[n..];
        while !bytes.is_empty() {
            if self.hpack.is_none() {
                self.give_up(&mut out);
                emit(&mut out, bytes);
                return;
            }
            if self.up.got < 9 {
                let head = self.up.head_from(&mut bytes);
                if out.is_none() {
                    self.up.passed = self.up.got;
                }
                let Some(head) = head else {
                    return;
                };
                // A block whose head partly went on already cannot be held.
                let deciding = out.is_some() && self.up.passed == 0;
                self.route = self.route_of(head, deciding);
                let head_bytes = self.up.head;
                let passed = std::mem::take(&mut self.up.passed).min(9);
                self.put(&head_bytes[passed..], &mut out);
                if head.len > 0 {
                    continue;
                }
                self.up.got = 0;
            } else {
                let (taken, ended) = self.up.payload_from(&mut bytes);
                self.put(taken, &mut out);
                if !ended {
                    continue;
                }
            }
            self.client_frame_ended(choose, &mut out, found);
        }
        if self.hpack.is_none() {
            self.give_up(&mut out);
        }
    }

    /// No longer following: a held block goes on as it came.
    fn give_up(&mut self, out: &mut Sink) {
        if self.block_held {
            emit(out, &self.block);
        }
        self.block.clear();
        self.block_held = false;
    }

    fn put(&mut self, bytes: &[u8], out: &mut Sink) {
        if matches!(self.route, Route::Pass | Route::Copy) {
            emit(out, bytes);
        }
        if matches!(self.route, Route::Hold | Route::Copy) {
            self.block.extend_from_slice(bytes);
            if self.block.len() > BLOCK_MAX {
                self.hpack = None;
            }
        }
    }

    /// A client frame's route, from its head; `deciding`: a stream's fate may be decided.
    fn route_of(&mut self, head: Head, deciding: bool) -> Route {
        let later = head.stream != 0 && head.stream > self.forwarded;
        match head.kind {
            _ if self.going_away && later => Route::Drop,
            HEADERS => {
                self.block_held = deciding;
                if deciding {
                    Route::Hold
                } else {
                    Route::Copy
                }
            }
            CONTINUATION if self.block_held => Route::Hold,
            CONTINUATION => Route::Copy,
            _ => Route::Pass,
        }
    }

    fn client_frame_ended(
        &mut self,
        choose: &mut dyn FnMut(&Req) -> Option<H2Hit>,
        out: &mut Sink,
        found: &mut Found,
    ) {
        let head = self.up.frame;
        match head.kind {
            RST_STREAM => {
                self.resetting.retain(|(s, _)| *s != head.stream);
                self.ended(head.stream)
            }
            HEADERS | CONTINUATION if matches!(self.route, Route::Hold | Route::Copy) => {
                if head.kind == HEADERS {
                    self.block_head = head;
                }
                let start = self.block.len() - head.len;
                let payload = &self.block[start..];
                let Some(fragment) = fragment(head, payload) else {
                    self.hpack = None;
                    return;
                };
                self.fragment.extend_from_slice(fragment);
                if head.flags & END_HEADERS != 0 {
                    self.header_block(choose, out, found);
                }
            }
            _ => {}
        }
    }

    /// A whole header block from the client: decoded, then (when it was held) the stream's
    /// fate.
    fn header_block(
        &mut self,
        choose: &mut dyn FnMut(&Req) -> Option<H2Hit>,
        out: &mut Sink,
        found: &mut Found,
    ) {
        let mut req = Req {
            method: String::new(),
            path: String::new(),
        };
        let decoded = self.hpack.as_mut().map(|h| {
            h.inflate(&self.fragment, |name, value| match name {
                b":method" => req.method = String::from_utf8_lossy(value).into_owned(),
                b":path" => req.path = String::from_utf8_lossy(value).into_owned(),
                _ => {}
            })
        });
        self.fragment.clear();
        if !matches!(decoded, Some(Ok(()))) {
            self.hpack = None;
            return;
        }
        let held = std::mem::replace(&mut self.block_held, false);
        let stream = self.block_head.stream;
        let hit = if stream > self.highest {
            self.highest = stream;
            if held {
                choose(&req)
            } else {
                None
            }
        } else {
            // Trailers of a stream the server has.
            None
        };
        match hit {
            None => {
                if held {
                    emit(out, &self.block);
                }
                if stream > self.forwarded {
                    self.forwarded = stream;
                    self.open.push(stream);
                }
            }
            Some(H2Hit {
                action: H2Action::RstStream,
                code,
            }) => {
                // The server answers as usual; its response's end becomes the reset (a frame
                // of the stream after a reset would be an error to the client, and a header
                // block kept from it would put its HPACK table out of step).
                emit(out, &self.block);
                self.forwarded = stream;
                self.open.push(stream);
                self.resetting.push((stream, code));
            }
            Some(H2Hit {
                action: H2Action::Goaway,
                code,
            }) => {
                let mut payload = self.forwarded.to_be_bytes().to_vec();
                payload.extend_from_slice(&code.to_be_bytes());
                self.pending.extend_from_slice(&frame(GOAWAY, 0, &payload));
                self.going_away = true;
                self.close_if_done();
                found.goaways += 1;
            }
        }
        self.block.clear();
    }

    fn ended(&mut self, stream: u32) {
        if let Some(i) = self.open.iter().position(|s| *s == stream) {
            self.open.swap_remove(i);
            self.close_if_done();
        }
    }

    fn close_if_done(&mut self) {
        if self.going_away && self.open.is_empty() {
            self.close_pending = true;
        }
    }

    /// Frames for the client that may go now (the server's stream is between frames), and
    /// whether the connection closes after them.
    pub fn down_now(&mut self, out: &mut Vec<u8>) -> bool {
        if self.down.at_boundary() {
            self.flush(&mut Some(out))
        } else {
            false
        }
    }

    fn flush(&mut self, out: &mut Sink) -> bool {
        emit(out, &self.pending);
        self.pending.clear();
        if self.close_pending && !self.closed {
            self.closed = true;
            return true;
        }
        false
    }

    /// The server's bytes, with what waits for the client put in at the first boundary
    /// (`out`; `None` when [`down_quiet`](Self::down_quiet): they go as they are); true when
    /// the connection closes after them.
    pub fn down(&mut self, mut bytes: &[u8], mut out: Sink, found: &mut Found) -> bool {
        while !bytes.is_empty() {
            if self.down.at_boundary() && self.flush(&mut out) {
                return true;
            }
            if self.down.got < 9 {
                let head = self.down.head_from(&mut bytes);
                if out.is_none() {
                    self.down.passed = self.down.got;
                }
                let Some(head) = head else {
                    return false;
                };
                let mut head_bytes = self.down.head;
                let passed = std::mem::take(&mut self.down.passed).min(9);
                self.end_with_reset(head, &mut head_bytes, passed);
                emit(&mut out, &head_bytes[passed..]);
                if head.len > 0 {
                    continue;
                }
                self.down.got = 0;
                self.down.started = true;
            } else {
                let (taken, ended) = self.down.payload_from(&mut bytes);
                emit(&mut out, taken);
                if !ended {
                    continue;
                }
            }
            self.server_frame_ended(found);
        }
        self.down.at_boundary() && self.flush(&mut out)
    }

    /// A server frame that ends a stream to be reset: it goes on without END_STREAM, and the
    /// reset follows it (unless its flags already went on).
    fn end_with_reset(&mut self, head: Head, head_bytes: &mut [u8; 9], passed: usize) {
        let Some(&(stream, code)) = self.resetting.iter().find(|(s, _)| *s == head.stream) else {
            return;
        };
        let ends = matches!(head.kind, DATA | HEADERS) && head.flags & END_STREAM != 0;
        if ends && passed <= 4 {
            head_bytes[4] &= !END_STREAM;
            self.reset_at_end = Some((stream, code));
        }
    }

    fn server_frame_ended(&mut self, found: &mut Found) {
        let f = self.down.frame;
        let mut ends = match f.kind {
            DATA | HEADERS => f.flags & END_STREAM != 0,
            RST_STREAM => true,
            _ => false,
        }
        .then_some(f.stream);
        if self.reset_at_end.is_some() {
            // Its reset goes once the frame (and its header block) is whole.
            ends = None;
            if !self.down.in_block {
                if let Some((stream, code)) = self.reset_at_end.take() {
                    self.pending
                        .extend_from_slice(&frame(RST_STREAM, stream, &code.to_be_bytes()));
                    found.resets += 1;
                    ends = Some(stream);
                }
            }
        }
        if let Some(stream) = ends {
            self.resetting.retain(|(s, _)| *s != stream);
            self.ended(stream);
        }
    }
}

/// A HEADERS or CONTINUATION frame's header block fragment, without padding and priority;
/// `None` if the frame is malformed.
fn fragment(head: Head, payload: &[u8]) -> Option<&[u8]> {
    if head.kind == CONTINUATION {
        return Some(payload);
    }
    headers_fragment(head.flags, payload).ok()
}

fn frame(kind: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut f = vec![len[1], len[2], len[3], kind, 0];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

#[cfg(test)]
mod tests;
