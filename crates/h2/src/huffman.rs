//! HPACK's Huffman code (RFC 7541 section 5.2, Appendix B), decoded four bits at a time; QPACK
//! reuses it for its string literals (RFC 9204 section 4.1.2), so herd's HTTP/3 decodes with it too.
//!
//! The code is canonical: codes of one length are consecutive, in symbol order, each length's
//! first code following on the previous length's last. So the lengths below are the whole
//! table, and the tree and the decoding automaton are built from them once per process.
//! Every code is at least five bits long, so a nibble completes at most one symbol: each of
//! the 256 inner nodes of the tree is a state, and `(state, nibble)` gives the next state and
//! the symbol completed, if any, in one lookup.

use std::sync::OnceLock;

/// Code lengths in bits of symbols 0..=255 and EOS (256), RFC 7541 Appendix B.
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

const EOS: u16 = 256;
/// A step's flags: it completed a symbol; it met EOS (an error in any string).
const EMIT: u32 = 1 << 8;
const FAIL: u32 = 1 << 9;

/// A Huffman-coded string that is not one: it holds EOS, or ends on padding that is longer
/// than seven bits or not all ones (RFC 7541 section 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadHuffman;

struct Automaton {
    /// `steps[state * 16 + nibble]`: next state in the low byte, then `EMIT`/`FAIL`, the
    /// completed symbol in bits 16..24.
    steps: Vec<u32>,
    /// `bytes[state * 256 + byte]`: a whole byte's two steps, for counting symbols without
    /// writing them: next state in the low byte, symbols completed (0-2) in bits 8..10,
    /// `1 << 10` when EOS was met.
    bytes: Vec<u16>,
    /// A string may end in this state: at a symbol's boundary, or inside at most seven
    /// one-bits of padding (a prefix of EOS).
    accept: [bool; 256],
}

fn automaton() -> &'static Automaton {
    static AUTOMATON: OnceLock<Automaton> = OnceLock::new();
    AUTOMATON.get_or_init(build)
}

/// A child in the code tree: an inner node's number or a leaf's symbol.
#[derive(Clone, Copy)]
enum Node {
    Inner(u8),
    Leaf(u16),
    Empty,
}

fn build() -> Automaton {
    // Canonical codes: by length, then symbol.
    let mut order: Vec<u16> = (0..=EOS).collect();
    order.sort_by_key(|&s| (LENGTHS[usize::from(s)], s));
    let mut children = vec![[Node::Empty; 2]];
    // (depth, all bits ones) of each inner node: where padding may end.
    let mut shape = vec![(0u8, true)];
    let (mut code, mut len) = (0u32, LENGTHS[usize::from(order[0])]);
    for (k, &sym) in order.iter().enumerate() {
        let l = LENGTHS[usize::from(sym)];
        if k > 0 {
            code = (code + 1) << (l - len);
        }
        len = l;
        let mut node = 0usize;
        for depth in (0..l).rev() {
            let bit = ((code >> depth) & 1) as usize;
            if depth == 0 {
                children[node][bit] = Node::Leaf(sym);
                break;
            }
            node = match children[node][bit] {
                Node::Inner(n) => usize::from(n),
                _ => {
                    let n = children.len();
                    children.push([Node::Empty; 2]);
                    let (d, ones) = shape[node];
                    shape.push((d + 1, ones && bit == 1));
                    children[node][bit] = Node::Inner(n as u8);
                    n
                }
            };
        }
    }
    let mut steps = vec![0u32; children.len() * 16];
    for state in 0..children.len() {
        for nibble in 0..16u32 {
            let (mut node, mut step) = (state, 0u32);
            for shift in (0..4).rev() {
                match children[node][((nibble >> shift) & 1) as usize] {
                    Node::Inner(n) => node = usize::from(n),
                    Node::Leaf(EOS) | Node::Empty => step |= FAIL,
                    Node::Leaf(sym) => {
                        step |= EMIT | (u32::from(sym) << 16);
                        node = 0;
                    }
                }
            }
            steps[state * 16 + nibble as usize] = step | node as u32;
        }
    }
    let mut bytes = vec![0u16; children.len() * 256];
    for state in 0..children.len() {
        for byte in 0..256usize {
            let high = steps[state * 16 + (byte >> 4)];
            let low = steps[(high & 0xff) as usize * 16 + (byte & 0xf)];
            let count = (high & EMIT) / EMIT + (low & EMIT) / EMIT;
            let fail = if (high | low) & FAIL != 0 { 1 << 10 } else { 0 };
            bytes[state * 256 + byte] = (low & 0xff) as u16 | (count << 8) as u16 | fail;
        }
    }
    let mut accept = [false; 256];
    for (state, &(depth, ones)) in shape.iter().enumerate() {
        accept[state] = state == 0 || (ones && depth <= 7);
    }
    Automaton {
        steps,
        bytes,
        accept,
    }
}

/// Appends the decoded `src` to `out`.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let automaton = automaton();
    // The shortest code is five bits: at most 8/5 of the input comes out.
    out.reserve(src.len() * 8 / 5 + 1);
    let mut state = 0usize;
    for &byte in src {
        for nibble in [byte >> 4, byte & 0xf] {
            let step = automaton.steps[state * 16 + usize::from(nibble)];
            if step & (EMIT | FAIL) != 0 {
                if step & FAIL != 0 {
                    return Err(BadHuffman);
                }
                out.push((step >> 16) as u8);
            }
            state = (step & 0xff) as usize;
        }
    }
    if automaton.accept[state] {
        Ok(())
    } else {
        Err(BadHuffman)
    }
}

/// How many bytes `src` decodes to, checking it as `decode` does, a byte a step.
pub fn count(src: &[u8]) -> Result<usize, BadHuffman> {
    let automaton = automaton();
    let (mut state, mut n, mut fail) = (0usize, 0usize, 0u16);
    for &byte in src {
        let step = automaton.bytes[state * 256 + usize::from(byte)];
        n += usize::from((step >> 8) & 3);
        fail |= step;
        state = usize::from(step & 0xff);
    }
    if fail & (1 << 10) == 0 && automaton.accept[state] {
        Ok(n)
    } else {
        Err(BadHuffman)
    }
}

/// Encodes `bytes` (herd sends its own literals unencoded: for tests and fixtures).
pub fn encode(bytes: &[u8]) -> Vec<u8> {
    static CODES: OnceLock<Vec<(u32, u8)>> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        // Canonical codes: by length, then symbol, as `build` walks them.
        let mut order: Vec<u16> = (0..=EOS).collect();
        order.sort_by_key(|&s| (LENGTHS[usize::from(s)], s));
        let mut codes = vec![(0u32, 0u8); order.len()];
        let (mut code, mut len) = (0u32, LENGTHS[usize::from(order[0])]);
        for (k, &sym) in order.iter().enumerate() {
            let l = LENGTHS[usize::from(sym)];
            if k > 0 {
                code = (code + 1) << (l - len);
            }
            len = l;
            codes[usize::from(sym)] = (code, l);
        }
        codes
    });
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u64, 0u32);
    for &b in bytes {
        let (code, len) = codes[usize::from(b)];
        acc = acc << len | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        // Padding: the most significant bits of EOS, all ones.
        out.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc_7541_appendix_c_4_and_c_6_strings_decode() {
        let cases = [
            ("f1e3 c2e5 f23a 6ba0 ab90 f4ff", "www.example.com"),
            ("a8eb 1064 9cbf", "no-cache"),
            ("25a8 49e9 5ba9 7d7f", "custom-key"),
            ("25a8 49e9 5bb8 e8b4 bf", "custom-value"),
            ("6402", "302"),
            ("aec3 771a 4b", "private"),
            (
                "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
                "Mon, 21 Oct 2013 20:13:21 GMT",
            ),
            (
                "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
                "https://www.example.com",
            ),
        ];
        for (coded, plain) in cases {
            let mut out = Vec::new();
            decode(&hex(coded), &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), plain);
            assert_eq!(count(&hex(coded)), Ok(plain.len()));
            assert_eq!(encode(plain.as_bytes()), hex(coded), "{plain}");
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        decode(&encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
        assert_eq!(count(&encode(&all)), Ok(256));
    }

    #[test]
    fn padding_longer_than_seven_bits_or_not_ones_or_eos_is_refused() {
        let mut out = Vec::new();
        // 'a' is 00011 (five bits): three one-bits of padding end it.
        assert_eq!(decode(&[0b0001_1111], &mut out), Ok(()));
        assert_eq!(out, b"a");
        // Padding with a zero in it.
        assert_eq!(decode(&[0b0001_1011], &mut out), Err(BadHuffman));
        // A whole byte of ones after a symbol's end: eight bits of padding.
        assert_eq!(decode(&[0b0001_1111, 0xff], &mut out), Err(BadHuffman));
        // EOS itself (thirty one-bits).
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xff], &mut out), Err(BadHuffman));
        for bad in [
            &[0b0001_1011][..],
            &[0b0001_1111, 0xff],
            &[0xff, 0xff, 0xff, 0xff],
        ] {
            assert_eq!(count(bad), Err(BadHuffman));
        }
    }
}
