//! RFC 6455's frames as a server reads and writes them (the client's masked, its own not),
//! for a `ws` route over HTTP/1.1's Upgrade (`conn/websocket.rs`) and over HTTP/2's extended
//! CONNECT (`h2_ws.rs`).

/// The close code a `fault=close` (or an injected error) ends the socket with: internal error.
pub(crate) const FAULT_CODE: u16 = 1011;

/// A whole client frame at the start of `b`: fin, opcode, payload (unmasked), bytes taken.
pub(crate) fn frame(b: &[u8]) -> Option<(bool, u8, Vec<u8>, usize)> {
    let [b0, b1, ..] = *b else { return None };
    let (len, mut at) = match b1 & 0x7F {
        126 => (u16::from_be_bytes([*b.get(2)?, *b.get(3)?]) as usize, 4),
        127 => (
            u64::from_be_bytes(b.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let mask = if b1 & 0x80 != 0 {
        let m: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        Some(m)
    } else {
        None
    };
    let mut payload = b.get(at..at + len)?.to_vec();
    if let Some(m) = mask {
        for (i, x) in payload.iter_mut().enumerate() {
            *x ^= m[i % 4];
        }
    }
    Some((b0 & 0x80 != 0, b0 & 0x0F, payload, at + len))
}

/// Appends a server frame (unmasked).
pub(crate) fn write_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 65_535 => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}
