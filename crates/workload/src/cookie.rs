//! A virtual user's cookie jar, kept as a browser keeps one (RFC 6265, by the `cookie_store`
//! crate): a cookie goes back only to the domain and path it was set for, not after it expires
//! (`Expires`, `Max-Age`), and a `Secure` one only over https (or to loopback, which browsers
//! count as secure too). A user that never got a cookie
//! pays one pointer for its jar: memory follows users, and most users of most sites get none.

use cookie_store::{CookieExpiration, CookieStore};
use herd_http::Target;
use std::cell::RefCell;
use time::OffsetDateTime;
use url::Url;

/// The name and value a `Set-Cookie` header sets; `None` for a malformed header.
pub fn parse_set_cookie(header: &str) -> Option<(String, String)> {
    let c = cookie::Cookie::parse(header).ok()?;
    Some((c.name().to_owned(), c.value().to_owned()))
}

#[derive(Clone, Debug, Default)]
pub struct Jar {
    store: Option<Box<Stored>>,
}

#[derive(Clone, Debug, Default)]
struct Stored {
    cookies: CookieStore,
    /// Changes whenever what a request could carry does: requests serialized with the jar's
    /// cookies are reused until then.
    version: u64,
    /// The earliest time a stored cookie expires: past it, [`Jar::version`] looks again.
    next_expiry: Option<OffsetDateTime>,
    base: Base,
}

/// The target's `scheme://authority` parsed once, the base of its requests' URLs: parsing
/// the host (IDNA and all) again for every request was most of what a cookie cost.
#[derive(Clone, Debug, Default)]
struct Base(RefCell<Option<(String, Url)>>);

impl Base {
    /// The URL a request to `path` goes to, for matching cookies.
    fn url_of(&self, target: &Target, path: &str) -> Option<Url> {
        // A URL of its own, or a scheme-relative path (`//host/x`, which `join` would read
        // as another host): parsed whole, as before.
        if path.contains("://") || path.starts_with("//") {
            return url_of(target, path);
        }
        let path = match path {
            "" => target.path_and_query(),
            p if p.starts_with('/') => p,
            _ => "/",
        };
        let (scheme, authority) = (target.scheme().as_str(), target.authority());
        let mut cached = self.0.borrow_mut();
        let hit = cached.as_ref().is_some_and(|(k, _)| {
            k.len() == scheme.len() + 3 + authority.len()
                && k.starts_with(scheme)
                && k[scheme.len()..].starts_with("://")
                && k.ends_with(authority)
        });
        if !hit {
            let key = format!("{scheme}://{authority}");
            let url = Url::parse(&key).ok()?;
            *cached = Some((key, url));
        }
        // A path-absolute reference against the base is the URL parsed whole (WHATWG URL).
        cached.as_ref()?.1.join(path).ok()
    }
}

impl Jar {
    pub fn is_empty(&self) -> bool {
        self.store
            .as_ref()
            .is_none_or(|s| s.cookies.iter_unexpired().next().is_none())
    }

    /// Stores what the `Set-Cookie` headers of the response to `request` (its serialized bytes,
    /// request line first) say.
    pub fn store(&mut self, target: &Target, request: &[u8], headers: &[(String, String)]) {
        let mut set = headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .peekable();
        if set.peek().is_none() {
            return;
        }
        let s = self.store.get_or_insert_with(Box::default);
        let Some(url) = s.base.url_of(target, request_path(request)) else {
            return;
        };
        for (_, v) in set {
            let Ok(c) = cookie_store::Cookie::parse(v.as_str(), &url) else {
                continue;
            };
            let c = c.into_owned();
            let same = match (c.domain.as_cow(), c.is_expired()) {
                (Some(domain), false) => s
                    .cookies
                    .get(&domain, &String::from(&c.path), c.name())
                    .is_some_and(|old| old.value() == c.value()),
                _ => false,
            };
            if s.cookies.insert(c, &url).is_ok() && !same {
                s.version += 1;
            }
        }
        s.next_expiry = s
            .cookies
            .iter_unexpired()
            .filter_map(|c| match c.expires {
                CookieExpiration::AtUtc(t) => Some(t),
                CookieExpiration::SessionEnd => None,
            })
            .min();
    }

    /// Changes when the `Cookie` header of some request would: a cookie set, changed, removed,
    /// or past its expiry time.
    pub fn version(&self) -> u64 {
        let Some(s) = &self.store else { return 0 };
        match s.next_expiry {
            Some(t) if OffsetDateTime::now_utc() >= t => {
                let expired = s.cookies.iter_any().filter(|c| c.is_expired()).count() as u64;
                (s.version << 20) | expired.min((1 << 20) - 1)
            }
            _ => s.version << 20,
        }
    }

    /// The `Cookie` header for a request to `path` (a path, or a URL on the target); `None`
    /// when no cookie goes there.
    pub fn header(&self, target: &Target, path: &str) -> Option<String> {
        let s = self.store.as_ref()?;
        let url = s.base.url_of(target, path)?;
        let mut out = String::new();
        for (n, v) in s.cookies.get_request_values(&url) {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(n);
            out.push('=');
            out.push_str(v);
        }
        (!out.is_empty()).then_some(out)
    }
}

/// The URL a request to `path` goes to, for matching cookies.
fn url_of(target: &Target, path: &str) -> Option<Url> {
    if path.contains("://") {
        return Url::parse(path).ok();
    }
    let path = match path {
        "" => target.path_and_query(),
        p if p.starts_with('/') => p,
        _ => "/",
    };
    Url::parse(&format!(
        "{}://{}{path}",
        target.scheme().as_str(),
        target.authority()
    ))
    .ok()
}

/// The path of a serialized request: `GET /a/b?q HTTP/1.1` -> `/a/b?q`.
fn request_path(request: &[u8]) -> &str {
    let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
    std::str::from_utf8(line)
        .ok()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &str) -> Vec<(String, String)> {
        vec![("Set-Cookie".into(), v.into())]
    }

    fn target(url: &str) -> Target {
        Target::parse(url).unwrap()
    }

    const GET: &[u8] = b"GET /account/login HTTP/1.1\r\nHost: h\r\n\r\n";

    #[test]
    fn jar_stores_replaces_and_removes() {
        let t = target("http://127.0.0.1:8080");
        let mut jar = Jar::default();
        assert!(jar.is_empty());
        jar.store(&t, GET, &h("sid=1; Path=/; HttpOnly"));
        jar.store(&t, GET, &h("theme=dark; Path=/"));
        let mut got: Vec<_> = jar
            .header(&t, "/")
            .unwrap()
            .split("; ")
            .map(str::to_owned)
            .collect();
        got.sort();
        assert_eq!(got, ["sid=1", "theme=dark"]);
        let v = jar.version();
        jar.store(&t, GET, &h("theme=dark; Path=/"));
        assert_eq!(jar.version(), v, "the same cookie again changes nothing");
        jar.store(&t, GET, &h("sid=2; Path=/"));
        assert!(jar.version() > v);
        jar.store(&t, GET, &h("theme=x; Path=/; Max-Age=0"));
        assert_eq!(jar.header(&t, "/").as_deref(), Some("sid=2"));
        jar.store(&t, GET, &[("X-Other".into(), "a=b".into())]);
        jar.store(&t, GET, &h("garbage"));
        assert_eq!(jar.header(&t, "/").as_deref(), Some("sid=2"));
    }

    #[test]
    fn a_path_scoped_cookie_goes_only_under_its_path() {
        let t = target("http://127.0.0.1:8080");
        let mut jar = Jar::default();
        jar.store(&t, GET, &h("cart=c1; Path=/shop"));
        assert_eq!(jar.header(&t, "/shop/cart").as_deref(), Some("cart=c1"));
        assert_eq!(jar.header(&t, "/shop").as_deref(), Some("cart=c1"));
        assert_eq!(jar.header(&t, "/shopping"), None, "not a path prefix");
        assert_eq!(jar.header(&t, "/"), None);
        // without Path, the default path is the request's directory (RFC 6265 5.1.4)
        jar.store(&t, GET, &h("step=2"));
        assert_eq!(jar.header(&t, "/account/x").as_deref(), Some("step=2"));
        assert_eq!(jar.header(&t, "/other"), None);
    }

    #[test]
    fn an_expired_cookie_is_dropped() {
        let t = target("http://127.0.0.1:8080");
        let mut jar = Jar::default();
        jar.store(&t, GET, &h("sid=1; Path=/; Max-Age=3600"));
        assert_eq!(jar.header(&t, "/").as_deref(), Some("sid=1"));
        let v = jar.version();
        jar.store(
            &t,
            GET,
            &h("sid=1; Path=/; Expires=Thu, 01 Jan 1970 00:00:01 GMT"),
        );
        assert_eq!(jar.header(&t, "/"), None, "expired by the server");
        assert_ne!(jar.version(), v);
        jar.store(
            &t,
            GET,
            &h("old=1; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(jar.header(&t, "/"), None, "born expired: never stored");
        assert!(jar.is_empty());
    }

    /// Nothing is sent: Target::parse of an IP literal resolves nothing, and the jar only matches.
    #[test]
    fn a_secure_cookie_is_not_sent_over_http() {
        let plain = target("http://10.1.2.3:8080");
        let mut jar = Jar::default();
        jar.store(&plain, GET, &h("s=1; Path=/; Secure"));
        jar.store(&plain, GET, &h("p=2; Path=/"));
        assert_eq!(jar.header(&plain, "/").as_deref(), Some("p=2"));
        let secure = target("https://10.1.2.3:8443");
        let mut jar = Jar::default();
        jar.store(&secure, GET, &h("s=1; Path=/; Secure"));
        assert_eq!(jar.header(&secure, "/").as_deref(), Some("s=1"));
        assert_eq!(
            jar.header(&secure, "http://10.1.2.3:8443/"),
            None,
            "the same host over http"
        );
        // as in browsers, loopback counts as a secure context: a test site on 127.0.0.1 works
        let local = target("http://127.0.0.1:8080");
        let mut jar = Jar::default();
        jar.store(&local, GET, &h("s=1; Path=/; Secure"));
        assert_eq!(jar.header(&local, "/").as_deref(), Some("s=1"));
    }

    #[test]
    fn domains_match_as_rfc_6265_says() {
        let t = target("http://localhost:8080");
        let mut jar = Jar::default();
        jar.store(&t, GET, &h("host=1; Path=/"));
        jar.store(&t, GET, &h("other=1; Path=/; Domain=example.com"));
        assert_eq!(
            jar.header(&t, "/").as_deref(),
            Some("host=1"),
            "a foreign Domain is refused"
        );
        assert_eq!(
            jar.header(&t, "http://other.localhost:8080/"),
            None,
            "host-only"
        );
        jar.store(&t, GET, &h("wide=1; Path=/; Domain=localhost"));
        let sub = jar
            .header(&t, "http://api.localhost:8080/")
            .unwrap_or_default();
        assert_eq!(
            sub, "wide=1",
            "Domain= reaches subdomains, host-only does not"
        );
    }

    #[test]
    fn the_parsed_base_gives_the_url_a_whole_parse_gives() {
        // The base is parsed once per target; every request's URL must be the one parsing
        // the whole string gave, whatever the path, and a new target must not reuse the old.
        let base = Base::default();
        for url in [
            "http://127.0.0.1:8080/",
            "https://LocalHost/shop/",
            "http://[::1]:9000",
            "http://localhost:8080/",
        ] {
            let t = target(url);
            for path in [
                "",
                "/",
                "/items/42?page=2",
                "/a/./b/../c",
                "/caf%C3%A9/ü?q=a b#frag",
                "relative",
                "//other.example/x",
                "http://api.localhost:8080/y",
            ] {
                assert_eq!(base.url_of(&t, path), url_of(&t, path), "{url} + {path}");
            }
        }
    }

    #[test]
    fn extraction_reads_a_set_cookie() {
        assert_eq!(
            parse_set_cookie("sid=s1; Path=/"),
            Some(("sid".into(), "s1".into()))
        );
        assert_eq!(parse_set_cookie("garbage"), None);
    }
}
