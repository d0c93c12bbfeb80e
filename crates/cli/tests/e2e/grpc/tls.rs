//! Server reflection over TLS: `herd grpc` without `--proto` against nginx's `grpc_pass` with
//! TLS (ALPN h2) in front of `herd serve`'s echo service; the types come through nginx by
//! reflection, trusting what the run trusts.

use super::real::Serve;
use crate::common::*;

#[test]
fn server_reflection_asks_over_tls_trusting_what_the_run_trusts() {
    let serve = Serve::start("/herd.echo.Echo/* grpc");
    let dir = TempDir::new("grpc-tls-reflect");
    let tls = nginx_tls(&dir, "");
    let location = format!(
        r#"location ~ "^/[^/]+\.[^/]+/[^/]+$" {{ grpc_pass grpc://{}; }}"#,
        serve.addr
    );
    let nginx = Nginx::start_with(&format!("{tls} {location}"), "ssl http2");
    let addr = nginx.addr.to_string();
    let json = dir.path("r.json");
    let cert = dir.path("cert.pem");
    let call = |trust: &[&str]| {
        Herd::new(&["grpc", "--call", "herd.echo.Echo/Unary"])
            .args(trust)
            .args(&["-d", r#"{"message":"m"}"#, "-n", "20", "-c", "2", &addr])
            .json(&json)
            .run()
    };
    for trust in [vec!["--skipTLS"], vec!["--cacert", cert.to_str().unwrap()]] {
        let r = call(&trust).code(0).json();
        assert_eq!(
            r["grpc"]["status"],
            serde_json::json!({"OK": 20}),
            "{trust:?}"
        );
    }
    // Trusting only Mozilla's roots, the self-signed certificate is refused before any call.
    let ran = call(&[]);
    ran.code(2);
    let err = ran.stderr();
    assert!(
        err.contains("server reflection at 127.0.0.1:") && err.contains("certificate"),
        "{err}"
    );
}
