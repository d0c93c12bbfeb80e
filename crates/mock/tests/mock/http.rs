//! The HTTP/1.1 side of the mock: framing, keep-alive, pipelining, routing, bad input.

use crate::common::{serve, Client};
use herd_mock::HELLO;

#[test]
fn default_route_answers_200_with_content_length() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    let response = client.get("/anything?at=all");
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-length"),
        Some(HELLO.len().to_string().as_str())
    );
    assert_eq!(response.text(), HELLO);
    assert_eq!(
        response.header("connection"),
        None,
        "HTTP/1.1 keep-alive is implicit"
    );
}

#[test]
fn keep_alive_serves_100_requests_on_one_connection() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    for _ in 0..100 {
        assert_eq!(client.get("/").status, 200);
    }
    let stats = server.shutdown();
    assert_eq!((stats.connections, stats.requests), (1, 100));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    let batch: String = (0..10)
        .map(|i| format!("GET /echo?n={i} HTTP/1.1\r\nHost: mock\r\n\r\n"))
        .collect();
    client.send(batch.as_bytes());
    for i in 0..10 {
        let response = client.response();
        assert!(
            response
                .text()
                .starts_with(&format!("GET /echo?n={i} HTTP/1.1\r\n")),
            "response {i}: {}",
            response.text()
        );
    }
}

#[test]
fn route_sets_status_size_and_headers() {
    let server = serve(&[
        "/made status=201 size=10kb header=X-Mock:yes header=Content-Type:application/json",
    ]);
    let mut client = Client::connect(server.local_addr());
    let response = client.get("/made");
    assert_eq!(response.status, 201);
    assert_eq!(response.body.len(), 10_000);
    assert!(response.body.starts_with(HELLO.as_bytes()));
    assert_eq!(response.header("x-mock"), Some("yes"));
    assert_eq!(response.header("content-type"), Some("application/json"));
}

#[test]
fn unmatched_path_is_404_and_unmatched_method_is_405() {
    let server = serve(&["/api/* method=POST", "/health"]);
    let mut client = Client::connect(server.local_addr());
    assert_eq!(client.get("/nowhere").status, 404);
    assert_eq!(client.get("/api/users").status, 405);
    assert_eq!(client.get("/health").status, 200);
    client.send(b"POST /api/users HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(client.response().status, 200);
}

#[test]
fn connection_close_is_honoured() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    client.send(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    let response = client.response();
    assert_eq!(response.header("connection"), Some("close"));
    assert_eq!(
        client.read_to_end().unwrap(),
        b"",
        "the request after close is not answered"
    );
}

#[test]
fn http10_closes_unless_asked_to_keep_alive() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    client.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(client.response().header("connection"), Some("keep-alive"));
    client.send(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(client.response().status, 200);
    assert_eq!(client.read_to_end().unwrap(), b"");
}

#[test]
fn head_gets_headers_without_body() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    client.send(b"HEAD / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    let head = client.try_response(true).unwrap().unwrap();
    assert_eq!(
        head.header("content-length"),
        Some(HELLO.len().to_string().as_str())
    );
    assert_eq!(
        client.response().text(),
        HELLO,
        "the next response starts right after the head"
    );
}

#[test]
fn request_bodies_are_read_past_whatever_their_framing() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    client.send(b"POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
    client.send(b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: t\r\n\r\n");
    client.send(b"GET /x HTTP/1.1\r\n\r\n");
    for _ in 0..3 {
        assert_eq!(client.response().text(), HELLO);
    }
}

#[test]
fn echo_returns_the_request_head_and_decoded_body() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    let head = "POST /echo HTTP/1.1\r\nX-Token: abc\r\nTransfer-Encoding: chunked\r\n\r\n";
    client.send(format!("{head}4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\n").as_bytes());
    assert_eq!(client.response().text(), format!("{head}wikipedia"));
}

#[test]
fn expect_100_continue_gets_an_interim_answer() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    client.send(b"PUT /x HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
    let mut interim = [0; 25];
    std::io::Read::read_exact(&mut client.stream, &mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    client.send(b"abc");
    assert_eq!(client.response().status, 200);
}

#[test]
fn large_request_head_across_many_reads_is_fine() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    let big = "x".repeat(20_000);
    client.send(format!("GET / HTTP/1.1\r\nX-Big: {big}\r\n").as_bytes());
    client.send(b"\r\n");
    assert_eq!(client.response().status, 200);
}

#[test]
fn malformed_request_gets_400_and_close() {
    let server = serve(&[]);
    for bad in [
        &b"GET / HTTP/1.1\r\nBad Header\r\n\r\n"[..],
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    ] {
        let mut client = Client::connect(server.local_addr());
        client.send(bad);
        assert_eq!(client.response().status, 400);
        assert_eq!(client.read_to_end().unwrap(), b"", "closed after the 400");
    }
    let mut client = Client::connect(server.local_addr());
    client.send(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(client.response().status, 400, "ambiguous framing");
}

#[test]
fn oversized_request_head_gets_431() {
    let server = serve(&[]);
    let mut client = Client::connect(server.local_addr());
    let huge = "x".repeat(70_000);
    client.send(format!("GET / HTTP/1.1\r\nX-Huge: {huge}\r\n").as_bytes());
    assert_eq!(client.response().status, 431);
    let mut client = Client::connect(server.local_addr());
    let many: String = (0..100).map(|i| format!("X-{i}: v\r\n")).collect();
    client.send(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes());
    assert_eq!(client.response().status, 431);
}
