//! Starting, counting and stopping servers.

use std::io::ErrorKind;
use std::net::TcpStream;

use crate::common::{serve, Client};
use herd_mock::{Config, MockError, Route, Server};

#[test]
fn several_threads_serve_many_connections() {
    let server = Server::start(Config {
        threads: 3,
        ..Config::default()
    })
    .unwrap();
    let clients: Vec<_> = (0..20)
        .map(|_| Client::connect(server.local_addr()))
        .collect();
    for mut client in clients {
        for _ in 0..5 {
            assert_eq!(client.get("/").status, 200);
        }
    }
    let stats = server.shutdown();
    assert_eq!(
        (stats.connections, stats.requests, stats.injected),
        (20, 100, 0)
    );
}

#[test]
fn after_shutdown_the_port_refuses_connections() {
    let server = Server::start(Config {
        threads: 2,
        ..Config::default()
    })
    .unwrap();
    let addr = server.local_addr();
    let _idle = Client::connect(addr);
    server.shutdown();
    let err = TcpStream::connect(addr).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
}

#[test]
fn dropping_the_server_stops_it_too() {
    let server = serve(&[]);
    let addr = server.local_addr();
    drop(server);
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_port_in_use_is_reported_not_shared() {
    let first = serve(&[]);
    let err = Server::start(Config {
        listen: first.local_addr(),
        ..Config::default()
    })
    .unwrap_err();
    match &err {
        MockError::Bind { error, .. } => assert_eq!(error.kind(), ErrorKind::AddrInUse),
        other => panic!("expected a bind error, got {other:?}"),
    }
    assert!(err.to_string().contains("another server"), "{err}");
}

#[test]
fn bad_config_is_a_typed_error() {
    let err = Server::start(Config {
        threads: 0,
        ..Config::default()
    })
    .unwrap_err();
    assert!(matches!(err, MockError::InvalidConfig(_)), "{err}");
    let routes = vec![Route {
        status: 42,
        ..Route::new("/x")
    }];
    let err = Server::start(Config {
        routes,
        ..Config::default()
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "route '/x': status 42 is outside 200..=599"
    );
}

#[tokio::test]
async fn runs_beside_the_callers_own_runtime() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = serve(&[]);
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = Vec::new();
    let read = stream.read_to_end(&mut response);
    tokio::time::timeout(crate::common::TIMEOUT, read)
        .await
        .unwrap()
        .unwrap();
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"));
    server.shutdown();
}
