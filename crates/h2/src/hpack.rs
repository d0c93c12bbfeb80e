//! HPACK decoding on its own, outside a session: nghttp2's header-block inflater, for a reader
//! that follows someone else's HTTP/2 connection (herd's proxy matching streams by method and
//! path). Header blocks must be fed in the order they were sent: the dynamic table is the
//! connection's.

use std::ptr::NonNull;

use libnghttp2_sys as sys;

use crate::H2Error;

/// Largest dynamic table this inflater keeps. A decoder may keep more entries than its encoder
/// (indices count from the newest, so what it keeps beyond the encoder's table is never
/// named); a larger bound only accepts encoders that were allowed more.
const TABLE_MAX: usize = 64 * 1024;

/// One direction's HPACK decoder (RFC 7541).
pub struct Inflater {
    raw: NonNull<sys::nghttp2_hd_inflater>,
}

// SAFETY: the inflater is owned by one `Inflater` and touched only through `&mut self`;
// nghttp2 keeps no thread-local state.
unsafe impl Send for Inflater {}

impl Inflater {
    pub fn new() -> Result<Inflater, H2Error> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: nghttp2 writes a new inflater's address into `raw` or returns an error.
        let rv = unsafe { sys::nghttp2_hd_inflate_new(&mut raw) };
        if rv != 0 {
            return Err(H2Error::lib("nghttp2_hd_inflate_new", rv));
        }
        let raw = NonNull::new(raw).ok_or(H2Error::lib("nghttp2_hd_inflate_new", rv))?;
        // SAFETY: a new inflater is between header blocks, where a size change is allowed.
        let rv = unsafe { sys::nghttp2_hd_inflate_change_table_size(raw.as_ptr(), TABLE_MAX) };
        let inflater = Inflater { raw };
        if rv != 0 {
            return Err(H2Error::lib("nghttp2_hd_inflate_change_table_size", rv));
        }
        Ok(inflater)
    }

    /// Decodes one whole header block (a HEADERS frame's fragment and its CONTINUATIONs',
    /// joined), handing each field to `field`. After an error the connection's table is lost.
    pub fn inflate(
        &mut self,
        mut block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), H2Error> {
        loop {
            let mut nv = sys::nghttp2_nv {
                name: std::ptr::null_mut(),
                value: std::ptr::null_mut(),
                namelen: 0,
                valuelen: 0,
                flags: 0,
            };
            let mut flags = 0;
            // SAFETY: `block` is valid for its length during the call; `nv` and `flags` are
            // written by nghttp2 before it returns.
            let rv = unsafe {
                sys::nghttp2_hd_inflate_hd3(
                    self.raw.as_ptr(),
                    &mut nv,
                    &mut flags,
                    block.as_ptr(),
                    block.len(),
                    1,
                )
            };
            if rv < 0 {
                return Err(H2Error::lib("nghttp2_hd_inflate_hd3", rv as i32));
            }
            block = &block[rv as usize..];
            let flags = flags as u32;
            if flags & sys::NGHTTP2_HD_INFLATE_EMIT != 0 {
                // SAFETY: an emitted pair's pointers are valid, for their lengths, until the
                // next call into the inflater; the slices do not outlive this iteration.
                let (name, value) = unsafe {
                    (
                        std::slice::from_raw_parts(nv.name, nv.namelen),
                        std::slice::from_raw_parts(nv.value, nv.valuelen),
                    )
                };
                field(name, value);
            }
            if flags & sys::NGHTTP2_HD_INFLATE_FINAL != 0 {
                // SAFETY: the block is whole; this readies the inflater for the next one.
                unsafe { sys::nghttp2_hd_inflate_end_headers(self.raw.as_ptr()) };
                return Ok(());
            }
            if flags & sys::NGHTTP2_HD_INFLATE_EMIT == 0 && block.is_empty() {
                return Ok(());
            }
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: made by nghttp2_hd_inflate_new, freed once, here.
        unsafe { sys::nghttp2_hd_inflate_del(self.raw.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientSession, Request, Settings};

    /// The header blocks of a client's HEADERS frames, as its session wrote them.
    fn blocks(wire: &[u8]) -> Vec<Vec<u8>> {
        let mut at = 24; // the preface
        let mut out = Vec::new();
        while at + 9 <= wire.len() {
            let len = u32::from_be_bytes([0, wire[at], wire[at + 1], wire[at + 2]]) as usize;
            if wire[at + 3] == 0x1 {
                out.push(wire[at + 9..at + 9 + len].to_vec());
            }
            at += 9 + len;
        }
        out
    }

    #[test]
    fn a_clients_header_blocks_decode_in_order_through_the_dynamic_table() {
        let mut client = ClientSession::new(&Settings::default()).unwrap();
        let mut wire = Vec::new();
        for (i, path) in [&b"/api/a"[..], b"/api/a", b"/b"].iter().enumerate() {
            let req = Request {
                authority: b"example.test",
                path,
                ..Request::default()
            };
            client.submit(&req, i, false).unwrap();
        }
        client.send(&mut wire).unwrap();
        let blocks = blocks(&wire);
        assert_eq!(blocks.len(), 3);
        assert!(
            blocks[1].len() < blocks[0].len(),
            "the second block names the table"
        );
        let mut inflater = Inflater::new().unwrap();
        let mut seen = Vec::new();
        for b in &blocks {
            let mut fields = Vec::new();
            inflater
                .inflate(b, |n, v| {
                    if n == b":path" || n == b":method" {
                        fields.push(String::from_utf8_lossy(v).into_owned());
                    }
                })
                .unwrap();
            seen.push(fields.join(" "));
        }
        assert_eq!(seen, ["GET /api/a", "GET /api/a", "GET /b"]);
        assert!(inflater.inflate(&[0xff, 0xff, 0xff], |_, _| {}).is_err());
    }
}
