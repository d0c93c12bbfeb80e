//! HTTP/3 framing (RFC 9114 §7): QUIC variable-length integers, frame headers, the SETTINGS a
//! client sends on its control stream. Only what a client that sends requests and reads
//! responses needs; unknown frame types are skipped, as the RFC requires.

/// Frame types (RFC 9114 §7.2).
pub(crate) const DATA: u64 = 0x00;
pub(crate) const HEADERS: u64 = 0x01;
pub(crate) const SETTINGS: u64 = 0x04;
pub(crate) const GOAWAY: u64 = 0x07;

/// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
pub(crate) const CONTROL_STREAM: u64 = 0x00;

/// Settings identifiers (RFC 9204 §5): a dynamic table of 0 bytes and no blocked streams, so
/// the server's header blocks use the static table and literals only.
const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
const QPACK_BLOCKED_STREAMS: u64 = 0x07;

/// Appends `v` as a QUIC variable-length integer (RFC 9000 §16), in its shortest form.
pub(crate) fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v < 1 << 6 {
        out.push(v as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&((v as u16) | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        out.extend_from_slice(&((v as u32) | 0x8000_0000).to_be_bytes());
    } else {
        debug_assert!(v < 1 << 62, "varint out of range: {v}");
        out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// Reads a variable-length integer at the start of `bytes`: the value and its length, or
/// `None` when `bytes` ends before it does.
pub(crate) fn get_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    let len = 1usize << (first >> 6);
    if bytes.len() < len {
        return None;
    }
    let mut v = u64::from(first & 0x3f);
    for b in &bytes[1..len] {
        v = v << 8 | u64::from(*b);
    }
    Some((v, len))
}

/// Appends a frame header: its type and the length of the payload that follows.
pub(crate) fn put_frame_header(out: &mut Vec<u8>, kind: u64, len: usize) {
    put_varint(out, kind);
    put_varint(out, len as u64);
}

/// A frame header read from a stream: the frame's type, the length of its payload, and how many
/// bytes the header itself took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    pub kind: u64,
    pub len: u64,
    pub header_len: usize,
}

/// Reads a frame header at the start of `bytes`, or `None` while it is incomplete.
pub(crate) fn get_frame_header(bytes: &[u8]) -> Option<FrameHeader> {
    let (kind, a) = get_varint(bytes)?;
    let (len, b) = get_varint(&bytes[a..])?;
    Some(FrameHeader {
        kind,
        len,
        header_len: a + b,
    })
}

/// The whole client control stream's opening: the stream type, then one SETTINGS frame.
pub(crate) fn control_stream_opening() -> Vec<u8> {
    let mut settings = Vec::new();
    for (id, value) in [(QPACK_MAX_TABLE_CAPACITY, 0), (QPACK_BLOCKED_STREAMS, 0)] {
        put_varint(&mut settings, id);
        put_varint(&mut settings, value);
    }
    let mut out = Vec::with_capacity(settings.len() + 3);
    put_varint(&mut out, CONTROL_STREAM);
    put_frame_header(&mut out, SETTINGS, settings.len());
    out.extend_from_slice(&settings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_their_shortest_form_and_read_back() {
        // RFC 9000 §A.1's examples, and the edges of each length.
        let table: [(u64, &[u8]); 7] = [
            (37, &[0x25]),
            (63, &[0x3f]),
            (64, &[0x40, 0x40]),
            (15_293, &[0x7b, 0xbd]),
            (494_878_333, &[0x9d, 0x7f, 0x3e, 0x7d]),
            (
                151_288_809_941_952_652,
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
            ),
            ((1 << 30) - 1, &[0xbf, 0xff, 0xff, 0xff]),
        ];
        for (value, wire) in table {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out, wire, "{value}");
            assert_eq!(get_varint(wire), Some((value, wire.len())), "{value}");
            assert_eq!(
                get_varint(&wire[..wire.len() - 1]),
                None,
                "{value} cut short"
            );
        }
    }

    #[test]
    fn frame_headers_wait_for_all_their_bytes() {
        let mut out = Vec::new();
        put_frame_header(&mut out, HEADERS, 300);
        assert_eq!(out, [0x01, 0x41, 0x2c]);
        let want = FrameHeader {
            kind: HEADERS,
            len: 300,
            header_len: 3,
        };
        assert_eq!(get_frame_header(&out), Some(want));
        assert_eq!(get_frame_header(&out[..2]), None);
        assert_eq!(get_frame_header(&[]), None);
    }

    #[test]
    fn control_stream_announces_a_static_only_qpack() {
        // type 0 (control), SETTINGS of 4 bytes: capacity 0, blocked streams 0.
        assert_eq!(
            control_stream_opening(),
            [0x00, 0x04, 0x04, 0x01, 0x00, 0x07, 0x00]
        );
    }
}
