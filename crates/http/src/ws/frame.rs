//! RFC 6455's frames, as a client writes and reads them: the client masks what it sends (a
//! four-byte key XORed over the payload), the server's frames come unmasked. Decoding is done
//! in place on the bytes received: a frame's payload is a range of them, nothing is copied
//! unless a message comes in fragments.

pub(crate) const CONTINUATION: u8 = 0x0;
pub(crate) const TEXT: u8 = 0x1;
pub(crate) const BINARY: u8 = 0x2;
pub(crate) const CLOSE: u8 = 0x8;
pub(crate) const PING: u8 = 0x9;
pub(crate) const PONG: u8 = 0xA;

/// A frame's header as read: where its payload lies in the bytes given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub fin: bool,
    pub opcode: u8,
    /// The payload is `bytes[start..end]`.
    pub start: usize,
    pub end: usize,
}

/// Reads the frame at the start of `bytes`: `Ok(None)` while it is incomplete, `Err` with what
/// is wrong when the server broke the protocol (a masked frame, reserved bits, a control frame
/// over 125 bytes or in fragments, an unknown opcode, a payload over `max`).
pub(crate) fn decode(bytes: &[u8], max: u64) -> Result<Option<Head>, String> {
    let [b0, b1, ..] = *bytes else {
        return Ok(None);
    };
    let (fin, opcode) = (b0 & 0x80 != 0, b0 & 0x0F);
    if b0 & 0x70 != 0 {
        return Err(format!(
            "a frame with reserved bits set ({b0:#04x}) and no extension agreed"
        ));
    }
    if b1 & 0x80 != 0 {
        return Err("a masked frame from the server (RFC 6455 5.1: servers never mask)".into());
    }
    if !matches!(opcode, CONTINUATION | TEXT | BINARY | CLOSE | PING | PONG) {
        return Err(format!("a frame with the unknown opcode {opcode:#x}"));
    }
    let (len, at) = match b1 & 0x7F {
        126 if bytes.len() < 4 => return Ok(None),
        126 => (u64::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
        127 if bytes.len() < 10 => return Ok(None),
        127 => {
            let mut n = [0; 8];
            n.copy_from_slice(&bytes[2..10]);
            (u64::from_be_bytes(n), 10)
        }
        n => (u64::from(n), 2),
    };
    if opcode >= CLOSE && (len > 125 || !fin) {
        return Err(format!(
            "a control frame (opcode {opcode:#x}) of {len} bytes{}",
            if fin { "" } else { " in fragments" }
        ));
    }
    if len > max {
        return Err(format!(
            "a frame of {len} bytes, over the {max} bytes herd reads in one message"
        ));
    }
    let end = at + len as usize;
    if bytes.len() < end {
        return Ok(None);
    }
    Ok(Some(Head {
        fin,
        opcode,
        start: at,
        end,
    }))
}

/// Appends a final frame of `opcode` carrying `payload`, masked with `mask`, to `out`.
pub(crate) fn encode(opcode: u8, payload: &[u8], mask: [u8; 4], out: &mut Vec<u8>) {
    // The head is put together on the stack and goes in with the payload in one reservation:
    // a message's frame is a few pushes fewer (each one a capacity check) than byte by byte.
    let len = payload.len();
    let [m0, m1, m2, m3] = mask;
    if len < 126 {
        // A message's usual frame: six bytes of head, written at once.
        out.reserve(6 + len);
        out.extend_from_slice(&[0x80 | opcode, 0x80 | len as u8, m0, m1, m2, m3]);
        let at = out.len();
        out.extend_from_slice(payload);
        apply_mask(&mut out[at..], mask);
        return;
    }
    let mut head = [0u8; 14];
    head[0] = 0x80 | opcode;
    let n = if len <= usize::from(u16::MAX) {
        head[1] = 0x80 | 126;
        head[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        4
    } else {
        head[1] = 0x80 | 127;
        head[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        10
    };
    head[n..n + 4].copy_from_slice(&mask);
    out.reserve(n + 4 + len);
    out.extend_from_slice(&head[..n + 4]);
    let at = out.len();
    out.extend_from_slice(payload);
    apply_mask(&mut out[at..], mask);
}

/// XORs `mask` over `bytes` (masking and unmasking are the same), eight bytes at a time.
pub(crate) fn apply_mask(bytes: &mut [u8], mask: [u8; 4]) {
    let wide = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut chunks = bytes.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes(c.try_into().expect("eight bytes")) ^ wide;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= mask[i % 4];
    }
}

/// A close frame's status code and reason: 1005 (none given) when it carries none.
pub(crate) fn close_code(payload: &[u8]) -> (u16, &[u8]) {
    match payload {
        [a, b, reason @ ..] => (u16::from_be_bytes([*a, *b]), reason),
        _ => (1005, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's frame (unmasked), as RFC 6455 section 5.7 writes its examples.
    fn server(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![u8::from(fin) << 7 | opcode];
        match payload.len() {
            n if n < 126 => f.push(n as u8),
            n if n <= 65_535 => {
                f.push(126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn the_rfc_examples_decode() {
        // 5.7: a single-frame unmasked text message, "Hello".
        let hello = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        let h = decode(&hello, 1 << 20).unwrap().unwrap();
        assert_eq!(
            (h.fin, h.opcode, &hello[h.start..h.end]),
            (true, TEXT, &b"Hello"[..])
        );
        // A fragmented one: "Hel" then "lo".
        let first = decode(&[0x01, 0x03, 0x48, 0x65, 0x6c], 99)
            .unwrap()
            .unwrap();
        assert_eq!((first.fin, first.opcode), (false, TEXT));
        let last = decode(&[0x80, 0x02, 0x6c, 0x6f], 99).unwrap().unwrap();
        assert_eq!((last.fin, last.opcode), (true, CONTINUATION));
        // 256 bytes and 64 KiB binary messages: the 16- and 64-bit lengths.
        for n in [256, 65_536] {
            let f = server(true, BINARY, &vec![7; n]);
            let h = decode(&f, 1 << 20).unwrap().unwrap();
            assert_eq!((h.end - h.start, h.end), (n, f.len()));
        }
    }

    #[test]
    fn a_frame_is_read_only_when_whole() {
        let f = server(true, TEXT, &[b'x'; 300]);
        for cut in 0..f.len() {
            assert_eq!(decode(&f[..cut], 1 << 20), Ok(None), "cut at {cut}");
        }
        assert!(decode(&f, 1 << 20).unwrap().is_some());
    }

    #[test]
    fn what_a_server_must_not_send_is_refused() {
        let masked = [0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0];
        assert!(decode(&masked, 99).unwrap_err().contains("masked"));
        assert!(decode(&[0xC1, 0x00], 99).unwrap_err().contains("reserved"));
        assert!(decode(&[0x83, 0x00], 99)
            .unwrap_err()
            .contains("opcode 0x3"));
        assert!(decode(&server(false, PING, b""), 99)
            .unwrap_err()
            .contains("fragments"));
        assert!(decode(&server(true, PING, &[0; 126]), 999)
            .unwrap_err()
            .contains("126 bytes"));
        assert!(decode(&server(true, TEXT, &[0; 100]), 99)
            .unwrap_err()
            .contains("over the 99"));
    }

    #[test]
    fn encoding_masks_and_the_mask_undoes_itself() {
        // 5.7: a masked "Hello" with the key 37 fa 21 3d.
        let mut out = Vec::new();
        encode(TEXT, b"Hello", [0x37, 0xfa, 0x21, 0x3d], &mut out);
        assert_eq!(
            out,
            [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
        );
        for n in [0, 1, 125, 126, 65_535, 65_536, 70_001] {
            let payload: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let mut out = Vec::new();
            let mask = [9, 8, 7, 6];
            encode(BINARY, &payload, mask, &mut out);
            let header = out.len() - n;
            assert_eq!(
                header,
                6 + [0, 2, 8][usize::from(n >= 126) + usize::from(n > 65_535)]
            );
            assert_eq!(&out[header - 4..header], &mask);
            let mut back = out[header..].to_vec();
            apply_mask(&mut back, mask);
            assert_eq!(back, payload, "{n} bytes");
        }
    }

    #[test]
    fn the_mask_word_at_a_time_is_the_mask_byte_by_byte() {
        // Every length up to a few words, at every offset from an eight-byte boundary: the
        // words and the tail meet where a byte-by-byte mask would have them.
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        let bytes: Vec<u8> = (0..64u32).map(|i| (i * 29 + 3) as u8).collect();
        for at in 0..8 {
            for len in 0..=bytes.len() - at {
                let mut fast = bytes.clone();
                apply_mask(&mut fast[at..at + len], mask);
                let mut slow = bytes.clone();
                for (i, b) in slow[at..at + len].iter_mut().enumerate() {
                    *b ^= mask[i % 4];
                }
                assert_eq!(fast, slow, "{len} bytes at {at}");
            }
        }
    }

    #[test]
    fn close_codes() {
        assert_eq!(close_code(&[0x03, 0xF3, b'b', b'y']), (1011, &b"by"[..]));
        assert_eq!(close_code(&[]), (1005, &b""[..]));
    }
}
