//! nghttp2's memory: small blocks kept for reuse on the thread that freed them.
//!
//! nghttp2 allocates per response header (a reference-counted buffer for each name and value
//! it decodes from a literal field, as nginx sends them) and per frame, and frees each soon
//! after: ~25 small blocks a response on nginx's static file. Through glibc's malloc those
//! cost herd ~2,700 instructions a request, twice what h2load pays through jemalloc (callgrind,
//! h2c 10 x 10, bench/RESULTS.md, session 12). Here a freed block of up to 2 KiB
//! goes on its thread's list for its size class and the next allocation of that class takes it
//! back: a few instructions each way, no lock. Larger blocks go to the global allocator.
//!
//! Every block carries its capacity in a header before it, so a block freed on another
//! thread (a session moved between threads) or after its thread's lists are gone is still
//! freed correctly. The lists hold at most what a thread had in use at its peak.

use std::alloc::{alloc, dealloc, Layout};
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

/// Bytes before each block: its capacity (16, so the block keeps malloc's alignment).
const HEADER: usize = 16;
const ALIGN: usize = 16;
/// Capacities of the size classes; blocks above the last go to the global allocator.
const CLASSES: [usize; 7] = [32, 64, 128, 256, 512, 1024, 2048];

/// Each class's free blocks, a list threaded through the blocks themselves; given back to the
/// global allocator when the thread ends (a series of runs starts threads again and again).
struct Lists([Cell<*mut u8>; CLASSES.len()]);

impl Drop for Lists {
    fn drop(&mut self) {
        for (k, head) in self.0.iter().enumerate() {
            let mut p = head.replace(ptr::null_mut());
            while !p.is_null() {
                // SAFETY: every block on a list is free and was allocated with its class's
                // layout; its first word is the next one.
                unsafe {
                    let next = p.cast::<*mut u8>().read();
                    if let Some(l) = layout(CLASSES[k]) {
                        dealloc(p.sub(HEADER), l);
                    }
                    p = next;
                }
            }
        }
    }
}

thread_local! {
    static FREE: Lists = const { Lists([const { Cell::new(ptr::null_mut()) }; CLASSES.len()]) };
}

fn class_of(size: usize) -> Option<usize> {
    CLASSES.iter().position(|&c| size <= c)
}

fn layout(capacity: usize) -> Option<Layout> {
    Layout::from_size_align(capacity.checked_add(HEADER)?, ALIGN).ok()
}

/// A block of at least `size` bytes, or null when the system has none.
pub(crate) fn allocate(size: usize) -> *mut u8 {
    let class = class_of(size);
    if let Some(k) = class {
        let reused = FREE
            .try_with(|free| {
                let head = free.0[k].get();
                if !head.is_null() {
                    // SAFETY: a block on the list is ours and free; its first word holds the
                    // next one (written by `release`).
                    free.0[k].set(unsafe { head.cast::<*mut u8>().read() });
                }
                head
            })
            .unwrap_or(ptr::null_mut());
        if !reused.is_null() {
            return reused;
        }
    }
    let capacity = class.map_or(size.max(1), |k| CLASSES[k]);
    let Some(l) = layout(capacity) else {
        return ptr::null_mut();
    };
    // SAFETY: `l` has a non-zero size.
    let base = unsafe { alloc(l) };
    if base.is_null() {
        return base;
    }
    // SAFETY: the block has HEADER bytes before the caller's part, 16-aligned.
    unsafe {
        base.cast::<usize>().write(capacity);
        base.add(HEADER)
    }
}

/// The capacity of block `p` (from [`allocate`]).
///
/// # Safety
/// `p` came from [`allocate`] and was not released.
unsafe fn capacity(p: *mut u8) -> usize {
    unsafe { p.sub(HEADER).cast::<usize>().read() }
}

/// Gives block `p` (from [`allocate`], or null) back.
///
/// # Safety
/// `p` is null or came from [`allocate`] and is not used after this.
pub(crate) unsafe fn release(p: *mut u8) {
    if p.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let cap = unsafe { capacity(p) };
    if let Some(k) = class_of(cap).filter(|&k| CLASSES[k] == cap) {
        let kept = FREE.try_with(|free| {
            // SAFETY: the block is free from now on and at least a pointer wide.
            unsafe { p.cast::<*mut u8>().write(free.0[k].get()) };
            free.0[k].set(p);
        });
        if kept.is_ok() {
            return;
        }
    }
    if let Some(l) = layout(cap) {
        // SAFETY: allocated with this layout in `allocate`.
        unsafe { dealloc(p.sub(HEADER), l) }
    }
}

/// Block `p` (from [`allocate`], or null) grown to at least `size` bytes, its contents kept;
/// null, `p` untouched, when the system has no memory.
///
/// # Safety
/// As [`release`].
pub(crate) unsafe fn resize(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        return allocate(size);
    }
    // SAFETY: the caller's promise.
    let cap = unsafe { capacity(p) };
    if size <= cap {
        return p;
    }
    let q = allocate(size);
    if !q.is_null() {
        // SAFETY: both blocks hold at least `cap` bytes and are distinct.
        unsafe {
            ptr::copy_nonoverlapping(p, q, cap);
            release(p);
        }
    }
    q
}

/// The four functions nghttp2 allocates with (`nghttp2_mem`).
pub(crate) mod mem {
    use super::*;

    pub(crate) unsafe extern "C" fn malloc(size: usize, _: *mut c_void) -> *mut c_void {
        allocate(size).cast()
    }

    pub(crate) unsafe extern "C" fn free(p: *mut c_void, _: *mut c_void) {
        // SAFETY: nghttp2 frees only what these functions gave it, once.
        unsafe { release(p.cast()) }
    }

    pub(crate) unsafe extern "C" fn calloc(n: usize, size: usize, _: *mut c_void) -> *mut c_void {
        let Some(total) = n.checked_mul(size) else {
            return ptr::null_mut();
        };
        let p = allocate(total);
        if !p.is_null() {
            // SAFETY: the block holds at least `total` bytes.
            unsafe { ptr::write_bytes(p, 0, total) };
        }
        p.cast()
    }

    pub(crate) unsafe extern "C" fn realloc(
        p: *mut c_void,
        size: usize,
        _: *mut c_void,
    ) -> *mut c_void {
        // SAFETY: as `free`.
        unsafe { resize(p.cast(), size).cast() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_block_is_reused_for_its_class_and_keeps_its_contents_when_grown() {
        let a = allocate(40);
        // SAFETY: 40 bytes were asked for; each block is released once.
        unsafe {
            ptr::write_bytes(a, 7, 40);
            release(a);
            let b = allocate(50);
            assert_eq!(a, b, "the 64-byte class's freed block comes back");
            ptr::write_bytes(b, 9, 50);
            let c = resize(b, 5_000);
            assert!(!c.is_null());
            assert!(std::slice::from_raw_parts(c, 50).iter().all(|&x| x == 9));
            release(c);
            let z = mem::calloc(3, 100, ptr::null_mut()).cast::<u8>();
            assert!(std::slice::from_raw_parts(z, 300).iter().all(|&x| x == 0));
            release(z);
            release(ptr::null_mut());
        }
    }

    #[test]
    fn a_block_freed_on_another_thread_is_freed_there() {
        let p = allocate(100) as usize;
        std::thread::spawn(move || {
            // SAFETY: the block is released once, here.
            unsafe { release(p as *mut u8) }
        })
        .join()
        .unwrap();
        // That thread's lists went back to the allocator when it ended; this one's work on.
        let q = allocate(100);
        // SAFETY: released once.
        unsafe { release(q) };
    }
}
