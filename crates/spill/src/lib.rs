//! What a long run measured long ago, kept out of memory until the result is built.
//!
//! A sealed second of the timeline is a few hundred bytes in memory, a watched process's reading
//! a hundred; a day of them is tens of megabytes that nothing reads before the end (the live
//! outputs show the last minutes). A [`Spill`] takes such items in order, encodes them compactly
//! (varints: most counters are zero or small), and writes them in chunks to an unnamed temporary
//! file, which the system removes when the spill is dropped, on an error, or when the process is
//! killed. [`Spill::read_back`] gives them back in order.
//!
//! Nothing measured is lost to the disk: an item leaves memory only as encoded bytes, and a chunk
//! the file would not take (no temporary directory, a full disk) stays in memory, encoded.
//!
//! ```
//! use herd_spill::{get_varint, put_varint, Spill, Spilled};
//! struct Count(u64);
//! impl Spilled for Count {
//!     fn encode(&self, out: &mut Vec<u8>) {
//!         put_varint(out, self.0);
//!     }
//!     fn decode(input: &mut &[u8]) -> Option<Self> {
//!         get_varint(input).map(Count)
//!     }
//! }
//! let mut spill = Spill::default();
//! for i in 0..3 {
//!     spill.push(&Count(i));
//! }
//! let back: Vec<u64> = spill.read_back().unwrap().into_iter().map(|c| c.0).collect();
//! assert_eq!(back, [0, 1, 2]);
//! ```

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use thiserror::Error;

/// Encoded bytes kept in memory before they go to the file as one write: a few minutes of
/// seconds, so a run shorter than that never makes a file.
const CHUNK: usize = 16 * 1024;

#[derive(Debug, Error)]
pub enum SpillError {
    #[error("cannot read back what the run kept on disk: {0}")]
    Read(#[source] io::Error),
    #[error("what the run kept on disk does not read back (item {0} of {1})")]
    Corrupt(u64, u64),
}

/// An item that can leave memory as bytes and come back equal.
pub trait Spilled: Sized {
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads one item from the front of `input`, advancing it; `None` when the bytes end short.
    fn decode(input: &mut &[u8]) -> Option<Self>;
}

/// Items of type `T`, in the order pushed, out of memory. See the module documentation.
pub struct Spill<T> {
    file: Option<File>,
    /// Bytes the file holds for sure (a write that failed may have left a torn tail after them).
    written: u64,
    /// The file could not be made or written: every item stays in `pending`.
    no_file: bool,
    pending: Vec<u8>,
    count: u64,
    item: PhantomData<fn() -> T>,
}

impl<T> Default for Spill<T> {
    fn default() -> Self {
        Spill {
            file: None,
            written: 0,
            no_file: false,
            pending: Vec::new(),
            count: 0,
            item: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Spill<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("count", &self.count)
            .field("on_disk", &self.written)
            .field("in_memory", &self.pending.len())
            .finish()
    }
}

impl<T: Spilled> Spill<T> {
    pub fn push(&mut self, item: &T) {
        item.encode(&mut self.pending);
        self.count += 1;
        if self.pending.len() >= CHUNK && !self.no_file {
            self.write_pending();
        }
    }

    /// Items pushed so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of encoded items still in memory (a chunk not yet written, or all of them when
    /// there is no file).
    pub fn held_bytes(&self) -> usize {
        self.pending.capacity()
    }

    fn write_pending(&mut self) {
        if self.file.is_none() {
            match tempfile::tempfile() {
                Ok(f) => self.file = Some(f),
                Err(_) => {
                    self.no_file = true;
                    return;
                }
            }
        }
        let Some(file) = self.file.as_mut() else {
            return;
        };
        match file.write_all(&self.pending) {
            Ok(()) => {
                self.written += self.pending.len() as u64;
                self.pending.clear();
            }
            // The chunk stays in memory; what the file holds before it is still whole.
            Err(_) => self.no_file = true,
        }
    }

    /// Every item pushed, in order; the file is gone afterwards.
    pub fn read_back(self) -> Result<Vec<T>, SpillError> {
        let mut bytes = Vec::with_capacity(self.written as usize + self.pending.len());
        if let Some(mut file) = self.file {
            file.seek(SeekFrom::Start(0)).map_err(SpillError::Read)?;
            file.take(self.written)
                .read_to_end(&mut bytes)
                .map_err(SpillError::Read)?;
        }
        bytes.extend_from_slice(&self.pending);
        let mut input = bytes.as_slice();
        let mut out = Vec::with_capacity(self.count as usize);
        for i in 0..self.count {
            out.push(T::decode(&mut input).ok_or(SpillError::Corrupt(i, self.count))?);
        }
        Ok(out)
    }
}

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 varint from the front of `input`.
pub fn get_varint(input: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input.split_first()?;
        *input = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct N(u64);

    impl Spilled for N {
        fn encode(&self, out: &mut Vec<u8>) {
            put_varint(out, self.0);
        }
        fn decode(input: &mut &[u8]) -> Option<Self> {
            get_varint(input).map(N)
        }
    }

    #[test]
    fn items_come_back_in_order_across_chunks_on_disk() {
        let mut spill = Spill::default();
        let values: Vec<u64> = (0..20_000u64).map(|i| i * i * 977).collect();
        for &v in &values {
            spill.push(&N(v));
        }
        assert!(spill.written > 0, "nothing went to the file");
        assert!(spill.pending.len() < CHUNK);
        let back: Vec<u64> = spill
            .read_back()
            .unwrap()
            .into_iter()
            .map(|n| n.0)
            .collect();
        assert_eq!(back, values);
    }

    #[test]
    fn varints_round_trip_at_the_edges() {
        for v in [0, 1, 127, 128, 16_383, 16_384, u64::MAX / 3, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut input = out.as_slice();
            assert_eq!(get_varint(&mut input), Some(v));
            assert!(input.is_empty());
        }
        assert_eq!(get_varint(&mut [0x80u8].as_slice()), None);
    }
}
