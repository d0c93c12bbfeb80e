use serde_json::json;

use crate::common::*;

#[test]
fn the_api_answers_as_toxiproxy_does() {
    let srv = server(0);
    let api = srv.api_addr();
    let up = echo();
    let (status, v) = call(api, "GET", "/version", None);
    assert_eq!(status, 200);
    assert!(v["version"].as_str().unwrap().starts_with("herd-proxy"));

    let listen = create(api, "db", up);
    let (status, v) = call(api, "GET", "/proxies", None);
    assert_eq!(status, 200);
    assert_eq!(v["db"]["listen"], listen.to_string());
    assert_eq!(v["db"]["upstream"], up.to_string());
    assert_eq!(v["db"]["enabled"], true);
    assert_eq!(v["db"]["toxics"], json!([]));

    let (status, v) = call(
        api,
        "POST",
        "/proxies/db/toxics",
        Some(json!({"type": "latency", "stream": "upstream", "attributes": {"latency": 5}})),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v,
        json!({"attributes": {"latency": 5, "jitter": 0}, "name": "latency_upstream",
               "type": "latency", "stream": "upstream", "toxicity": 1.0})
    );
    let (status, v) = call(
        api,
        "PATCH",
        "/proxies/db/toxics/latency_upstream",
        Some(json!({"attributes": {"jitter": 2}})),
    );
    assert_eq!(
        (status, v["attributes"].clone()),
        (200, json!({"latency": 5, "jitter": 2}))
    );
    let (_, v) = call(api, "GET", "/proxies/db/toxics", None);
    assert_eq!(v.as_array().unwrap().len(), 1);

    // toxiproxy's errors, with its statuses.
    let (status, v) = call(
        api,
        "POST",
        "/proxies",
        Some(json!({"name": "db", "upstream": up.to_string()})),
    );
    assert_eq!(
        (status, v["error"].as_str().unwrap()),
        (409, "proxy already exists")
    );
    let (status, v) = call(api, "POST", "/proxies", Some(json!({"name": "x"})));
    assert_eq!(
        (status, v["error"].as_str().unwrap()),
        (400, "missing required field: upstream")
    );
    let (status, _) = call(api, "GET", "/proxies/nope", None);
    assert_eq!(status, 404);
    let (status, v) = call(
        api,
        "POST",
        "/proxies/db/toxics",
        Some(json!({"type": "latency", "stream": "upstream"})),
    );
    assert_eq!(
        (status, v["error"].as_str().unwrap()),
        (409, "toxic already exists")
    );
    let (status, _) = call(api, "DELETE", "/proxies/db/toxics/nope", None);
    assert_eq!(status, 404);

    let (status, _) = call(api, "DELETE", "/proxies/db/toxics/latency_upstream", None);
    assert_eq!(status, 204);
    let (status, _) = call(api, "POST", "/reset", None);
    assert_eq!(status, 204);
    let (status, _) = call(api, "DELETE", "/proxies/db", None);
    assert_eq!(status, 204);
    let (_, v) = call(api, "GET", "/proxies", None);
    assert_eq!(v, json!({}));
}

#[test]
fn populate_creates_each_proxy_and_keeps_one_unchanged() {
    let srv = server(0);
    let api = srv.api_addr();
    let (a, b) = (echo(), echo());
    let body = json!([
        {"name": "a", "listen": "127.0.0.1:0", "upstream": a.to_string()},
        {"name": "b", "listen": "127.0.0.1:0", "upstream": b.to_string(), "enabled": false}
    ]);
    let (status, v) = call(api, "POST", "/populate", Some(body));
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["proxies"].as_array().unwrap().len(), 2);
    let (_, v) = call(api, "GET", "/proxies", None);
    assert_eq!(
        (v["a"]["enabled"].clone(), v["b"]["enabled"].clone()),
        (json!(true), json!(false))
    );
    let (status, v) = call(api, "POST", "/populate", Some(json!([{"name": "c"}])));
    assert_eq!(
        (status, v["error"].as_str().unwrap()),
        (400, "missing required field: upstream at proxy 1")
    );
}

#[test]
fn a_disabled_proxy_refuses_connections_and_an_enabled_one_takes_them_again() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", echo());
    let mut c = std::io::BufReader::new(std::net::TcpStream::connect(listen).unwrap());
    assert_eq!(round_trip(&mut c, "one\n"), "one\n");
    let (status, v) = call(api, "POST", "/proxies/db", Some(json!({"enabled": false})));
    assert_eq!((status, v["enabled"].clone()), (200, json!(false)));
    // Its open connection was closed, and no new one is taken.
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut c, &mut rest);
    assert_eq!(rest, "");
    assert!(std::net::TcpStream::connect(listen).is_err());
    let (status, _) = call(api, "POST", "/proxies/db", Some(json!({"enabled": true})));
    assert_eq!(status, 200);
    let mut c = std::io::BufReader::new(std::net::TcpStream::connect(listen).unwrap());
    assert_eq!(round_trip(&mut c, "two\n"), "two\n");
}
