//! gRPC's length-prefixed messages (a flag byte, 1 for compressed; a big-endian u32 length;
//! the message): written once for a request, read back from a reply whose bytes may arrive
//! split anywhere across DATA frames.

/// The 5-byte prefix.
pub const PREFIX: usize = 5;

/// The largest reply message read (gRPC's default receive limit is 4 MiB; a length above this
/// is a broken frame, not a message to wait for).
pub const MAX_MESSAGE: usize = 64 << 20;

/// `message` with its prefix, uncompressed.
pub fn encode(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX + message.len());
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// What is wrong with a reply's frames.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a reply message is compressed (flag {0}), and no grpc-encoding was asked for")]
    Compressed(u8),
    #[error("a reply message says it is {0} bytes, above the {MAX_MESSAGE}-byte limit")]
    TooLong(usize),
    #[error("the reply ended inside a message: {have} of its {want} bytes (prefix included)")]
    Cut { have: usize, want: usize },
}

/// Reads messages out of bytes fed in pieces, holding only a message not whole yet.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    carry: Vec<u8>,
}

impl Decoder {
    /// Feeds `bytes`; `message` is called with each message that is whole by now.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        mut message: impl FnMut(&[u8]),
    ) -> Result<(), FrameError> {
        while !bytes.is_empty() {
            if self.carry.is_empty() {
                // The common case: whole messages in the bytes as they came, no copy.
                match whole(bytes)? {
                    Some(len) => {
                        message(&bytes[PREFIX..len]);
                        bytes = &bytes[len..];
                        continue;
                    }
                    None => {
                        self.carry.extend_from_slice(bytes);
                        return Ok(());
                    }
                }
            }
            if self.carry.len() < PREFIX {
                let take = (PREFIX - self.carry.len()).min(bytes.len());
                self.carry.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                if self.carry.len() < PREFIX {
                    return Ok(());
                }
            }
            let want = PREFIX + length(&self.carry)?;
            let take = (want - self.carry.len()).min(bytes.len());
            self.carry.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.carry.len() == want {
                message(&self.carry[PREFIX..]);
                self.carry.clear();
            }
        }
        Ok(())
    }

    /// The reply is over: a message left unfinished is an error.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.carry.is_empty() {
            return Ok(());
        }
        let want = if self.carry.len() < PREFIX {
            PREFIX
        } else {
            PREFIX + length(&self.carry)?
        };
        Err(FrameError::Cut {
            have: self.carry.len(),
            want,
        })
    }
}

/// The message length a prefix says, checked.
fn length(prefix: &[u8]) -> Result<usize, FrameError> {
    if prefix[0] != 0 {
        return Err(FrameError::Compressed(prefix[0]));
    }
    let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    if len > MAX_MESSAGE {
        return Err(FrameError::TooLong(len));
    }
    Ok(len)
}

/// The length of the whole first message of `bytes` (prefix included), when it is all there.
fn whole(bytes: &[u8]) -> Result<Option<usize>, FrameError> {
    if bytes.len() < PREFIX {
        return Ok(None);
    }
    let end = PREFIX + length(bytes)?;
    Ok((bytes.len() >= end).then_some(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(pieces: &[&[u8]]) -> (Vec<Vec<u8>>, Result<(), FrameError>) {
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for p in pieces {
            if let Err(e) = d.feed(p, |m| got.push(m.to_vec())) {
                return (got, Err(e));
            }
        }
        let end = d.finish();
        (got, end)
    }

    #[test]
    fn messages_split_anywhere_come_out_whole() {
        let mut wire = encode(b"hello");
        wire.extend(encode(b""));
        wire.extend(encode(&[7; 300]));
        let want = vec![b"hello".to_vec(), Vec::new(), vec![7; 300]];
        assert_eq!(messages(&[&wire]), (want.clone(), Ok(())));
        for cut in 1..wire.len() {
            let (a, b) = wire.split_at(cut);
            assert_eq!(messages(&[a, b]), (want.clone(), Ok(())), "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = wire.chunks(1).collect();
        assert_eq!(messages(&bytes), (want, Ok(())));
    }

    #[test]
    fn broken_frames_are_errors() {
        let wire = encode(b"hello");
        assert_eq!(
            messages(&[&wire[..7]]).1,
            Err(FrameError::Cut { have: 7, want: 10 })
        );
        assert_eq!(
            messages(&[&wire[..3]]).1,
            Err(FrameError::Cut { have: 3, want: 5 })
        );
        assert_eq!(
            messages(&[&[1, 0, 0, 0, 1, 9]]).1,
            Err(FrameError::Compressed(1))
        );
        assert_eq!(
            messages(&[&[0, 0xff, 0xff, 0xff, 0xff]]).1,
            Err(FrameError::TooLong(u32::MAX as usize))
        );
    }
}
