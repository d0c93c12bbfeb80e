//! Two link-time choices that keep the pages herd touches few (bench/RESULTS.md, sessions 9
//! to 11: herd holds 10,000 connections in ~12 MB, so each is a visible share of it).
//!
//! Linked at a fixed address (not as a position-independent executable): a PIE's loader writes
//! every relocated pointer of `.data.rel.ro` (vtables, tables of strings: ~450 KB in herd)
//! before `main`, so each of those pages becomes the process's own memory, and it reads the
//! 590 KB of relocations to do so; at a fixed address there is nothing to relocate and those
//! pages stay clean pages of the file, read only where used. Shared libraries (libc) are still
//! placed at random addresses.
//!
//! The functions a run executes laid out together (`text-order.txt`, lld's
//! `--symbol-ordering-file`): a run touches ~1.2 MB of code spread over 11.7 MB, and the kernel
//! maps the 64 KB around each page touched, so 6.1 MB of text was resident; placed first, the
//! same code is 1.2 MB (HTTP/1.1's functions first, HTTP/2's after them, so a plain run maps
//! none of HTTP/2's). `bench/text_order.py` writes the list from runs under callgrind; a
//! name it has that the build no longer has (a function renamed, a dependency upgraded) is
//! skipped, so a stale list costs memory, never correctness. Only for release builds on
//! x86_64 Linux with Rust 1.90 or later, whose default linker is rust-lld (GNU ld has no such
//! option); a linker chosen in RUSTFLAGS turns it off.
use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("text-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if env::var("PROFILE").as_deref() == Ok("release")
        && env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu")
        && !env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("link"))
        && rustc_minor().is_some_and(|m| m >= 90)
        && order.exists()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the compiler building herd (`rustc 1.95.0 ...` -> 95).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var("RUSTC").ok()?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
