use herd_http::h3::{EarlyData, H3Client, H3Config, H3Request, IDLE_TIMEOUT};
use herd_http::{serialize, RequestSpec, Target, TlsOptions};
use herd_metrics::ErrorKind;
use herd_testkit::Caddy;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(10);

/// Caddy's internal CA is not in Mozilla's roots: the test trusts any certificate, as a user
/// measuring their own server with `--insecure` does.
fn insecure() -> TlsOptions {
    TlsOptions {
        insecure: true,
        ..TlsOptions::default()
    }
}

fn request(target: &Target, method: &str, path: &str) -> H3Request {
    let spec = RequestSpec {
        method: method.to_owned(),
        path: path.to_owned(),
        ..RequestSpec::default()
    };
    H3Request::from_http1(&serialize(target, &spec).unwrap(), "https").unwrap()
}

/// Asks `client` for `req` until `config` holds a session ticket: the server sends a
/// connection its ticket after the handshake, at its own pace (on a loaded machine, after more
/// than one answer). The requests asked.
fn until_ticket(client: &mut H3Client, config: &H3Config, req: &H3Request) -> usize {
    let mut asked = 0;
    while config.tickets_held() == 0 && asked < 50 {
        assert_eq!(client.exchange(req, LIMIT).unwrap().status, 200);
        asked += 1;
    }
    assert!(
        config.tickets_held() > 0,
        "no ticket after {asked} requests"
    );
    asked
}

#[test]
fn statuses_and_bytes_agree_with_caddys_access_log() {
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let caddy = Caddy::start(&[("big.bin", &big)]);
    let target = Target::parse(&caddy.url("/")).unwrap();
    let config = H3Config::new(&target, insecure(), IDLE_TIMEOUT).unwrap();
    let (mut client, handshake) = H3Client::connect(&config, LIMIT).unwrap();
    assert!(
        !handshake.resumed && handshake.early_data == EarlyData::NotSent,
        "a first connection has no session to resume"
    );
    assert!(handshake.time > Duration::ZERO && handshake.time < LIMIT);

    let plan = [
        ("GET", "/hello", 200, 5),
        ("GET", "/missing", 404, 4),
        ("GET", "/big.bin", 200, big.len()),
        ("HEAD", "/big.bin", 200, 0),
        ("GET", "/nothing-here", 404, 0),
    ];
    let rounds = 4;
    let (mut bodies, mut statuses) = (0u64, Vec::new());
    for _ in 0..rounds {
        for (method, path, status, len) in plan {
            let req = request(&target, method, path).keeping_response(path == "/big.bin");
            let resp = client.exchange(&req, LIMIT).unwrap();
            assert_eq!(
                (resp.status, resp.body_len),
                (status, len as u64),
                "{method} {path}"
            );
            assert!(
                resp.bytes_received > resp.body_len,
                "frames carry a head too"
            );
            assert!(resp.first_byte.is_some());
            if method == "GET" && path == "/big.bin" {
                assert!(resp.body == big, "the body arrives whole and in order");
            }
            bodies += resp.body_len;
            statuses.push(resp.status);
        }
    }
    client.close();

    let log = caddy.access_log(plan.len() * rounds);
    assert_eq!(log.len(), plan.len() * rounds, "one log entry per request");
    for entry in &log {
        assert_eq!(entry["request"]["proto"], "HTTP/3.0", "{entry}");
    }
    let logged: Vec<u16> = log
        .iter()
        .map(|e| e["status"].as_u64().unwrap() as u16)
        .collect();
    let logged_bytes: u64 = log.iter().map(|e| e["size"].as_u64().unwrap()).sum();
    assert_eq!(logged, statuses);
    assert_eq!(logged_bytes, bodies);
}

#[test]
fn a_reconnect_resumes_its_session_and_sends_a_get_in_0rtt_but_never_a_post() {
    let caddy = Caddy::start(&[]);
    let target = Target::parse(&caddy.url("/hello")).unwrap();
    let config = H3Config::new(&target, insecure(), IDLE_TIMEOUT).unwrap();
    let get = request(&target, "GET", "/hello");
    let (mut first, handshake) = H3Client::connect(&config, LIMIT).unwrap();
    assert!(!handshake.resumed);
    assert_eq!(first.exchange(&get, LIMIT).unwrap().status, 200);
    let early = until_ticket(&mut first, &config, &get);
    first.close();

    let mut again = H3Client::start(&config).unwrap();
    let resp = again.exchange(&get, LIMIT).unwrap();
    assert_eq!((resp.status, resp.body_len), (200, 5));
    let handshake = again
        .handshake()
        .expect("the handshake is over with the response");
    assert!(handshake.resumed, "{handshake:?}");
    assert_eq!(handshake.early_data, EarlyData::Accepted, "{handshake:?}");
    // A ticket serves one resumption; this connection's own comes after its handshake.
    let gets = 1 + early + until_ticket(&mut again, &config, &get);
    again.close();

    // A POST may not be replayed: it waits for the handshake's end even on a resumed session.
    let mut post_conn = H3Client::start(&config).unwrap();
    let post = request(&target, "POST", "/hello");
    assert_eq!(post_conn.exchange(&post, LIMIT).unwrap().status, 200);
    let handshake = post_conn.handshake().unwrap();
    assert!(handshake.resumed, "{handshake:?}");
    assert_eq!(handshake.early_data, EarlyData::NotSent, "{handshake:?}");
    post_conn.close();

    // Caddy logs each request once: none was lost or doubled by going early.
    let log = caddy.access_log(2 + gets);
    assert_eq!(log.len(), 2 + gets);
    let methods: Vec<&str> = log
        .iter()
        .map(|e| e["request"]["method"].as_str().unwrap())
        .collect();
    let mut sent = vec!["GET"; 1 + gets];
    sent.push("POST");
    assert_eq!(methods, sent);
}

#[test]
fn a_server_that_goes_away_fails_the_request_once_in_its_class() {
    let mut caddy = Caddy::start(&[]);
    let target = Target::parse(&caddy.url("/hello")).unwrap();
    let config = H3Config::new(&target, insecure(), IDLE_TIMEOUT).unwrap();
    let (mut client, _) = H3Client::connect(&config, LIMIT).unwrap();
    let req = request(&target, "GET", "/hello");
    assert_eq!(client.exchange(&req, LIMIT).unwrap().status, 200);

    caddy.kill();
    // Nothing listens on the port any more: the kernel answers the request's packets with ICMP
    // port unreachable, long before QUIC's idle timeout would notice the silence.
    let failure = client.exchange(&req, LIMIT).unwrap_err();
    assert_eq!(
        failure.kind,
        ErrorKind::ConnectRefused,
        "{}",
        failure.message
    );
    assert!(failure.message.contains("UDP"), "{}", failure.message);
}

#[test]
fn http3_needs_an_https_url() {
    let target = Target::parse("http://127.0.0.1:8080/").unwrap();
    let err = H3Config::new(&target, TlsOptions::default(), IDLE_TIMEOUT).unwrap_err();
    assert!(
        err.to_string().contains("use \"https://127.0.0.1:8080/\""),
        "{err}"
    );
}
