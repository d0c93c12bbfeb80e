//! Whatever a server sends, the transport answers with a response or a classed failure, never a
//! panic or a hang: valid responses cut and corrupted at pseudo-random points.

use crate::common::Client;
use herd_http::TlsOptions;
use herd_metrics::ErrorKind;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener};

const CASES: usize = 300;

const SEEDS: [&[u8]; 4] = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close",
];

/// xorshift64: deterministic, so a failing case reproduces.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn mutate(state: &mut u64) -> Vec<u8> {
    let mut bytes = SEEDS[next(state) as usize % SEEDS.len()].to_vec();
    for _ in 0..next(state) % 4 {
        let i = next(state) as usize % bytes.len();
        match next(state) % 3 {
            0 => bytes[i] = next(state) as u8,
            1 => bytes[i] = b"\r\n:;0fF -"[next(state) as usize % 9],
            _ => bytes.truncate(i),
        }
        if bytes.is_empty() {
            break;
        }
    }
    bytes
}

#[test]
fn corrupted_responses_fail_cleanly() {
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let cases: Vec<Vec<u8>> = (0..CASES).map(|_| mutate(&mut state)).collect();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server_cases = cases.clone();
    std::thread::spawn(move || {
        for case in server_cases {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_read_timeout(Some(crate::common::LIMIT)).unwrap();
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(&case);
            let _ = stream.shutdown(Shutdown::Write);
            let _ = std::io::copy(&mut stream, &mut std::io::sink());
        }
    });
    let (mut ok, mut eof, mut protocol) = (0, 0, 0);
    for (i, case) in cases.iter().enumerate() {
        let mut client = Client::connect(&url, TlsOptions::default()).unwrap();
        let mut req = client.request("GET", "/");
        req.keep_response = true;
        match client.exchange(&req) {
            Ok(_) => ok += 1,
            Err(f) if f.kind == ErrorKind::Eof => eof += 1,
            Err(f) if f.kind == ErrorKind::Protocol => protocol += 1,
            Err(f) => panic!("case {i} {:?}: {f:?}", String::from_utf8_lossy(case)),
        }
    }
    // The mutations must exercise all three outcomes, or this test proves little.
    assert!(
        ok > 0 && eof > 0 && protocol > 0,
        "ok {ok}, eof {eof}, protocol {protocol}"
    );
}
