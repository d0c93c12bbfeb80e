//! TLS against an in-test rustls server with a fresh self-signed certificate.

use crate::common::{Client, Server, Step};
use herd_http::TlsOptions;
use herd_metrics::ErrorKind;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::net::TcpListener;
use std::sync::Arc;

/// Serves TLS connections on a thread of its own; each answers one request with 200 and the
/// negotiated ALPN protocol in `X-Alpn`.
fn start_tls_server() -> SocketAddr {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(cert.cert.der().to_vec())], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            let _ = tcp.set_read_timeout(Some(crate::common::LIMIT));
            let Ok(conn) = rustls::ServerConnection::new(Arc::clone(&config)) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut request = Vec::new();
            let mut chunk = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                match tls.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            let alpn = tls
                .conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned());
            let reply = format!(
                "HTTP/1.1 200 OK\r\nX-Alpn: {}\r\nContent-Length: 6\r\n\r\nsecret",
                alpn.unwrap_or_default()
            );
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    addr
}

#[test]
fn self_signed_certificate_fails_verification() {
    let addr = start_tls_server();
    let failure = Client::connect(&format!("https://{addr}/"), TlsOptions::default())
        .err()
        .expect("handshake should fail");
    assert_eq!(failure.kind, ErrorKind::Tls);
    // Worded for a person, with the flags that change it; no rustls debug name.
    assert!(
        failure.message.contains("not signed by a CA herd trusts")
            && failure.message.contains("--cacert FILE")
            && failure.message.contains("-k"),
        "{}",
        failure.message
    );
    assert!(
        !failure.message.contains("UnknownIssuer"),
        "{}",
        failure.message
    );
}

#[test]
fn insecure_accepts_self_signed_and_negotiates_http_1_1() {
    let addr = start_tls_server();
    let mut client = Client::connect(
        &format!("https://{addr}/"),
        TlsOptions {
            insecure: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut req = client.request("GET", "/");
    req.keep_response = true;
    let resp = client.exchange(&req).unwrap();
    assert_eq!(
        (resp.status, resp.body.as_slice()),
        (200, b"secret".as_slice())
    );
    assert!(
        resp.headers
            .contains(&("X-Alpn".to_owned(), "http/1.1".to_owned())),
        "{:?}",
        resp.headers
    );
}

#[test]
fn tls_to_a_plaintext_port_is_tls_error() {
    let reply =
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec();
    let server = Server::start(vec![Step::Write(reply)]);
    let failure = Client::connect(
        &format!("https://{}/", server.addr),
        TlsOptions {
            insecure: true,
            ..Default::default()
        },
    )
    .err()
    .expect("handshake should fail");
    assert_eq!(failure.kind, ErrorKind::Tls, "{failure:?}");
    assert!(
        failure
            .message
            .starts_with("https://: the server at 127.0.0.1:"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("use http:// instead of https://"),
        "the message says what to do: {}",
        failure.message
    );
    assert!(
        failure.mismatch,
        "the first connection proves it: the run stops"
    );
}

/// Serves TLS keep-alive connections answering each request with a 64 KiB body (four TLS
/// records and more), the connection kept open.
fn start_tls_server_of_large_responses() -> SocketAddr {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(cert.cert.der().to_vec())], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            let config = Arc::clone(&config);
            std::thread::spawn(move || {
                let _ = tcp.set_read_timeout(Some(crate::common::LIMIT));
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n".to_vec();
                reply.resize(reply.len() + 65536, b'x');
                let mut got = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    while let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                        got.drain(..end + 4);
                        if tls.write_all(&reply).and_then(|()| tls.flush()).is_err() {
                            return;
                        }
                    }
                    match tls.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn a_response_of_several_tls_records_on_a_kept_alive_connection_is_read_whole() {
    // rustls hands out one record (16 KiB at most) a read: the loop once took a read shorter
    // than its buffer for an empty socket, left the other records of a 64 KiB response in a
    // socket whose readiness edge had come, and every exchange waited for its deadline.
    use herd_engine::{run, Load, Plan, Request, Single, SystemClock};
    use herd_http::{HttpTransport, Target};
    use std::time::Duration;
    let addr = start_tls_server_of_large_responses();
    let target = Target::parse(&format!("https://{addr}/")).unwrap();
    let tls = TlsOptions {
        insecure: true,
        ..Default::default()
    };
    let transport = HttpTransport::new(&target, tls).unwrap();
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(10),
        timeout: Duration::from_secs(3),
        ..Plan::default()
    };
    let request = Request::new(&b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"[..]);
    let out = run(
        &plan,
        Arc::new(SystemClock),
        |_| transport.wire(),
        |_| Single(request.clone()),
        herd_engine::Hooks::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.total.ok, 10, "{:?}", out.total.errors);
    assert_eq!(out.total.body_sum, 10 * 65536);
}
