//! TLS against an in-test rustls server with a fresh self-signed certificate.

mod support;

use herd_http::TlsOptions;
use herd_metrics::ErrorKind;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use support::{Client, Server, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves TLS connections on the test's runtime; each answers one request with 200 and the
/// negotiated ALPN protocol in `X-Alpn`.
async fn start_tls_server() -> SocketAddr {
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
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                continue;
            };
            let alpn = tls
                .get_ref()
                .1
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned());
            let mut request = Vec::new();
            let mut chunk = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                match tls.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nX-Alpn: {}\r\nContent-Length: 6\r\n\r\nsecret",
                alpn.unwrap_or_default()
            );
            let _ = tls.write_all(reply.as_bytes()).await;
            let _ = tls.shutdown().await;
        }
    });
    addr
}

#[tokio::test]
async fn self_signed_certificate_fails_verification() {
    let addr = start_tls_server().await;
    let failure = Client::connect(&format!("https://{addr}/"), TlsOptions::default())
        .await
        .err()
        .expect("handshake should fail");
    assert_eq!(failure.kind, ErrorKind::Tls);
    assert!(
        failure
            .message
            .contains("invalid peer certificate: UnknownIssuer"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn insecure_accepts_self_signed_and_negotiates_http_1_1() {
    let addr = start_tls_server().await;
    let mut client = Client::connect(&format!("https://{addr}/"), TlsOptions { insecure: true })
        .await
        .unwrap();
    let mut req = client.request("GET", "/");
    req.keep_response = true;
    let resp = client.exchange(&req).await.unwrap();
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

#[tokio::test]
async fn tls_to_a_plaintext_port_is_tls_error() {
    let reply =
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec();
    let server = Server::start(vec![Step::Write(reply)]);
    let failure = Client::connect(
        &format!("https://{}/", server.addr),
        TlsOptions { insecure: true },
    )
    .await
    .err()
    .expect("handshake should fail");
    assert_eq!(failure.kind, ErrorKind::Tls, "{failure:?}");
    assert!(
        failure.message.starts_with("TLS handshake with 127.0.0.1:"),
        "{}",
        failure.message
    );
}
