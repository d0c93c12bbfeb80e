//! `auth=hmac:KEY`: a route that wants an HS256 JSON Web Token (RFC 7519) signed with KEY in
//! `Authorization: Bearer TOKEN`, the way sites that dropped server sessions check their users.
//! A token passes when its header says `"alg":"HS256"`, its signature is right (compared in
//! constant time) and its `exp` claim, if any, is not past; anything else is answered 401.
//! The mock keeps no state: a token is all it needs, which is the point of such tokens.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::response::Compiled;

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether a request may have the route's answer: it needs no token, or carries a valid one.
pub(crate) fn authorized(route: &Compiled, authorization: Option<&[u8]>) -> bool {
    route
        .auth_key
        .as_ref()
        .is_none_or(|key| verify_bearer(authorization, key, now_unix()))
}

/// Whether `authorization` (the header's value, if the request had one) carries a valid token.
pub(crate) fn verify_bearer(authorization: Option<&[u8]>, key: &[u8], now_unix: u64) -> bool {
    let Some(value) = authorization.and_then(|v| std::str::from_utf8(v).ok()) else {
        return false;
    };
    let Some((scheme, token)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && verify_jwt(token.trim(), key, now_unix)
}

fn verify_jwt(token: &str, key: &[u8], now_unix: u64) -> bool {
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Ok(header_json), Ok(claims_json), Ok(sig)) = (
        URL_SAFE_NO_PAD.decode(header),
        URL_SAFE_NO_PAD.decode(claims),
        URL_SAFE_NO_PAD.decode(sig),
    ) else {
        return false;
    };
    // `alg: none` and other algorithms are refused: the key decides, not the token.
    if json_field(&header_json, "alg") != Some(b"\"HS256\"".as_slice()) {
        return false;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(&token.as_bytes()[..header.len() + 1 + claims.len()]);
    if mac.verify_slice(&sig).is_err() {
        return false;
    }
    match json_field(&claims_json, "exp") {
        None => true,
        Some(exp) => std::str::from_utf8(exp)
            .ok()
            .and_then(|e| e.parse::<f64>().ok())
            .is_some_and(|exp| exp >= now_unix as f64),
    }
}

/// The raw value of a top-level `"name": value` in a flat JSON object (a string with its
/// quotes, or a number): enough for a JWT's `alg` and `exp`, without a JSON parser here.
fn json_field<'a>(json: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let quoted = format!("\"{name}\"");
    let at = json
        .windows(quoted.len())
        .position(|w| w == quoted.as_bytes())?;
    let rest = &json[at + quoted.len()..];
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|&b| b == b'"')? + 1
    } else {
        rest.iter()
            .position(|&b| b == b',' || b == b'}' || b.is_ascii_whitespace())
            .unwrap_or(rest.len())
    };
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// jwt.io's HS256 example, signed with `your-256-bit-secret`.
    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.\
        eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.\
        SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    const KEY: &[u8] = b"your-256-bit-secret";
    const NOW: u64 = 1_700_000_000;

    fn bearer(token: &str) -> Vec<u8> {
        format!("Bearer {token}").into_bytes()
    }

    fn sign(header: &str, claims: &str, key: &[u8]) -> String {
        let t = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(claims)
        );
        let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
        mac.update(t.as_bytes());
        format!(
            "{t}.{}",
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        )
    }

    #[test]
    fn the_right_token_passes() {
        assert!(verify_bearer(Some(&bearer(JWT)), KEY, NOW));
        assert!(verify_bearer(
            Some(
                b"bearer  "
                    .iter()
                    .chain(JWT.as_bytes())
                    .copied()
                    .collect::<Vec<_>>()
                    .as_slice()
            ),
            KEY,
            NOW
        ));
    }

    #[test]
    fn a_tampered_missing_or_foreign_token_is_refused() {
        assert!(!verify_bearer(None, KEY, NOW), "no header");
        assert!(!verify_bearer(Some(JWT.as_bytes()), KEY, NOW), "no Bearer");
        assert!(!verify_bearer(Some(&bearer(JWT)), b"another key", NOW));
        // the claims changed (John -> Jane), the signature kept
        let forged = JWT.replace("IkpvaG4gRG9lIi", "IkphbmUgRG9lIi");
        assert_ne!(forged, JWT);
        assert!(!verify_bearer(Some(&bearer(&forged)), KEY, NOW));
        let mut sig_off = JWT.to_owned();
        sig_off.pop();
        sig_off.push('d');
        assert!(!verify_bearer(Some(&bearer(&sig_off)), KEY, NOW));
        let none = sign(r#"{"alg":"none"}"#, r#"{"sub":"x"}"#, KEY);
        assert!(!verify_bearer(Some(&bearer(&none)), KEY, NOW), "alg none");
        assert!(!verify_bearer(Some(&bearer("a.b")), KEY, NOW));
        assert!(!verify_bearer(Some(&bearer("")), KEY, NOW));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let h = r#"{"alg":"HS256","typ":"JWT"}"#;
        let live = sign(h, &format!(r#"{{"sub":"a","exp":{}}}"#, NOW + 60), KEY);
        assert!(verify_bearer(Some(&bearer(&live)), KEY, NOW));
        let dead = sign(h, &format!(r#"{{"sub":"a","exp": {} }}"#, NOW - 1), KEY);
        assert!(!verify_bearer(Some(&bearer(&dead)), KEY, NOW));
        let junk = sign(h, r#"{"exp":"soon"}"#, KEY);
        assert!(!verify_bearer(Some(&bearer(&junk)), KEY, NOW));
    }
}
