//! herd's own HPACK decoder (RFC 7541) for the header blocks a server sends, with a twist: it
//! decodes only the fields its caller wants. A field it is told to skip costs its length
//! prefixes, unless the server inserts it in the dynamic table, where its name and value are
//! decoded into the table's own buffer (later blocks may name it). Nothing is allocated per
//! field or per block once the buffers have grown to the table.

use std::collections::VecDeque;

use crate::huffman;

/// RFC 7541 Appendix A.
const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// An entry's overhead in the table's size (RFC 7541 section 4.1).
const ENTRY_OVERHEAD: usize = 32;

/// The dynamic table's size when SETTINGS say nothing (RFC 9113 section 6.5.2); herd
/// advertises no other.
pub(crate) const DEFAULT_TABLE_SIZE: usize = 4096;

/// Why a header block is not valid HPACK: a COMPRESSION_ERROR for the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HpackError {
    #[error("a header block ends inside a field")]
    Truncated,
    #[error("an HPACK integer is too large")]
    Overflow,
    #[error("a header field names index {0}, which neither table holds")]
    Index(usize),
    #[error("a dynamic table size update asks {asked} bytes, above the {limit} herd allows")]
    TableSize { asked: usize, limit: usize },
    #[error("a dynamic table size update comes after a header field")]
    LateSizeUpdate,
    #[error("a Huffman-coded string is malformed")]
    Huffman,
}

impl From<huffman::BadHuffman> for HpackError {
    fn from(_: huffman::BadHuffman) -> HpackError {
        HpackError::Huffman
    }
}

/// Where an entry's bytes sit in the table's buffer: its name decoded, then its value as
/// the server sent it (Huffman-coded or not: decoded only if a later field that names it is
/// wanted), and the value's decoded length, which the table's size counts.
#[derive(Debug, Clone, Copy)]
struct Entry {
    at: usize,
    name: usize,
    value: usize,
    decoded: usize,
    huffman: bool,
}

/// The dynamic table: entries' names and values back to back in one buffer, newest last;
/// evicting moves only the start, and the live bytes (at most the table's size) are moved
/// to the front when the buffer would have to grow.
#[derive(Debug, Clone)]
struct Table {
    buf: Vec<u8>,
    /// Newest first.
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
    /// Counts the changes to the entries: a block's fields may be remembered while it holds.
    generation: u64,
}

impl Table {
    fn new(max: usize) -> Table {
        Table {
            buf: Vec::with_capacity(2 * max + 256),
            entries: VecDeque::with_capacity(max / ENTRY_OVERHEAD + 1),
            size: 0,
            max,
            generation: 0,
        }
    }

    /// The entry `i` (0 the newest): its name, and its value as sent.
    fn get(&self, i: usize) -> Option<(&[u8], Literal<'_>)> {
        let e = self.entries.get(i)?;
        let name = &self.buf[e.at..e.at + e.name];
        let value = Literal {
            huffman: e.huffman,
            bytes: &self.buf[e.at + e.name..e.at + e.name + e.value],
        };
        Some((name, value))
    }

    fn evict_to(&mut self, max: usize) {
        while self.size > max {
            let Some(e) = self.entries.pop_back() else {
                break;
            };
            self.size -= e.name + e.decoded + ENTRY_OVERHEAD;
        }
    }

    fn resize(&mut self, max: usize) {
        self.generation += 1;
        self.max = max;
        self.evict_to(max);
    }

    /// Makes room for `more` bytes at the buffer's end without growing it, if it can.
    fn compact(&mut self, more: usize) {
        if self.buf.len() + more <= self.buf.capacity() {
            return;
        }
        let first = self.entries.back().map_or(self.buf.len(), |e| e.at);
        self.buf.copy_within(first.., 0);
        self.buf.truncate(self.buf.len() - first);
        for e in &mut self.entries {
            e.at -= first;
        }
    }

    /// Takes the bytes just appended at `entry.at` as the newest entry, evicting what it
    /// displaces (all of it when it is larger than the table, and then it is not kept,
    /// though its bytes stay readable until the next insert).
    fn commit(&mut self, entry: Entry) {
        self.generation += 1;
        let size = entry.name + entry.decoded + ENTRY_OVERHEAD;
        if size > self.max {
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max - size);
        self.entries.push_front(entry);
        self.size += size;
    }

    /// Whether entries `i` and `j` hold the same name and the same value as sent.
    fn same(&self, i: usize, j: usize) -> bool {
        let (a, b) = (self.entries[i], self.entries[j]);
        let bytes = |e: Entry| &self.buf[e.at..e.at + e.name + e.value];
        (a.name, a.value, a.huffman) == (b.name, b.value, b.huffman) && bytes(a) == bytes(b)
    }

    fn entry_size(&self, i: usize) -> usize {
        let e = self.entries[i];
        e.name + e.decoded + ENTRY_OVERHEAD
    }
}

/// One connection's decoder for the header blocks coming in.
#[derive(Debug, Clone)]
pub(crate) struct Decoder {
    table: Table,
    /// The most a dynamic table size update may ask: SETTINGS_HEADER_TABLE_SIZE as advertised.
    limit: usize,
    /// Decoded names and values of fields kept out of the table.
    name: Vec<u8>,
    value: Vec<u8>,
    /// What the last block did: whether it read the dynamic table (an index above the static
    /// table's, or a size update), and how many entries it inserted.
    last_read_table: bool,
    last_inserts: usize,
}

/// A string literal in a block: its bytes as sent, Huffman-coded or not.
#[derive(Clone, Copy)]
struct Literal<'a> {
    huffman: bool,
    bytes: &'a [u8],
}

impl Decoder {
    pub(crate) fn new(limit: usize) -> Decoder {
        Decoder {
            table: Table::new(limit),
            limit,
            name: Vec::with_capacity(64),
            value: Vec::with_capacity(256),
            last_read_table: true,
            last_inserts: 0,
        }
    }

    /// Changes with every change to the dynamic table.
    pub(crate) fn generation(&self) -> u64 {
        self.table.generation
    }

    /// Whether decoding the last block again would give the same fields and leave the table
    /// as it is now; then, while [`generation`](Self::generation) stays, the same bytes
    /// decode to the same fields without being decoded.
    ///
    /// A block that reads nothing from the dynamic table gives fields that depend on its
    /// bytes alone. Its `p` insertions, made again, leave the table unchanged when the
    /// table is already what endless repeats of them leave: its `n` entries are the block's
    /// `p` entries over and over (newest first, entry `i` is entry `i % p`), and the entry
    /// that would come before its oldest (entry `n % p`) does not fit beside them. Inserting
    /// evicts oldest first until the new entry fits, so the table after each insertion is
    /// the longest run of the latest entries that fits: for a table of repeats, that is the
    /// same `n` entries again. A table with fewer entries than the block inserted is the
    /// longest run of the block's last entries that fits, whatever came before: the same
    /// again too.
    pub(crate) fn repeats(&self) -> bool {
        let p = self.last_inserts;
        if self.last_read_table {
            return false;
        }
        if p == 0 {
            return true;
        }
        let table = &self.table;
        let n = table.entries.len();
        if n < p {
            // The block evicted some of its own entries: the table is the longest run of
            // its last entries that fits (none, when its last did not fit at all), which
            // the block leaves again whatever came before it.
            return true;
        }
        // Oldest first: after the head changed, the old entries are at the back.
        (p..n).rev().all(|i| table.same(i, i % p))
            && table.size + table.entry_size(n % p) > table.max
    }

    /// The dynamic table's size as RFC 7541 counts it (section 4.1).
    #[cfg(test)]
    pub(crate) fn table_size(&self) -> usize {
        self.table.size
    }

    /// The dynamic table's entries, newest first.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..self.table.entries.len())
            .filter_map(|i| self.table.get(i))
            .map(|(n, v)| {
                let mut value = Vec::new();
                put(&mut value, v).unwrap();
                (n.to_vec(), value)
            })
            .collect()
    }

    /// Decodes one whole header block. `want(name)` says whether a field is wanted; only
    /// wanted fields reach `field(name, value)`, in order. After an error the table is
    /// lost, and with it the connection.
    pub(crate) fn decode(
        &mut self,
        mut block: &[u8],
        mut want: impl FnMut(&[u8]) -> bool,
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut fields = false;
        // Until the block is whole, it is not one to remember.
        self.last_read_table = true;
        let (mut read_table, mut inserts) = (false, 0);
        while let Some(&first) = block.first() {
            if first & 0x80 != 0 {
                let index = integer(&mut block, 7)?;
                read_table |= index > STATIC.len();
                let (name, value) = lookup(&self.table, index)?;
                if want(name) {
                    field(name, open(value, &mut self.value)?);
                }
            } else if first & 0xc0 == 0x40 {
                let index = integer(&mut block, 6)?;
                read_table |= index > STATIC.len();
                inserts += 1;
                self.insert(&mut block, index, &mut want, &mut field)?;
            } else if first & 0xe0 == 0x20 {
                if fields {
                    return Err(HpackError::LateSizeUpdate);
                }
                let asked = integer(&mut block, 5)?;
                if asked > self.limit {
                    let limit = self.limit;
                    return Err(HpackError::TableSize { asked, limit });
                }
                self.table.resize(asked);
                read_table = true;
                continue;
            } else {
                // Without indexing (0000) or never indexed (0001): the same to a decoder.
                let index = integer(&mut block, 4)?;
                read_table |= index > STATIC.len();
                self.literal(&mut block, index, &mut want, &mut field)?;
            }
            fields = true;
        }
        (self.last_read_table, self.last_inserts) = (read_table, inserts);
        Ok(())
    }

    /// A literal kept out of the table: decoded only when wanted.
    fn literal(
        &mut self,
        block: &mut &[u8],
        index: usize,
        want: &mut impl FnMut(&[u8]) -> bool,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let name_literal = if index == 0 {
            Some(string(block)?)
        } else {
            None
        };
        let value = string(block)?;
        let name: &[u8] = match name_literal {
            Some(Literal {
                huffman: false,
                bytes,
            }) => bytes,
            Some(Literal { bytes, .. }) => {
                self.name.clear();
                huffman::decode(bytes, &mut self.name)?;
                &self.name
            }
            None => lookup(&self.table, index)?.0,
        };
        if !want(name) {
            return Ok(());
        }
        field(name, open(value, &mut self.value)?);
        Ok(())
    }

    /// A literal with incremental indexing: decoded into the table, whether wanted or not.
    fn insert(
        &mut self,
        block: &mut &[u8],
        index: usize,
        want: &mut impl FnMut(&[u8]) -> bool,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let name_literal = if index == 0 {
            Some(string(block)?)
        } else {
            None
        };
        let value = string(block)?;
        let most = |s: Literal<'_>| {
            if s.huffman {
                s.bytes.len() * 8 / 5 + 1
            } else {
                s.bytes.len()
            }
        };
        let name_most = match name_literal {
            Some(s) => most(s),
            None => lookup(&self.table, index)?.0.len(),
        };
        // The value is kept as sent: only its decoded length is needed now.
        let decoded = if value.huffman {
            huffman::count(value.bytes)?
        } else {
            value.bytes.len()
        };
        let table = &mut self.table;
        table.compact(name_most + value.bytes.len());
        let at = table.buf.len();
        match name_literal {
            Some(s) => put(&mut table.buf, s)?,
            None if index <= 61 => table.buf.extend_from_slice(STATIC[index - 1].0),
            None => {
                let e = table.entries[index - 62];
                table.buf.extend_from_within(e.at..e.at + e.name);
            }
        }
        let name = table.buf.len() - at;
        table.buf.extend_from_slice(value.bytes);
        table.commit(Entry {
            at,
            name,
            value: value.bytes.len(),
            decoded,
            huffman: value.huffman,
        });
        let name = &table.buf[at..at + name];
        if want(name) {
            field(name, open(value, &mut self.value)?);
        }
        Ok(())
    }
}

fn lookup(table: &Table, index: usize) -> Result<(&[u8], Literal<'_>), HpackError> {
    match index {
        0 => Err(HpackError::Index(0)),
        1..=61 => {
            let (name, bytes) = STATIC[index - 1];
            let huffman = false;
            Ok((name, Literal { huffman, bytes }))
        }
        _ => table.get(index - 62).ok_or(HpackError::Index(index)),
    }
}

/// A string's bytes, decoded into `scratch` when Huffman-coded.
fn open<'a>(s: Literal<'a>, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], HpackError> {
    if !s.huffman {
        return Ok(s.bytes);
    }
    scratch.clear();
    huffman::decode(s.bytes, scratch)?;
    Ok(scratch)
}

/// Appends a string literal's bytes, decoded.
fn put(buf: &mut Vec<u8>, s: Literal<'_>) -> Result<(), HpackError> {
    if s.huffman {
        huffman::decode(s.bytes, buf)?;
    } else {
        buf.extend_from_slice(s.bytes);
    }
    Ok(())
}

/// An integer with an `n`-bit prefix (RFC 7541 section 5.1).
fn integer(block: &mut &[u8], n: u32) -> Result<usize, HpackError> {
    let (&first, mut rest) = block.split_first().ok_or(HpackError::Truncated)?;
    let max = (1usize << n) - 1;
    let mut value = usize::from(first) & max;
    if value == max {
        let mut shift = 0;
        loop {
            let (&b, more) = rest.split_first().ok_or(HpackError::Truncated)?;
            rest = more;
            // Four continuation bytes reach 2^28: more than any block or table holds.
            if shift > 21 {
                return Err(HpackError::Overflow);
            }
            value += usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
    }
    *block = rest;
    Ok(value)
}

/// A string literal (RFC 7541 section 5.2), not yet decoded.
fn string<'a>(block: &mut &'a [u8]) -> Result<Literal<'a>, HpackError> {
    let huffman = block.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = integer(block, 7)?;
    if len > block.len() {
        return Err(HpackError::Truncated);
    }
    let (bytes, rest) = block.split_at(len);
    *block = rest;
    Ok(Literal { huffman, bytes })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    type Fields = Vec<(String, String)>;

    fn pairs(list: &[(&str, &str)]) -> Fields {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn all(d: &mut Decoder, block: &[u8]) -> Result<Fields, HpackError> {
        let mut out = Vec::new();
        d.decode(
            block,
            |_| true,
            |n, v| {
                let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                out.push((s(n), s(v)));
            },
        )?;
        Ok(out)
    }

    fn table(d: &Decoder) -> Fields {
        let s = |b: Vec<u8>| String::from_utf8(b).unwrap();
        d.entries().into_iter().map(|(n, v)| (s(n), s(v))).collect()
    }

    /// RFC 7541 C.3 (plain) and C.4 (Huffman): three requests on one connection.
    #[test]
    fn rfc_7541_c_3_and_c_4_requests_decode_with_their_tables() {
        let plain = [
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ];
        let huffman = [
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ];
        let host = (":authority", "www.example.com");
        let want = [
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                host,
            ]),
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                host,
                ("cache-control", "no-cache"),
            ]),
            pairs(&[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/index.html"),
                host,
                ("custom-key", "custom-value"),
            ]),
        ];
        let tables = [
            (pairs(&[host]), 57),
            (pairs(&[("cache-control", "no-cache"), host]), 110),
            (
                pairs(&[
                    ("custom-key", "custom-value"),
                    ("cache-control", "no-cache"),
                    host,
                ]),
                164,
            ),
        ];
        for blocks in [plain, huffman] {
            let mut d = Decoder::new(DEFAULT_TABLE_SIZE);
            for (i, block) in blocks.iter().enumerate() {
                assert_eq!(all(&mut d, &hex(block)).unwrap(), want[i], "{block}");
                assert_eq!(table(&d), tables[i].0, "{block}");
                assert_eq!(d.table_size(), tables[i].1, "{block}");
            }
        }
    }

    /// RFC 7541 C.5 (plain) and C.6 (Huffman): three responses through a 256-byte table,
    /// entries evicted on the way.
    #[test]
    fn rfc_7541_c_5_and_c_6_responses_decode_with_evictions() {
        let plain = [
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
             2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
             6c65 2e63 6f6d",
            "4803 3330 37c1 c0bf",
            "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
             54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
             5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
             3d31",
        ];
        let huffman = [
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
            "4883 640e ffc1 c0bf",
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ];
        let date1 = ("date", "Mon, 21 Oct 2013 20:13:21 GMT");
        let date2 = ("date", "Mon, 21 Oct 2013 20:13:22 GMT");
        let location = ("location", "https://www.example.com");
        let private = ("cache-control", "private");
        let cookie = (
            "set-cookie",
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
        );
        let gzip = ("content-encoding", "gzip");
        let want = [
            pairs(&[(":status", "302"), private, date1, location]),
            pairs(&[(":status", "307"), private, date1, location]),
            pairs(&[(":status", "200"), private, date2, location, gzip, cookie]),
        ];
        let tables = [
            (pairs(&[location, date1, private, (":status", "302")]), 222),
            (pairs(&[(":status", "307"), location, date1, private]), 222),
            (pairs(&[cookie, gzip, date2]), 215),
        ];
        for blocks in [plain, huffman] {
            let mut d = Decoder::new(256);
            for (i, block) in blocks.iter().enumerate() {
                assert_eq!(all(&mut d, &hex(block)).unwrap(), want[i], "{block}");
                assert_eq!(table(&d), tables[i].0, "{block}");
                assert_eq!(d.table_size(), tables[i].1, "{block}");
            }
        }
    }

    #[test]
    fn unwanted_fields_are_skipped_and_wanted_ones_still_decode() {
        let mut d = Decoder::new(256);
        let first = hex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        let mut seen = Vec::new();
        d.decode(
            &first,
            |n| n == b"date",
            |n, v| seen.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(
            seen,
            [(b"date".to_vec(), b"Mon, 21 Oct 2013 20:13:21 GMT".to_vec())]
        );
        // The table is whole though only one field was wanted: the next block names it.
        assert_eq!(d.table_size(), 222);
        // A literal without indexing, unwanted, with a malformed Huffman value: not decoded.
        let mut count = 0;
        d.decode(&[0x0f, 0x12, 0x81, 0x00], |_| false, |_, _| count += 1)
            .unwrap();
        assert_eq!(count, 0);
    }

    #[test]
    fn size_updates_are_bounded_and_only_at_a_blocks_start() {
        let mut d = Decoder::new(4096);
        // 0x3f e1 1f = 5-bit prefix 31 + 0x61 + (0x1f << 7) = 4096.
        assert!(all(&mut d, &[0x3f, 0xe1, 0x1f]).is_ok());
        assert_eq!(
            all(&mut d, &[0x3f, 0xe2, 0x1f]),
            Err(HpackError::TableSize {
                asked: 4097,
                limit: 4096
            })
        );
        assert_eq!(all(&mut d, &[0x82, 0x20]), Err(HpackError::LateSizeUpdate));
        // A size update evicts down to it.
        let mut d = Decoder::new(4096);
        all(&mut d, &hex("4005 6162 6364 6503 7879 7a")).unwrap();
        assert_eq!(d.table_size(), 5 + 3 + 32);
        all(&mut d, &[0x20]).unwrap();
        assert_eq!(d.table_size(), 0);
        assert_eq!(all(&mut d, &[0xbe]), Err(HpackError::Index(62)));
    }

    /// nginx's response head for a static file (HTTP/2, h2c), as captured: `:status: 200`
    /// indexed; server, date, content-type, content-length and last-modified as literals
    /// with incremental indexing (the last four's values and the server's Huffman-coded);
    /// etag and accept-ranges as literals without indexing, their names Huffman-coded.
    pub(crate) const NGINX: &str =
        "887689aa6355e580ae212e1f6196dd6d5f4a09f5349fba82009c5020b8d86e36f298b46f\
        5f87497ca589d34d1f5c033631356c96dd6d5f4a09f5349fba82009c5020b8d86e36f298b46f00832a4737\
        8bfe5c8c0403242ac271dfe7008919085ad2b583aa62a3848fd24a8f";

    /// A dynamic table size update to `size` (RFC 7541 section 6.3): a 5-bit prefix under 001.
    fn size_update(size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        crate::trim::integer(&mut out, 5, 0x20, size);
        out
    }

    /// Whether decoding `block` again gives `fields` and leaves the table as it is: what
    /// `repeats` promises.
    fn fixed_point(d: &Decoder, block: &[u8], fields: &Fields) -> bool {
        let mut again = d.clone();
        all(&mut again, block).as_ref() == Ok(fields)
            && table(&again) == table(d)
            && again.table_size() == d.table_size()
    }

    /// The same block over and over, as nginx sends its static file's head: once the table
    /// holds nothing but its entries, as many as fit, a block is known to repeat (and only
    /// then: a block that would still grow the table, or meets older entries, is not).
    #[test]
    fn a_block_repeats_once_the_table_is_full_of_its_entries() {
        let literal = |index: u8, value: &[u8]| {
            let coded = huffman::encode(value);
            let mut out = vec![0x40 | index, 0x80 | coded.len() as u8];
            out.extend_from_slice(&coded);
            out
        };
        let nginx = hex(NGINX);
        let mixed = [
            vec![0x88],
            literal(54, b"nginx/1.24.0"),
            literal(33, b"Sun, 29 Nov 2026 10:50:00 GMT"),
            vec![0x0f, 0x0d, 0x03],
            b"615".to_vec(),
        ]
        .concat();
        let small = literal(33, b"x");
        for block in [&nginx, &mixed, &small] {
            for (size, older) in [0, 40, 60, 100, 256, 1000, 4096]
                .into_iter()
                .flat_map(|size| [(size, true), (size, false)])
            {
                let mut d = Decoder::new(4096);
                if older {
                    // A table left with an older entry, then resized.
                    all(&mut d, &hex("4005 6162 6364 6503 7879 7a")).unwrap();
                    all(&mut d, &size_update(size)).unwrap();
                } else {
                    all(&mut d, &size_update(size)).unwrap();
                }
                let mut first = None;
                for round in 0..400 {
                    let fields = all(&mut d, block).unwrap();
                    let fixed = fixed_point(&d, block, &fields);
                    if d.repeats() {
                        assert!(fixed, "size {size}, round {round}");
                        first.get_or_insert(round);
                    } else if round > 200 {
                        // Long past filling the table: known to repeat.
                        panic!("size {size}, round {round}: not known to repeat");
                    }
                }
                assert!(first.is_some(), "size {size}");
            }
        }
    }

    /// A block that reads the dynamic table, or resizes it, is never remembered; one that
    /// neither reads nor inserts always is.
    #[test]
    fn blocks_that_read_the_table_are_not_known_to_repeat() {
        let mut d = Decoder::new(4096);
        all(&mut d, &hex("4005 6162 6364 6503 7879 7a")).unwrap();
        for block in [
            &[0xbe][..],
            &[0x7e, 0x01, b'v'],
            &[0x0f, 0x2f, 0x01, b'v'],
            &[0x20],
        ] {
            all(&mut d, &hex("4005 6162 6364 6503 7879 7a")).unwrap();
            all(&mut d, block).unwrap();
            assert!(!d.repeats(), "{block:02x?}");
        }
        all(
            &mut d,
            &[0x88, 0x0f, 0x0d, 0x01, b'5', 0x00, 0x01, b'a', 0x01, b'b'],
        )
        .unwrap();
        assert!(d.repeats());
    }

    /// A tiny deterministic generator: tests reproduce.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn random_bytes_are_an_error_or_fields_never_a_panic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut errors = 0;
        for _ in 0..20_000 {
            let mut d = Decoder::new(4096);
            let len = rng.below(64) as usize;
            let block: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            errors += usize::from(all_bytes(&mut d, &block).is_err());
        }
        assert!(errors > 10_000, "{errors}");
    }

    fn all_bytes(d: &mut Decoder, block: &[u8]) -> Result<usize, HpackError> {
        let mut n = 0;
        d.decode(block, |_| true, |_, _| n += 1)?;
        Ok(n)
    }

    /// nghttp2's own deflater encodes random header lists through random table sizes, many
    /// blocks on one connection: herd's decoder must give back exactly its input, and keep
    /// a table of the same size (the deflater's indices would be wrong otherwise).
    #[test]
    fn nghttp2s_deflater_round_trips_through_random_lists_and_table_sizes() {
        use libnghttp2_sys as sys;
        let names: [&[u8]; 8] = [
            b"date",
            b"content-type",
            b"x-custom",
            b":status",
            b"set-cookie",
            b"etag",
            b"a",
            b"content-length",
        ];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut deflater = std::ptr::null_mut();
        // SAFETY: nghttp2 writes a new deflater's address or fails.
        assert_eq!(
            unsafe { sys::nghttp2_hd_deflate_new(&mut deflater, 4096) },
            0
        );
        let mut d = Decoder::new(4096);
        let mut buf = vec![0u8; 1 << 16];
        for round in 0..3000 {
            if rng.below(10) == 0 {
                let size = [0, 1, 40, 100, 256, 1000, 4096][rng.below(7) as usize];
                // SAFETY: between blocks; the next block starts with the size update.
                let rv = unsafe { sys::nghttp2_hd_deflate_change_table_size(deflater, size) };
                assert_eq!(rv, 0);
            }
            let mut list: Vec<(Vec<u8>, Vec<u8>, u8)> = Vec::new();
            for _ in 0..rng.below(12) {
                let name = if rng.below(4) == 0 {
                    (0..1 + rng.below(20))
                        .map(|_| b'a' + rng.below(26) as u8)
                        .collect()
                } else {
                    names[rng.below(names.len() as u64) as usize].to_vec()
                };
                let value: Vec<u8> = if rng.below(3) == 0 {
                    (0..rng.below(300)).map(|_| rng.next() as u8).collect()
                } else {
                    let n = rng.below(8);
                    format!("value-{n}").into_bytes()
                };
                let flags = if rng.below(8) == 0 { 1 } else { 0 };
                list.push((name, value, flags));
            }
            let nva: Vec<sys::nghttp2_nv> = list
                .iter()
                .map(|(n, v, f)| sys::nghttp2_nv {
                    name: n.as_ptr().cast_mut(),
                    value: v.as_ptr().cast_mut(),
                    namelen: n.len(),
                    valuelen: v.len(),
                    flags: *f,
                })
                .collect();
            // SAFETY: `buf` and `nva` are valid for the call.
            let n = unsafe {
                sys::nghttp2_hd_deflate_hd(
                    deflater,
                    buf.as_mut_ptr(),
                    buf.len(),
                    nva.as_ptr(),
                    nva.len(),
                )
            };
            assert!(n >= 0, "deflate: {n}");
            let mut got = Vec::new();
            d.decode(
                &buf[..n as usize],
                |_| true,
                |n, v| got.push((n.to_vec(), v.to_vec())),
            )
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let want: Vec<(Vec<u8>, Vec<u8>)> = list.into_iter().map(|(n, v, _)| (n, v)).collect();
            assert_eq!(got, want, "round {round}");
            if d.repeats() {
                let fields = got
                    .iter()
                    .map(|(n, v)| (n.to_vec(), v.to_vec()))
                    .collect::<Vec<_>>();
                let mut again = d.clone();
                let mut twice = Vec::new();
                again
                    .decode(
                        &buf[..n as usize],
                        |_| true,
                        |n, v| twice.push((n.to_vec(), v.to_vec())),
                    )
                    .unwrap();
                assert_eq!(twice, fields, "round {round}");
                assert_eq!(again.entries(), d.entries(), "round {round}");
            }
            // SAFETY: a read of the deflater's state.
            let size = unsafe { sys::nghttp2_hd_deflate_get_dynamic_table_size(deflater) };
            assert_eq!(d.table_size(), size, "round {round}");
        }
        // SAFETY: made above, freed once.
        unsafe { sys::nghttp2_hd_deflate_del(deflater) };
    }
}
