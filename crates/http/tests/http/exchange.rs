//! Responses a real server may send, each checked for what a user reads in the report: status,
//! bytes, body length, whether the connection was reused.

use crate::common::{ok, s, Client, Server, Step};
use herd_http::TlsOptions;

#[test]
fn content_length_body_is_counted_and_not_kept() {
    let reply = ok("hello");
    let server = Server::start(vec![Step::Read, Step::Write(reply.clone())]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let resp = client.get("/x").unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body_len, 5);
    assert_eq!(resp.bytes_received, reply.len() as u64);
    assert!(resp.keep_alive);
    assert!(resp.first_byte.is_some());
    assert!(
        resp.body.is_empty() && resp.headers.is_empty(),
        "kept what was not asked for"
    );
    client.close();
    let requests = server.requests();
    assert!(
        requests[0].starts_with(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:"),
        "{requests:?}"
    );
}

#[test]
fn keep_response_fills_headers_and_body() {
    let reply = s("HTTP/1.1 201 Created\r\nX-Id: 7\r\nContent-Length: 2\r\n\r\nok");
    let server = Server::start(vec![Step::Read, Step::Write(reply)]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let mut req = client.request("POST", "/");
    req.keep_response = true;
    let resp = client.exchange(&req).unwrap();
    assert_eq!(resp.status, 201);
    assert_eq!(
        resp.headers,
        [
            ("X-Id".into(), "7".into()),
            ("Content-Length".into(), "2".into())
        ]
    );
    assert_eq!(resp.body, b"ok");
}

#[test]
fn chunked_body_with_extensions_and_trailers_is_decoded() {
    let reply = s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                   5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n");
    let server = Server::start(vec![Step::Read, Step::Write(reply.clone())]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let mut req = client.request("GET", "/");
    req.keep_response = true;
    let resp = client.exchange(&req).unwrap();
    assert_eq!(resp.body, b"hello, world");
    assert_eq!(resp.body_len, 12);
    assert_eq!(resp.bytes_received, reply.len() as u64);
    assert!(resp.keep_alive);
}

#[test]
fn response_arriving_a_byte_at_a_time_is_reassembled() {
    let reply = s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    let server = Server::start(vec![
        Step::Read,
        Step::WriteBytewise(reply.clone()),
        Step::Read,
        Step::WriteBytewise(ok("xy")),
    ]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let resp = client.get("/").unwrap();
    assert_eq!(
        (resp.status, resp.body_len, resp.bytes_received),
        (200, 3, reply.len() as u64)
    );
    let resp = client.get("/").unwrap();
    assert_eq!((resp.status, resp.body_len), (200, 2));
}

#[test]
fn body_without_length_runs_to_the_close() {
    let reply = s("HTTP/1.1 200 OK\r\n\r\nall of this is body");
    let server = Server::start(vec![Step::Read, Step::Write(reply.clone())]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let resp = client.get("/").unwrap();
    assert_eq!(resp.body_len, 19);
    assert_eq!(resp.bytes_received, reply.len() as u64);
    assert!(
        !resp.keep_alive,
        "a close-delimited body cannot leave the connection reusable"
    );
}

#[test]
fn head_response_has_no_body_whatever_its_length_says() {
    let server = Server::start(vec![
        Step::Read,
        Step::Write(s("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")),
        Step::Read,
        Step::Write(ok("after")),
    ]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let head = client.request("HEAD", "/");
    let resp = client.exchange(&head).unwrap();
    assert_eq!(
        (resp.status, resp.body_len, resp.keep_alive),
        (200, 0, true)
    );
    let resp = client.get("/").unwrap();
    assert_eq!(
        (resp.status, resp.body_len),
        (200, 5),
        "the HEAD response swallowed the next one"
    );
}

#[test]
fn no_content_and_not_modified_have_no_body() {
    let server = Server::start(vec![
        Step::Read,
        Step::Write(s("HTTP/1.1 204 No Content\r\n\r\n")),
        Step::Read,
        Step::Write(s("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")),
        Step::Read,
        Step::Write(ok("x")),
    ]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    for (status, body_len) in [(204, 0), (304, 0), (200, 1)] {
        let resp = client.get("/").unwrap();
        assert_eq!(
            (resp.status, resp.body_len, resp.keep_alive),
            (status, body_len, true)
        );
    }
}

#[test]
fn interim_100_continue_is_skipped() {
    let reply = [s("HTTP/1.1 100 Continue\r\n\r\n"), ok("done")].concat();
    let server = Server::start(vec![Step::Read, Step::Write(reply.clone())]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let resp = client.get("/").unwrap();
    assert_eq!((resp.status, resp.body_len), (200, 4));
    assert_eq!(
        resp.bytes_received,
        reply.len() as u64,
        "interim bytes were received too"
    );
}

#[test]
fn responses_sent_ahead_are_kept_for_the_next_request() {
    let (first, second) = (
        ok("one"),
        s("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\ntwo"),
    );
    let server = Server::start(vec![
        Step::Read,
        Step::Write([first.clone(), second.clone()].concat()),
        Step::Read,
    ]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let a = client.get("/").unwrap();
    let b = client.get("/").unwrap();
    assert_eq!((a.status, a.bytes_received), (200, first.len() as u64));
    assert_eq!(
        (b.status, b.bytes_received, b.body_len),
        (404, second.len() as u64, 3)
    );
    assert!(b.first_byte.is_some());
}

#[test]
fn one_connection_carries_a_hundred_requests() {
    let mut script = Vec::new();
    for i in 0..100 {
        script.push(Step::Read);
        // Alternate framings so decoder state from one response cannot leak into the next.
        script.push(Step::Write(if i % 2 == 0 {
            ok("0123456789")
        } else {
            s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n")
        }));
    }
    let server = Server::start(script);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    for i in 0..100 {
        let resp = client
            .get("/")
            .unwrap_or_else(|f| panic!("request {i}: {f:?}"));
        assert_eq!(
            (resp.status, resp.body_len, resp.keep_alive),
            (200, 10, true),
            "request {i}"
        );
    }
    client.close();
    assert_eq!(
        server.requests().len(),
        100,
        "all requests on the one accepted connection"
    );
}

#[test]
fn connection_close_and_http_1_0_end_keep_alive() {
    // (response, keep-alive?)
    let table = [
        (
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        (
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
            true,
        ),
    ];
    for (reply, keep_alive) in table {
        let server = Server::start(vec![Step::Read, Step::Write(s(reply))]);
        let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
        assert_eq!(client.get("/").unwrap().keep_alive, keep_alive, "{reply:?}");
    }
}

#[test]
fn large_head_grows_the_buffer() {
    let big = "v".repeat(40 * 1024);
    let reply = format!("HTTP/1.1 200 OK\r\nX-Big: {big}\r\nContent-Length: 2\r\n\r\nok");
    let server = Server::start(vec![
        Step::Read,
        Step::Write(s(&reply)),
        Step::Read,
        Step::Write(ok("again")),
    ]);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let resp = client.get("/").unwrap();
    assert_eq!(
        (resp.status, resp.body_len, resp.bytes_received),
        (200, 2, reply.len() as u64)
    );
    assert_eq!(client.get("/").unwrap().body_len, 5);
}
