//! QPACK (RFC 9204) with the static table only. herd's SETTINGS give the server a dynamic table
//! of 0 bytes, so every header block it sends is made of static references and literals, and
//! the encoder and decoder streams stay silent. Requests are encoded once before a run; only a
//! response's `:status` is decoded unless the request keeps its headers.

use super::static_table::STATIC;
use herd_h2::huffman;

/// A header block that is not valid QPACK, or refers to a dynamic table herd never allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QpackError {
    #[error("QPACK header block ends in the middle of a field")]
    Truncated,
    #[error("QPACK header block refers to the dynamic table, which herd set to 0 bytes")]
    Dynamic,
    #[error("QPACK static index {0} is past the table's 99 entries")]
    BadIndex(u64),
    #[error("QPACK integer too large")]
    Overflow,
    #[error("bad Huffman string in a QPACK header block")]
    Huffman,
}

/// Appends a prefixed integer (RFC 7541 §5.1): `first` holds the pattern bits above the
/// `prefix`-bit field.
fn put_int(out: &mut Vec<u8>, first: u8, prefix: u32, mut v: u64) {
    let max = (1u64 << prefix) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a prefixed integer at `*at`, moving `*at` past it.
fn get_int(block: &[u8], at: &mut usize, prefix: u32) -> Result<u64, QpackError> {
    let max = (1u64 << prefix) - 1;
    let first = *block.get(*at).ok_or(QpackError::Truncated)?;
    *at += 1;
    let mut v = u64::from(first) & max;
    if v < max {
        return Ok(v);
    }
    let mut shift = 0;
    loop {
        let b = *block.get(*at).ok_or(QpackError::Truncated)?;
        *at += 1;
        if shift > 56 {
            return Err(QpackError::Overflow);
        }
        v += u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// Appends a string literal without Huffman coding: the H bit sits just above the length's
/// `prefix` bits.
fn put_str(out: &mut Vec<u8>, first: u8, prefix: u32, s: &[u8]) {
    put_int(out, first, prefix, s.len() as u64);
    out.extend_from_slice(s);
}

/// Reads a string literal whose H bit is just above `prefix` bits: its bytes, raw or still
/// Huffman-coded, and whether they are.
fn get_str<'a>(
    block: &'a [u8],
    at: &mut usize,
    prefix: u32,
) -> Result<(&'a [u8], bool), QpackError> {
    let huffman = block.get(*at).ok_or(QpackError::Truncated)? & (1 << prefix) != 0;
    let len = get_int(block, at, prefix)?;
    let end = at
        .checked_add(usize::try_from(len).map_err(|_| QpackError::Overflow)?)
        .filter(|end| *end <= block.len())
        .ok_or(QpackError::Truncated)?;
    let s = &block[*at..end];
    *at = end;
    Ok((s, huffman))
}

fn static_entry(index: u64) -> Result<(&'static str, &'static str), QpackError> {
    usize::try_from(index)
        .ok()
        .and_then(|i| STATIC.get(i))
        .copied()
        .ok_or(QpackError::BadIndex(index))
}

/// Encodes a request's header block: the pseudo-headers, then `headers` (names lowercased, as
/// HTTP/3 requires). Exact matches in the static table become one-byte references, known names
/// a reference plus a literal value, the rest plain literals.
pub(crate) fn encode_request<'a>(
    method: &str,
    scheme: &str,
    authority: &str,
    path: &str,
    headers: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<u8> {
    // Required Insert Count 0 and Delta Base 0: no dynamic table.
    let mut out = vec![0, 0];
    let pseudo = [
        (":method", method),
        (":scheme", scheme),
        (":authority", authority),
        (":path", path),
    ];
    for (name, value) in pseudo {
        encode_field(&mut out, name, value);
    }
    for (name, value) in headers {
        encode_field(&mut out, &name.to_ascii_lowercase(), value);
    }
    out
}

fn encode_field(out: &mut Vec<u8>, name: &str, value: &str) {
    if let Some(i) = STATIC.iter().position(|&(n, v)| n == name && v == value) {
        // Indexed field line, static: 11xxxxxx.
        put_int(out, 0b1100_0000, 6, i as u64);
    } else if let Some(i) = STATIC.iter().position(|&(n, _)| n == name) {
        // Literal with a static name reference, N=0: 0101xxxx, then the value.
        put_int(out, 0b0101_0000, 4, i as u64);
        put_str(out, 0, 7, value.as_bytes());
    } else {
        // Literal with a literal name, N=0, H=0: 0010xxxx.
        put_str(out, 0b0010_0000, 3, name.as_bytes());
        put_str(out, 0, 7, value.as_bytes());
    }
}

/// Decodes a response's header block, calling `field(name, value)` for each field line. Values
/// (and literal names) are decoded only when `want(name)` says so, for names known from the
/// static table; otherwise `field` gets an empty value. `scratch` holds Huffman-decoded bytes.
pub(crate) fn decode(
    block: &[u8],
    want: impl Fn(&[u8]) -> bool,
    scratch: &mut Vec<u8>,
    mut field: impl FnMut(&[u8], &[u8]),
) -> Result<(), QpackError> {
    let mut at = 0;
    if get_int(block, &mut at, 8)? != 0 {
        return Err(QpackError::Dynamic);
    }
    get_int(block, &mut at, 7)?; // Delta Base: meaningless without a dynamic table.
    while at < block.len() {
        let first = block[at];
        if first & 0x80 != 0 {
            if first & 0x40 == 0 {
                return Err(QpackError::Dynamic);
            }
            let (name, value) = static_entry(get_int(block, &mut at, 6)?)?;
            field(name.as_bytes(), value.as_bytes());
        } else if first & 0x40 != 0 {
            if first & 0x10 == 0 {
                return Err(QpackError::Dynamic);
            }
            let (name, _) = static_entry(get_int(block, &mut at, 4)?)?;
            let (raw, huff) = get_str(block, &mut at, 7)?;
            if want(name.as_bytes()) {
                let value = plain(raw, huff, scratch)?;
                field(name.as_bytes(), value);
            } else {
                field(name.as_bytes(), b"");
            }
        } else if first & 0x20 != 0 {
            let (raw_name, huff_name) = get_str(block, &mut at, 3)?;
            let (raw, huff) = get_str(block, &mut at, 7)?;
            scratch.clear();
            let name = if huff_name {
                huffman::decode(raw_name, scratch).map_err(|_| QpackError::Huffman)?;
                std::mem::take(scratch)
            } else {
                raw_name.to_vec()
            };
            if want(&name) {
                let value = plain(raw, huff, scratch)?;
                field(&name, value);
            } else {
                field(&name, b"");
            }
        } else {
            // 0001xxxx and 0000xxxx: post-base references into the dynamic table.
            return Err(QpackError::Dynamic);
        }
    }
    Ok(())
}

fn plain<'a>(raw: &'a [u8], huff: bool, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], QpackError> {
    if !huff {
        return Ok(raw);
    }
    scratch.clear();
    huffman::decode(raw, scratch).map_err(|_| QpackError::Huffman)?;
    Ok(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(block: &[u8]) -> Result<Vec<(String, String)>, QpackError> {
        let mut out = Vec::new();
        decode(
            block,
            |_| true,
            &mut Vec::new(),
            |n, v| {
                out.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ))
            },
        )?;
        Ok(out)
    }

    #[test]
    fn a_get_request_is_mostly_static_references() {
        let block = encode_request("GET", "https", "localhost:8443", "/", []);
        // :method GET (17), :scheme https (23), :authority by name (0) + literal, :path / (1).
        let mut want = vec![0, 0, 0xc0 | 17, 0xc0 | 23, 0x50, 14];
        want.extend_from_slice(b"localhost:8443");
        want.push(0xc0 | 1);
        assert_eq!(block, want);
    }

    #[test]
    fn requests_decode_to_what_was_encoded() {
        let block = encode_request(
            "POST",
            "https",
            "example.com",
            "/api/items?id=7",
            [
                ("Content-Type", "application/json"),
                ("User-Agent", "herd"),
                ("X-Request-Id", "abc"),
            ],
        );
        let want = [
            (":method", "POST"),
            (":scheme", "https"),
            (":authority", "example.com"),
            (":path", "/api/items?id=7"),
            ("content-type", "application/json"),
            ("user-agent", "herd"),
            ("x-request-id", "abc"),
        ];
        let got = fields(&block).unwrap();
        let got: Vec<_> = got.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn response_literals_may_be_huffman_coded() {
        // :status 201 (name 24 + Huffman "201"), server: literal name "x-a", Huffman value.
        let mut block = vec![0, 0, 0x50 | 0x0f, 24 - 15];
        let v = huffman::encode(b"201");
        block.push(0x80 | v.len() as u8);
        block.extend_from_slice(&v);
        let n = huffman::encode(b"x-a");
        block.push(0x28 | n.len() as u8);
        block.extend_from_slice(&n);
        put_str(&mut block, 0, 7, b"1");
        let got = fields(&block).unwrap();
        assert_eq!(
            got,
            [(":status".into(), "201".into()), ("x-a".into(), "1".into())]
        );
    }

    #[test]
    fn unwanted_values_are_not_decoded() {
        let mut block = vec![0, 0, 0xc0 | 25];
        block.push(0x50 | 6); // date, Huffman value that is not valid Huffman
        block.extend_from_slice(&[0x81, 0x00]);
        let mut seen = Vec::new();
        decode(
            &block,
            |n| n == b":status",
            &mut Vec::new(),
            |n, v| seen.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(seen[0], (b":status".to_vec(), b"200".to_vec()));
        assert_eq!(seen[1], (b"date".to_vec(), Vec::new()));
    }

    #[test]
    fn bad_blocks_are_refused_with_their_reason() {
        let table: [(&[u8], QpackError); 6] = [
            (&[0x01, 0x00], QpackError::Dynamic),
            (&[0, 0, 0x80], QpackError::Dynamic),
            (&[0, 0, 0x10], QpackError::Dynamic),
            (&[0, 0, 0xff, 0x30], QpackError::BadIndex(63 + 48)),
            (&[0, 0, 0x5f, 0x09, 0x05, b'a'], QpackError::Truncated),
            (&[0, 0, 0x51, 0x81, 0x00], QpackError::Huffman),
        ];
        for (block, want) in table {
            assert_eq!(fields(block), Err(want), "{block:x?}");
        }
    }

    #[test]
    fn long_integers_use_continuation_bytes() {
        let mut out = Vec::new();
        put_int(&mut out, 0, 5, 1337); // RFC 7541 §C.1.2
        assert_eq!(out, [31, 154, 10]);
        let mut at = 0;
        assert_eq!(get_int(&out, &mut at, 5), Ok(1337));
        assert_eq!(at, 3);
    }
}
