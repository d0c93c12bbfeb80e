//! Random bytes after plausible request prefixes: the server must answer or close, never
//! panic. Alone in a process of its own (`common::alone`) because it installs a process-wide
//! panic hook (tokio would otherwise swallow a panicking connection task without a trace).

use std::io::Write;
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::common::{alone, serve, Client};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PREFIXES: [&str; 5] = [
    "",
    "GET / HTTP/1.1\r\n",
    "POST /echo HTTP/1.1\r\nContent-Length: 7\r\n\r\n",
    "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
];
const ALPHABET: &[u8] = b"0123456789abcdefABCDEF\r\n:; \t=/\x00\xff";

#[test]
fn random_input_never_panics_the_server() {
    if !alone("garbage_input::random_input_never_panics_the_server") {
        return;
    }
    let panicked = Arc::new(AtomicBool::new(false));
    let flag = panicked.clone();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        flag.store(true, Ordering::SeqCst);
        default_hook(info);
    }));

    let server = serve(&[]);
    let mut rng = SmallRng::seed_from_u64(1);
    for _ in 0..300 {
        let mut input = PREFIXES[rng.gen_range(0..PREFIXES.len())]
            .as_bytes()
            .to_vec();
        for _ in 0..rng.gen_range(0..200) {
            let byte = if rng.gen_bool(0.7) {
                ALPHABET[rng.gen_range(0..ALPHABET.len())]
            } else {
                rng.gen()
            };
            input.push(byte);
        }
        let mut client = Client::connect(server.local_addr());
        // The server may answer and close before reading everything; that is fine.
        let _ = client.stream.write_all(&input);
        let _ = client.stream.shutdown(Shutdown::Write);
        let _ = client.read_to_end();
    }

    let mut client = Client::connect(server.local_addr());
    assert_eq!(client.get("/").status, 200, "still serving");
    server.shutdown();
    assert!(
        !panicked.load(Ordering::SeqCst),
        "a thread panicked (see stderr)"
    );
}
