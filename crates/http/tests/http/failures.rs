//! One test per error class the report counts: each failure must land in the right bucket with a
//! message that tells the user what the server did.

use crate::common::{s, Client, Server, Step, LIMIT};
use herd_http::{HttpTransport, Target, TlsOptions};
use herd_metrics::ErrorKind;

/// The failure of one GET against a server playing `script`.
fn fail(script: Vec<Step>) -> (herd_engine::Failure, u64) {
    let server = Server::start(script);
    let mut client = Client::connect(&server.url("/"), TlsOptions::default()).unwrap();
    let req = client.request("GET", "/");
    let mut resp = herd_engine::Response::default();
    let failure = client
        .exchange_into(&req, &mut resp)
        .expect_err("the exchange should fail");
    (failure, resp.bytes_received)
}

#[test]
fn closed_port_is_connect_refused() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let target = Target::parse(&format!("http://{addr}/")).unwrap();
    let mut wire = HttpTransport::new(&target, TlsOptions::default())
        .unwrap()
        .wire()
        .unwrap();
    let failure = wire.open(LIMIT).err().expect("connect should fail");
    assert_eq!(failure.kind, ErrorKind::ConnectRefused, "{failure:?}");
    assert!(
        failure.message.starts_with(&format!("connect to {addr}: ")),
        "{}",
        failure.message
    );
}

#[test]
fn truncated_body_is_eof_and_says_how_much_arrived() {
    let reply = s("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    let (failure, received) = fail(vec![Step::Read, Step::Write(reply.clone())]);
    assert_eq!(failure.kind, ErrorKind::Eof);
    assert_eq!(
        failure.message,
        "connection closed after 3 of 10 body bytes"
    );
    assert_eq!(
        received,
        reply.len() as u64,
        "bytes that did arrive are still counted"
    );
}

#[test]
fn truncated_chunked_body_and_head_are_eof() {
    let chunked = s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
    let (failure, _) = fail(vec![Step::Read, Step::Write(chunked)]);
    assert_eq!(
        (failure.kind, failure.message.as_str()),
        (
            ErrorKind::Eof,
            "connection closed after 3 bytes of a chunked body"
        )
    );
    let (failure, _) = fail(vec![Step::Read, Step::Write(s("HTTP/1.1 200 OK\r\nCont"))]);
    assert_eq!(
        (failure.kind, failure.message.as_str()),
        (
            ErrorKind::Eof,
            "connection closed after 21 bytes of the response head"
        )
    );
}

#[test]
fn close_before_any_byte_is_eof_with_nothing_received() {
    // What a reused keep-alive connection looks like when the server timed it out: the engine
    // tells it apart from a failed response by `bytes_received == 0`.
    let (failure, received) = fail(vec![Step::Read]);
    assert_eq!(
        (failure.kind, failure.message.as_str()),
        (
            ErrorKind::Eof,
            "connection closed before the response began"
        )
    );
    assert_eq!(received, 0);
}

#[test]
fn garbage_is_protocol_error_quoting_what_came() {
    let (failure, _) = fail(vec![
        Step::Read,
        Step::Write(s("SSH-2.0-OpenSSH_9.6\r\n\r\n")),
    ]);
    assert_eq!(failure.kind, ErrorKind::Protocol);
    assert_eq!(
        failure.message,
        r#"invalid response head (invalid HTTP version): "SSH-2.0-OpenSSH_9.6\r\n\r\n""#
    );
}

#[test]
fn bad_framing_is_protocol_error() {
    let table = [
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
            r#"bad chunk size in chunked body at "xyz\r\n""#,
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
            r#"bad Content-Length in response head "HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n""#,
        ),
    ];
    for (reply, message) in table {
        let (failure, _) = fail(vec![Step::Read, Step::Write(s(reply))]);
        assert_eq!(
            (failure.kind, failure.message.as_str()),
            (ErrorKind::Protocol, message)
        );
    }
}

#[test]
fn oversized_head_is_protocol_error() {
    let reply = format!(
        "HTTP/1.1 200 OK\r\nX-Big: {}\r\n\r\n",
        "v".repeat(300 * 1024)
    );
    let (failure, _) = fail(vec![Step::Read, Step::Write(s(&reply))]);
    assert_eq!(failure.kind, ErrorKind::Protocol);
    assert!(
        failure
            .message
            .starts_with("response head larger than 256 KiB: \"HTTP/1.1 200 OK"),
        "{}",
        failure.message
    );
}

#[test]
fn server_reset_is_reset() {
    let (failure, _) = fail(vec![Step::Read, Step::Reset]);
    assert_eq!(failure.kind, ErrorKind::Reset, "{failure:?}");
}

#[test]
fn connections_come_from_the_source_address_asked_for() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let target = Target::parse(&format!("http://{addr}/")).unwrap();
    let options = TlsOptions {
        source: Some("127.0.0.2".parse().unwrap()),
        ..Default::default()
    };
    let mut wire = HttpTransport::new(&target, options)
        .unwrap()
        .wire()
        .unwrap();
    let _conn = wire.open(LIMIT).unwrap();
    let (_, peer) = listener.accept().unwrap();
    assert_eq!(peer.ip().to_string(), "127.0.0.2");
}
