//! A virtual user's cookie jar, as a browser keeps one for a single site: what `Set-Cookie`
//! stored is sent back on every later request (siege's sessions). herd talks to one host, so
//! Domain is not checked; Path is ignored too (cookies are sent on every path), and a cookie is
//! removed by `Max-Age=0` or an empty value.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetCookie {
    pub name: String,
    pub value: String,
    pub remove: bool,
}

/// The name, value and whether it deletes the cookie; `None` for a malformed header.
pub fn parse_set_cookie(header: &str) -> Option<SetCookie> {
    let mut parts = header.split(';');
    let (name, value) = parts.next()?.split_once('=')?;
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let value = value.trim().trim_matches('"').to_owned();
    let expired = parts.any(|a| {
        a.split_once('=').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("max-age")
                && v.trim().parse::<i64>().is_ok_and(|n| n <= 0)
        })
    });
    Some(SetCookie {
        name: name.to_owned(),
        remove: expired || value.is_empty(),
        value,
    })
}

#[derive(Clone, Debug, Default)]
pub struct Jar {
    cookies: Vec<(String, String)>,
    /// Changes whenever a cookie does: requests serialized with the jar's cookies are reused
    /// until then.
    version: u64,
}

impl Jar {
    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    /// Stores what the response's `Set-Cookie` headers say.
    pub fn store(&mut self, headers: &[(String, String)]) {
        for (n, v) in headers {
            if !n.eq_ignore_ascii_case("set-cookie") {
                continue;
            }
            let Some(c) = parse_set_cookie(v) else {
                continue;
            };
            let same = self
                .cookies
                .iter()
                .any(|(k, v)| *k == c.name && *v == c.value);
            if same && !c.remove {
                continue;
            }
            self.cookies.retain(|(k, _)| *k != c.name);
            if !c.remove {
                self.cookies.push((c.name, c.value));
            }
            self.version += 1;
        }
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    /// The `Cookie` header value.
    pub fn header(&self) -> String {
        let mut s = String::new();
        for (i, (n, v)) in self.cookies.iter().enumerate() {
            if i > 0 {
                s.push_str("; ");
            }
            s.push_str(n);
            s.push('=');
            s.push_str(v);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &str) -> Vec<(String, String)> {
        vec![("Set-Cookie".into(), v.into())]
    }

    #[test]
    fn jar_stores_replaces_and_removes() {
        let mut jar = Jar::default();
        jar.store(&h("sid=1; Path=/; HttpOnly"));
        jar.store(&h("theme=dark"));
        assert_eq!(jar.header(), "sid=1; theme=dark");
        let v = jar.version();
        jar.store(&h("theme=dark; Path=/"));
        assert_eq!(jar.version(), v, "the same cookie again changes nothing");
        jar.store(&h("sid=2"));
        assert_eq!(jar.header(), "theme=dark; sid=2");
        assert!(jar.version() > v);
        jar.store(&h("theme=x; Max-Age=0"));
        assert_eq!(jar.header(), "sid=2");
        jar.store(&[("X-Other".into(), "a=b".into())]);
        jar.store(&h("garbage"));
        assert_eq!(jar.header(), "sid=2");
    }
}
