//! Links `herd` at a fixed address (not as a position-independent executable). A PIE's loader
//! writes every relocated pointer of `.data.rel.ro` (vtables, tables of strings: ~450 KB in
//! herd) before `main`, so each of those pages becomes the process's own memory, and it reads
//! the 590 KB of relocations to do so; linked at a fixed address there is nothing to relocate
//! and those pages stay clean pages of the file, read only where used. herd holds 10,000
//! connections in ~20 MB, so this is a visible share of it (bench/RESULTS.md, session 9).
//! Shared libraries (libc) are still placed at random addresses.
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
