//! The functions a template may call: what sites that sign tokens instead of keeping sessions
//! need (HMAC-SHA256, SHA-256, base64url, HS256 JWTs; the RustCrypto crates), and fresh values
//! (`uuid()`, `random_int(a, b)`, `now_unix()`). Random ones draw from the user's own seeded
//! stream, so `--seed`/`seed:` makes them reproducible like the rest of a user's choices.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::cell::Cell;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    HmacSha256,
    Sha256,
    Base64Url,
    JwtHs256,
    Uuid,
    NowUnix,
    RandomInt,
    Concat,
    JsonString,
    Env,
}

/// Name, arguments as documented, least and most arguments (`usize::MAX`: any number).
const TABLE: [(Func, &str, &str, usize, usize); 10] = [
    (Func::HmacSha256, "hmac_sha256", "key, data", 2, 2),
    (Func::Sha256, "sha256", "data", 1, 1),
    (Func::Base64Url, "base64url", "data", 1, 1),
    (Func::JwtHs256, "jwt_hs256", "claims_json, key", 2, 2),
    (Func::Uuid, "uuid", "", 0, 0),
    (Func::NowUnix, "now_unix", "[offset_seconds]", 0, 1),
    (Func::RandomInt, "random_int", "min, max", 2, 2),
    (Func::Concat, "concat", "a, b, ...", 1, usize::MAX),
    (Func::JsonString, "json_string", "text", 1, 1),
    (Func::Env, "env", "'NAME'", 1, 1),
];

impl Func {
    pub fn names() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|t| t.1)
    }

    pub fn by_name(name: &str) -> Option<Func> {
        TABLE.iter().find(|t| t.1 == name).map(|t| t.0)
    }

    fn row(self) -> &'static (Func, &'static str, &'static str, usize, usize) {
        TABLE
            .iter()
            .find(|t| t.0 == self)
            .expect("every function is in the table")
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// `hmac_sha256(key, data)`, for messages.
    pub fn signature(self) -> String {
        format!("{}({})", self.name(), self.row().2)
    }

    pub fn arity(self) -> (usize, usize) {
        (self.row().3, self.row().4)
    }

    /// Same arguments, same result: a call with literal arguments is computed once, at compile
    /// time, and its request can stay static.
    pub fn is_pure(self) -> bool {
        !matches!(self, Func::Uuid | Func::NowUnix | Func::RandomInt)
    }

    /// The result for `args` (already rendered); `random` draws from the user's stream.
    pub fn call(self, args: &[String], random: &dyn Fn() -> u64) -> String {
        let arg = |i: usize| args.get(i).map_or("", String::as_str);
        match self {
            Func::HmacSha256 => hex(&hmac_sha256(arg(0).as_bytes(), arg(1).as_bytes())),
            Func::Sha256 => hex(&Sha256::digest(arg(0).as_bytes())),
            Func::Base64Url => URL_SAFE_NO_PAD.encode(arg(0)),
            Func::JwtHs256 => jwt_hs256(arg(0), arg(1)),
            Func::Uuid => uuid(random(), random()),
            Func::NowUnix => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64);
                let offset: i64 = arg(0).parse().unwrap_or(0);
                (now + offset).to_string()
            }
            Func::RandomInt => {
                let (a, b): (i64, i64) = (arg(0).parse().unwrap_or(0), arg(1).parse().unwrap_or(0));
                let span = (b as i128 - a as i128 + 1).max(1) as u128;
                // Lemire's multiply-shift: one draw, bias below 2^-64 for any span that fits.
                let pick = ((random() as u128 * span) >> 64) as i128;
                (a as i128 + pick).to_string()
            }
            Func::Concat => args.concat(),
            Func::JsonString => serde_json::to_string(arg(0)).expect("a string serializes"),
            // Checked to be set when the file is compiled (`expr::check_literals`).
            Func::Env => std::env::var(arg(0)).unwrap_or_default(),
        }
    }
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// An HS256 JSON Web Token (RFC 7519): the claims as given, signed with `key`.
fn jwt_hs256(claims: &str, key: &str) -> String {
    let mut token = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(claims));
    let sig = hmac_sha256(key.as_bytes(), token.as_bytes());
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(sig));
    token
}

/// A version 4 (random) UUID from 128 bits.
fn uuid(hi: u64, lo: u64) -> String {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A user's stream of random numbers for template functions (splitmix64): one word of state,
/// seeded from the workload's seed and the user's id, apart from the user's other draws so
/// adding a `uuid()` does not change which scenarios and rows the user picks.
#[derive(Debug)]
pub struct Entropy(Cell<u64>);

impl Entropy {
    pub fn new(seed: u64, user: u64) -> Entropy {
        Entropy(Cell::new(
            seed.rotate_left(17) ^ user.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x5EED,
        ))
    }

    pub fn next(&self) -> u64 {
        let s = self.0.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.0.set(s);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: Func, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let e = Entropy::new(1, 2);
        f.call(&args, &|| e.next())
    }

    /// RFC 4231 test cases 1 and 2.
    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        let key = "\x0b".repeat(20);
        assert_eq!(
            call(Func::HmacSha256, &[&key, "Hi There"]),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            call(Func::HmacSha256, &["Jefe", "what do ya want for nothing?"]),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn sha256_and_base64url_match_known_vectors() {
        assert_eq!(
            call(Func::Sha256, &["abc"]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(call(Func::Base64Url, &["\u{fb}\u{ff}"]), "w7vDvw");
        assert_eq!(call(Func::Base64Url, &["hi?>"]), "aGk_Pg");
    }

    /// The example token of RFC 7515 appendix A.1 is signed over different header bytes; this
    /// one is jwt.io's well-known HS256 example, with its key.
    #[test]
    fn jwt_hs256_matches_a_known_token() {
        let claims = r#"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#;
        assert_eq!(
            call(Func::JwtHs256, &[claims, "your-256-bit-secret"]),
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.\
             eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.\
             SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        );
    }

    #[test]
    fn random_values_are_seeded_per_user_and_in_range() {
        let a = Entropy::new(7, 1);
        let b = Entropy::new(7, 1);
        let c = Entropy::new(7, 2);
        let (x, y, z) = (a.next(), b.next(), c.next());
        assert_eq!(x, y, "same seed, same user, same stream");
        assert_ne!(x, z, "another user, another stream");
        let e = Entropy::new(3, 3);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let v: i64 = Func::RandomInt
                .call(&["-2".into(), "2".into()], &|| e.next())
                .parse()
                .unwrap();
            assert!((-2..=2).contains(&v), "{v}");
            seen[(v + 2) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s), "every value comes up");
        let u = call(Func::Uuid, &[]);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "{u}");
        assert!("89ab".contains(&u[19..20]), "{u}");
        let now: i64 = call(Func::NowUnix, &[]).parse().unwrap();
        let later: i64 = call(Func::NowUnix, &["3600"]).parse().unwrap();
        assert!(now > 1_600_000_000 && (3600..=3601).contains(&(later - now)));
        assert_eq!(call(Func::Concat, &["a", "b", "c"]), "abc");
        assert_eq!(call(Func::JsonString, &["say \"hi\""]), r#""say \"hi\"""#);
    }
}
