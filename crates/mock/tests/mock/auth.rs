//! `auth=hmac:KEY` over the wire: a route that answers 200 to a request bearing an HS256 JWT
//! signed with KEY, and 401 to one without, with a tampered one, or with one signed otherwise.

use crate::common::*;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

fn jwt(claims: &str, key: &str) -> String {
    let t = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    format!(
        "{t}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

fn get(c: &mut Client, path: &str, auth: Option<&str>) -> Response {
    let auth = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    c.send_get(path, &auth);
    c.response()
}

#[test]
fn a_route_with_auth_answers_only_a_token_signed_with_its_key() {
    let server = serve(&["/api/* auth=hmac:k3y", "/*"]);
    let mut c = Client::connect(server.local_addr());
    let token = jwt(r#"{"sub":"alice"}"#, "k3y");

    let ok = get(&mut c, "/api/me", Some(&format!("Bearer {token}")));
    assert_eq!(ok.status, 200, "{}", ok.text());

    let none = get(&mut c, "/api/me", None);
    assert_eq!(none.status, 401);
    assert_eq!(none.header("WWW-Authenticate"), Some("Bearer"));
    assert_eq!(none.text(), "missing or invalid bearer token\n");

    let (head, _) = token.rsplit_once('.').unwrap();
    let other = jwt(r#"{"sub":"mallory"}"#, "k3y");
    let (_, other_sig) = other.rsplit_once('.').unwrap();
    let spliced = format!("{head}.{other_sig}");
    assert_eq!(
        get(&mut c, "/api/me", Some(&format!("Bearer {spliced}"))).status,
        401
    );
    let tampered = token.replacen('.', ".e", 1);
    assert_eq!(
        get(&mut c, "/api/me", Some(&format!("Bearer {tampered}"))).status,
        401
    );
    let foreign = jwt(r#"{"sub":"alice"}"#, "other");
    assert_eq!(
        get(&mut c, "/api/me", Some(&format!("Bearer {foreign}"))).status,
        401
    );
    let expired = jwt(r#"{"sub":"alice","exp":1000}"#, "k3y");
    assert_eq!(
        get(&mut c, "/api/me", Some(&format!("Bearer {expired}"))).status,
        401
    );

    // other routes want nothing, and the connection stayed usable throughout
    assert_eq!(get(&mut c, "/open", None).status, 200);
    assert_eq!(server.shutdown().requests, 7);
}

#[test]
fn an_unknown_auth_scheme_is_refused_with_the_one_known() {
    let e = herd_mock::Route::parse("/ auth=basic:x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("auth=hmac:KEY"), "{e}");
    let e = herd_mock::Route::parse("/ auth=hmac:")
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs a key"), "{e}");
}
