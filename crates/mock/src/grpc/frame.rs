//! gRPC's message framing on an HTTP/2 body: a flag byte (1 = compressed), a 4-byte big-endian
//! length, the message (grpc/doc/PROTOCOL-HTTP2.md, "Length-Prefixed-Message").

/// Largest request message taken (gRPC's default receive limit).
pub(crate) const MAX_MESSAGE: usize = 4 << 20;

/// Appends one uncompressed message with its prefix.
pub(crate) fn encode(message: &[u8], out: &mut Vec<u8>) {
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
}

/// What a request body held, message by message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed {
    Message(Vec<u8>),
    /// The flag byte says compressed: herd serve offers no compression.
    Compressed,
    TooLarge(usize),
}

/// Collects body bytes as they arrive and cuts them into messages.
#[derive(Debug, Default)]
pub(crate) struct Deframer {
    buf: Vec<u8>,
}

impl Deframer {
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, if one is in.
    pub(crate) fn next(&mut self) -> Option<Framed> {
        let head: [u8; 5] = self.buf.get(..5)?.try_into().ok()?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if len > MAX_MESSAGE {
            return Some(Framed::TooLarge(len));
        }
        if head[0] != 0 {
            return Some(Framed::Compressed);
        }
        let message = self.buf.get(5..5 + len)?.to_vec();
        self.buf.drain(..5 + len);
        Some(Framed::Message(message))
    }

    /// Bytes of a message begun and not finished.
    pub(crate) fn pending(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cut_across_pieces() {
        let mut wire = Vec::new();
        encode(b"hello", &mut wire);
        encode(b"", &mut wire);
        let mut d = Deframer::default();
        d.push(&wire[..3]);
        assert_eq!(d.next(), None);
        d.push(&wire[3..8]);
        assert_eq!(d.next(), None, "four of five bytes");
        d.push(&wire[8..]);
        assert_eq!(d.next(), Some(Framed::Message(b"hello".to_vec())));
        assert_eq!(d.next(), Some(Framed::Message(Vec::new())));
        assert_eq!((d.next(), d.pending()), (None, 0));
        d.push(&[1, 0, 0, 0, 1, 9]);
        assert_eq!(d.next(), Some(Framed::Compressed));
        let mut d = Deframer::default();
        d.push(&[0, 0xff, 0, 0, 0]);
        assert!(matches!(d.next(), Some(Framed::TooLarge(_))));
    }
}
