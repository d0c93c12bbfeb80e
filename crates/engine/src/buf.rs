//! [`Buf`]: a byte buffer held in 8 bytes, for the buffers a connection or a response mostly
//! leaves empty (ten thousand connections each hold a few). `ThinVec<u8>` held them in 8
//! bytes too, but its `extend_from_slice` pushes byte by byte (its length lives in the heap
//! block and is stored at every push): ~8 instructions a byte, 900 per request written in a
//! pipelined batch (callgrind), where this is one copy.

use std::ops::{Deref, DerefMut};

/// A byte buffer: nothing allocated until the first byte, then a `Vec` kept (and reused after
/// [`Buf::clear`]) for the life of its owner.
// The box is the point: 8 bytes held where a `Vec` is 24, for a buffer mostly empty.
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default)]
pub struct Buf(Option<Box<Vec<u8>>>);

impl Buf {
    pub const fn new() -> Self {
        Buf(None)
    }

    /// Appends `bytes` in one copy.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.0
            .get_or_insert_with(|| Box::new(Vec::with_capacity(bytes.len())))
            .extend_from_slice(bytes);
    }

    /// Empties it, keeping what it allocated.
    #[inline]
    pub fn clear(&mut self) {
        if let Some(v) = self.0.as_mut() {
            v.clear();
        }
    }

    /// Its bytes.
    pub fn as_slice(&self) -> &[u8] {
        self
    }

    /// Drops its first `n` bytes.
    pub fn consume(&mut self, n: usize) {
        if let Some(v) = self.0.as_mut() {
            v.drain(..n.min(v.len()));
        }
    }
}

impl Deref for Buf {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.0.as_deref().map_or(&[], |v| v.as_slice())
    }
}

impl DerefMut for Buf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        match self.0.as_deref_mut() {
            Some(v) => v.as_mut_slice(),
            None => &mut [],
        }
    }
}

impl AsRef<[u8]> for Buf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Equal when their bytes are (what it allocated aside).
impl PartialEq for Buf {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Buf {}

impl<const N: usize> PartialEq<&[u8; N]> for Buf {
    fn eq(&self, other: &&[u8; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<&[u8]> for Buf {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

impl PartialEq<Vec<u8>> for Buf {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl From<Buf> for Vec<u8> {
    fn from(b: Buf) -> Self {
        b.0.map_or_else(Vec::new, |v| *v)
    }
}

impl From<Vec<u8>> for Buf {
    fn from(v: Vec<u8>) -> Self {
        Buf((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl From<&[u8]> for Buf {
    fn from(v: &[u8]) -> Self {
        let mut b = Buf::new();
        b.extend_from_slice(v);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::Buf;

    #[test]
    fn a_buf_appends_clears_and_consumes_its_front_in_8_bytes() {
        assert_eq!(std::mem::size_of::<Buf>(), 8);
        let mut b = Buf::new();
        assert!(b.is_empty());
        b.extend_from_slice(b"GET / ");
        b.extend_from_slice(b"HTTP/1.1\r\n");
        assert_eq!(&b[..], b"GET / HTTP/1.1\r\n");
        b.consume(4);
        assert_eq!(&b[..], b"/ HTTP/1.1\r\n");
        b.consume(100);
        assert!(b.is_empty());
        b.extend_from_slice(b"x");
        b.clear();
        assert_eq!(b.len(), 0);
        assert_eq!(Buf::from(b"ab".as_slice()), Buf::from(b"ab".to_vec()));
    }
}
