//! curl's connection flags against a real nginx: `--resolve` and `--connect-to` send a site's
//! name to another address (the Host header and TLS SNI stay the site's), and `--cacert`,
//! `--cert`, `--key` meet nginx with `ssl_verify_client on`.

use crate::common::*;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

fn logged(nginx: &Nginx) -> Vec<String> {
    std::fs::read_to_string(nginx.dir.path("requests.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn resolve_and_connect_to_send_the_sites_name_to_another_address() {
    let nginx = Nginx::start_configured(
        r#"log_format hosts '$http_host';"#,
        "access_log requests.log hosts;",
        "",
    );
    let port = nginx.addr.port();
    // shop.test resolves nowhere: only the route can reach it.
    Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "3"])
        .args(&["--resolve", &format!("shop.test:{port}:127.0.0.1")])
        .args(&[&format!("http://shop.test:{port}/")])
        .run()
        .code(0);
    Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "2"])
        .args(&["--connect-to", &format!("shop.test:80:127.0.0.1:{port}")])
        .args(&["http://shop.test/"])
        .run()
        .code(0);
    let want = format!("shop.test:{port}");
    assert_eq!(
        logged(&nginx),
        [&*want, &want, &want, "shop.test", "shop.test"]
    );

    let ran = Herd::new(&["run", "-n", "1", "--resolve", "shop.test:80:staging"])
        .args(&["http://shop.test/"])
        .run();
    ran.code(2);
    assert!(
        ran.stderr().contains("is not an IP address"),
        "{}",
        ran.stderr()
    );
}

/// A CA, a server certificate for shop.test and a client certificate it signed, as PEM files.
struct Pki {
    dir: TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = TempDir::new("pki");
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "herd test CA");
        let ca = ca.self_signed(&ca_key).unwrap();
        let leaf = |names: Vec<String>, cn: &str, stem: &str| {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(names).unwrap();
            p.distinguished_name.push(DnType::CommonName, cn);
            let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
            std::fs::write(dir.path(&format!("{stem}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.path(&format!("{stem}.key")), key.serialize_pem()).unwrap();
        };
        leaf(vec!["shop.test".into()], "shop.test", "server");
        leaf(vec![], "load-client", "client");
        std::fs::write(dir.path("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.path("ca.key"), ca_key.serialize_pem()).unwrap();
        Pki { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path(name).display().to_string()
    }
}

#[test]
fn a_client_certificate_and_a_private_ca_meet_nginx_verifying_clients() {
    let pki = Pki::new();
    let nginx = Nginx::start_configured(
        r#"log_format tls '$ssl_server_name $ssl_client_verify $ssl_client_s_dn';"#,
        &format!(
            "access_log requests.log tls;
             ssl_certificate {}; ssl_certificate_key {};
             ssl_client_certificate {}; ssl_verify_client on;",
            pki.path("server.pem"),
            pki.path("server.key"),
            pki.path("ca.pem")
        ),
        "ssl",
    );
    let port = nginx.addr.port();
    let url = format!("https://shop.test:{port}/");
    let resolve = format!("shop.test:{port}:127.0.0.1");
    let dir = TempDir::new("client-cert");
    let base = || {
        Herd::new(&[
            "run",
            "-q",
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "3",
            "--resolve",
            &resolve,
        ])
        .args(&["--cacert", &pki.path("ca.pem")])
    };
    let r = base()
        .args(&[
            "--cert",
            &pki.path("client.pem"),
            "--key",
            &pki.path("client.key"),
            &url,
        ])
        .json(&dir.path("ok.json"))
        .run()
        .code(0)
        .json();
    assert_eq!(r["status"]["200"], 3);
    assert_eq!(logged(&nginx), ["shop.test SUCCESS CN=load-client"; 3]);

    // Without the client certificate nginx answers 400 to every request.
    let r = base()
        .args(&[&url])
        .json(&dir.path("no-cert.json"))
        .run()
        .json();
    assert_eq!(r["status"]["400"], 3, "{}", r["status"]);

    // Without the private CA the server's certificate is not trusted.
    let r = Herd::new(&[
        "run",
        "-q",
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "2",
        "--resolve",
        &resolve,
    ])
    .args(&[
        "--cert",
        &pki.path("client.pem"),
        "--key",
        &pki.path("client.key"),
        &url,
    ])
    .json(&dir.path("no-ca.json"))
    .run()
    .json();
    assert_eq!(r["errors"]["tls"], 2, "{}", r["errors"]);

    let ran = base()
        .args(&["--cert", &pki.path("nothing.pem"), &url])
        .run();
    ran.code(2);
    assert!(ran.stderr().contains("--cert"), "{}", ran.stderr());
}

/// `openssl` run in `dir`, which must succeed.
fn openssl(dir: &TempDir, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(&dir.0)
        .output()
        .expect("openssl is not installed");
    assert!(out.status.success(), "openssl {args:?}: {}", stderr(&out));
}

#[test]
fn a_v1_client_certificate_curl_takes_is_taken_and_certificate_errors_name_their_flags() {
    let pki = Pki::new();
    // What `openssl x509 -req` makes without an extensions file: an X.509 v1 certificate.
    openssl(
        &pki.dir,
        &[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "v1.key",
            "-subj",
            "/CN=v1-client",
            "-out",
            "v1.csr",
        ],
    );
    openssl(
        &pki.dir,
        &[
            "x509",
            "-req",
            "-in",
            "v1.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "v1.pem",
        ],
    );
    let nginx = Nginx::start_configured(
        r#"log_format tls '$ssl_client_verify $ssl_client_s_dn';"#,
        &format!(
            "access_log requests.log tls;
             ssl_certificate {}; ssl_certificate_key {};
             ssl_client_certificate {}; ssl_verify_client on;",
            pki.path("server.pem"),
            pki.path("server.key"),
            pki.path("ca.pem")
        ),
        "ssl",
    );
    let port = nginx.addr.port();
    let url = format!("https://shop.test:{port}/");
    let resolve = format!("shop.test:{port}:127.0.0.1");
    // curl takes it: the certificate is one a user has.
    let curl = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--resolve",
            &resolve,
        ])
        .args([
            "--cacert",
            &pki.path("ca.pem"),
            "--cert",
            &pki.path("v1.pem"),
        ])
        .args(["--key", &pki.path("v1.key"), &url])
        .output()
        .expect("curl is not installed");
    assert_eq!(stdout(&curl), "200", "curl: {}", stderr(&curl));
    let base = || {
        Herd::new(&[
            "run",
            "-q",
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "3",
            "--resolve",
            &resolve,
        ])
    };
    let dir = TempDir::new("v1-cert");
    let r = base()
        .args(&[
            "--cacert",
            &pki.path("ca.pem"),
            "--cert",
            &pki.path("v1.pem"),
        ])
        .args(&["--key", &pki.path("v1.key"), &url])
        .json(&dir.path("v1.json"))
        .run()
        .code(0)
        .json();
    assert_eq!(r["status"]["200"], 3, "{}", r["error_samples"]);
    let log = logged(&nginx);
    assert_eq!(log.len(), 4, "curl's and herd's: {log:?}");
    assert!(log.iter().all(|l| l == "SUCCESS CN=v1-client"), "{log:?}");

    // A key that is not the certificate's: said before anything is sent.
    let ran = base()
        .args(&[
            "--cacert",
            &pki.path("ca.pem"),
            "--cert",
            &pki.path("client.pem"),
        ])
        .args(&["--key", &pki.path("v1.key"), &url])
        .run();
    ran.code(2);
    let err = ran.stderr();
    assert!(
        err.contains("--key") && err.contains("does not match --cert"),
        "{err}"
    );
    assert_eq!(logged(&nginx).len(), 4, "nothing sent");

    // A server certificate herd does not trust: the flags that change it, in words.
    let r = base()
        .args(&[
            "--cert",
            &pki.path("v1.pem"),
            "--key",
            &pki.path("v1.key"),
            &url,
        ])
        .json(&dir.path("untrusted.json"))
        .run()
        .json();
    let sample = r["error_samples"]["tls"].as_str().unwrap_or_default();
    assert!(
        sample.contains("--cacert") && sample.contains("-k"),
        "{sample}"
    );
    assert!(
        !sample.contains("UnknownIssuer") && !sample.contains("Other("),
        "no debug text: {sample}"
    );
}
