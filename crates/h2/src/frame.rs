//! HTTP/2 frame types and flags (RFC 9113 section 6), and a HEADERS frame's header block
//! fragment: what herd's header trim and herd proxy's stream follower both read from frames
//! they see before (or beside) nghttp2.

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const PUSH_PROMISE: u8 = 0x5;
pub const GOAWAY: u8 = 0x7;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY: u8 = 0x20;

/// Why a HEADERS frame holds no header block fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadHeaders {
    /// PADDED, and no byte for the padding's length.
    NoPadLength,
    /// The padding is longer than the frame.
    PaddingTooLong,
    /// PRIORITY, and fewer than its 5 bytes.
    ShortPriority,
}

/// The header block fragment of a HEADERS frame with `flags` and `payload`: without its
/// padding and priority fields (a CONTINUATION's payload is all fragment).
pub fn headers_fragment(flags: u8, payload: &[u8]) -> Result<&[u8], BadHeaders> {
    let mut fragment = payload;
    if flags & PADDED != 0 {
        let (&pad, rest) = fragment.split_first().ok_or(BadHeaders::NoPadLength)?;
        if usize::from(pad) > rest.len() {
            return Err(BadHeaders::PaddingTooLong);
        }
        fragment = &rest[..rest.len() - usize::from(pad)];
    }
    if flags & PRIORITY != 0 {
        fragment = fragment.get(5..).ok_or(BadHeaders::ShortPriority)?;
    }
    Ok(fragment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_and_priority_are_taken_off_and_their_faults_told() {
        assert_eq!(headers_fragment(0, b"abc"), Ok(&b"abc"[..]));
        // Pad length 2, priority's 5 bytes, fragment "ab", padding "xx".
        let p = [2, 0, 0, 0, 1, 16, b'a', b'b', b'x', b'x'];
        assert_eq!(headers_fragment(PADDED | PRIORITY, &p), Ok(&b"ab"[..]));
        assert_eq!(headers_fragment(PADDED, &[]), Err(BadHeaders::NoPadLength));
        assert_eq!(
            headers_fragment(PADDED, &[3, 0, 0]),
            Err(BadHeaders::PaddingTooLong)
        );
        assert_eq!(
            headers_fragment(PRIORITY, &[0; 4]),
            Err(BadHeaders::ShortPriority)
        );
    }
}
