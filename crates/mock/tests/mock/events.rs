//! Event-stream routes: `slots=N`, a model server's batch, holds the streams beyond N until a
//! slot frees, before their wait for the first token begins.

use crate::common::{serve, Client};
use std::time::{Duration, Instant};

/// Two streams asked at once of `spec`'s `/batch`: when each ended, from the start.
fn two_at_once(spec: &str) -> Vec<Duration> {
    let server = serve(&[spec]);
    let addr = server.local_addr();
    let started = Instant::now();
    let streams: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                c.send(b"GET /batch HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let all = c.read_to_end().unwrap();
                assert!(String::from_utf8_lossy(&all).contains("data: 0"));
                started.elapsed()
            })
        })
        .collect();
    streams.into_iter().map(|s| s.join().unwrap()).collect()
}

#[test]
fn a_batch_of_one_makes_the_second_stream_wait_for_the_first() {
    // Each stream's first event comes 150 ms after it has a slot; the second has it only once
    // the first has ended.
    let ends = two_at_once("/batch sse ttft=150ms tokens=1 slots=1");
    let last = *ends.iter().max().unwrap();
    assert!(last >= Duration::from_millis(300), "{ends:?}");
}
