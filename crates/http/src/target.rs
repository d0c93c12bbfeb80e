//! The one host a run talks to, parsed and resolved once before the run starts: resolving per
//! connection would put DNS latency into connect times and let the address drift mid-run.

use crate::HttpError;
use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// Where requests go: scheme, host and port, the address they resolved to, and the default path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    scheme: Scheme,
    host: String,
    port: u16,
    addr: SocketAddr,
    /// How long resolving the host took; `None` when nothing was looked up (an IP address, or
    /// a route of `--resolve` or `--connect-to`).
    lookup: Option<Duration>,
    authority: String,
    path_and_query: String,
    /// `ws://` or `wss://`: each connection upgrades to a WebSocket (over http or https).
    websocket: bool,
}

impl Target {
    /// Parses an `http://` or `https://` URL and resolves its host. When a name resolves to
    /// several addresses the first one (in the resolver's preference order) is used for the
    /// whole run.
    pub fn parse(url: &str) -> Result<Target, HttpError> {
        Target::parse_routed(url, &[])
    }

    /// Parses a URL whose connections go where the first matching route says (`--resolve`,
    /// `--connect-to`); a URL no route matches resolves its own host.
    pub fn parse_routed(url: &str, routes: &[crate::Route]) -> Result<Target, HttpError> {
        let parts = UrlParts::split(url)?;
        let routed = routes.iter().find_map(|r| r.apply(parts.host, parts.port));
        let (addr, lookup) = match routed {
            Some(a) => (
                a.map_err(|source| HttpError::Resolve {
                    host: parts.host.to_owned(),
                    source,
                })?,
                None,
            ),
            None => resolve(parts.host, parts.port)?,
        };
        Ok(Target {
            scheme: parts.scheme,
            host: parts.host.to_owned(),
            port: parts.port,
            addr,
            lookup,
            authority: parts.authority(),
            path_and_query: parts.path_and_query().into_owned(),
            websocket: parts.websocket,
        })
    }

    /// The URL said `ws://` or `wss://`: connections speak WebSocket after an HTTP/1.1 Upgrade.
    pub fn websocket(&self) -> bool {
        self.websocket
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host name or IP address as written in the URL (IPv6 without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address every connection goes to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How long looking up the host's name took, before the run; `None` when no lookup was
    /// made (an IP address, or a route of `--resolve` or `--connect-to`).
    pub fn lookup(&self) -> Option<Duration> {
        self.lookup
    }

    /// The `Host` header value: the host, with the port when it is not the scheme's default.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The same site reached at another address: the Host header and TLS SNI keep the URL's
    /// name (a script's `thread.addr`, curl's `--connect-to`).
    pub fn with_addr(mut self, addr: SocketAddr) -> Target {
        self.addr = addr;
        self
    }

    /// The URL's path and query, `/` when it has none.
    pub fn path_and_query(&self) -> &str {
        &self.path_and_query
    }

    /// Whether `parts` names this target (same scheme, host and port).
    pub(crate) fn is(&self, parts: &UrlParts<'_>) -> bool {
        parts.scheme == self.scheme
            && parts.port == self.port
            && parts.host.eq_ignore_ascii_case(&self.host)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A WebSocket's URL as written: ws:// and wss://, over http's and https's connections.
        let scheme = match (self.websocket, self.scheme) {
            (true, Scheme::Http) => "ws",
            (true, Scheme::Https) => "wss",
            (false, s) => s.as_str(),
        };
        write!(f, "{scheme}://{}{}", self.authority, self.path_and_query)
    }
}

/// A request line cannot carry a raw space or control character: the server would read the rest
/// as the HTTP version. Said with the encoded URL to paste, not as an empty "bad path".
fn check_encoded(path: &str, url: &str) -> Result<(), HttpError> {
    let Some(bad) = path.bytes().find(|&b| b <= b' ' || b == 0x7f) else {
        return Ok(());
    };
    let what = if bad == b' ' {
        "a space"
    } else {
        "a control character"
    };
    let mut suggestion = String::with_capacity(url.len() + 8);
    for c in url.chars() {
        if c.is_ascii_control() || c == ' ' {
            suggestion.push_str(&format!("%{:02X}", c as u32));
        } else {
            suggestion.push(c);
        }
    }
    Err(HttpError::UnencodedPath {
        url: url.to_owned(),
        what,
        suggestion,
    })
}

/// A URL split into the pieces herd uses, without resolving anything.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    pub scheme: Scheme,
    /// Without brackets for IPv6.
    pub host: &'a str,
    pub port: u16,
    /// As written: may be empty or start with '?'; see [`UrlParts::path_and_query`].
    pub path: &'a str,
    /// `ws://` (http) or `wss://` (https).
    pub websocket: bool,
}

impl<'a> UrlParts<'a> {
    pub fn split(url: &'a str) -> Result<UrlParts<'a>, HttpError> {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(HttpError::MissingScheme {
                url: url.to_owned(),
                suggestion: format!("http://{}", url.trim_start_matches('/')),
            });
        };
        let websocket = scheme.eq_ignore_ascii_case("ws") || scheme.eq_ignore_ascii_case("wss");
        let scheme = if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("ws") {
            Scheme::Http
        } else if scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("wss") {
            Scheme::Https
        } else {
            return Err(HttpError::UnsupportedScheme {
                scheme: scheme.to_owned(),
                url: url.to_owned(),
            });
        };
        let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path_and_query) = rest.split_at(end);
        if let Some((_, host)) = authority.rsplit_once('@') {
            // The message must not echo the password into terminals and CI logs.
            return Err(HttpError::Credentials {
                url: format!(
                    "{}://…@{host}{path_and_query}",
                    url.split_once("://").map_or("", |p| p.0)
                ),
            });
        }
        check_encoded(path_and_query, url)?;
        let (host, port) = split_host_port(authority, url)?;
        let port = match port {
            None => scheme.default_port(),
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => {
                    return Err(HttpError::BadPort {
                        port: p.to_owned(),
                        url: url.to_owned(),
                    })
                }
            },
        };
        Ok(UrlParts {
            scheme,
            host,
            port,
            path: path_and_query,
            websocket,
        })
    }

    /// The request target: "http://h" means "/" and "http://h?q" means "/?q".
    pub fn path_and_query(&self) -> Cow<'a, str> {
        match self.path {
            "" => Cow::Borrowed("/"),
            p if p.starts_with('?') => Cow::Owned(format!("/{p}")),
            p => Cow::Borrowed(p),
        }
    }

    /// The `Host` header value.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.to_owned()
        };
        if self.port == self.scheme.default_port() {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

fn split_host_port<'a>(
    authority: &'a str,
    url: &str,
) -> Result<(&'a str, Option<&'a str>), HttpError> {
    let bad = |reason| HttpError::BadHost {
        host: authority.to_owned(),
        url: url.to_owned(),
        reason,
    };
    if authority.is_empty() {
        return Err(HttpError::MissingHost {
            url: url.to_owned(),
        });
    }
    if let Some(v6) = authority.strip_prefix('[') {
        let Some((host, after)) = v6.split_once(']') else {
            return Err(bad("unclosed '['"));
        };
        if host.parse::<Ipv6Addr>().is_err() {
            return Err(bad("not an IPv6 address"));
        }
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(bad("expected ':' and a port after ']'")),
            },
        };
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    if host.is_empty() {
        return Err(HttpError::MissingHost {
            url: url.to_owned(),
        });
    }
    if host.contains(':') {
        return Err(bad(
            "IPv6 addresses go in brackets, as in http://[::1]:8080/",
        ));
    }
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    {
        return Err(bad(
            "expected a DNS name or IP address (use punycode for international names)",
        ));
    }
    Ok((host, port))
}

/// The first address of `host` and how long the lookup took (the system's resolver:
/// /etc/hosts, then DNS, as every other program on the machine).
fn resolve(host: &str, port: u16) -> Result<(SocketAddr, Option<Duration>), HttpError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok((SocketAddr::new(ip, port), None));
    }
    let began = Instant::now();
    let mut addrs = (host, port)
        .to_socket_addrs()
        .map_err(|source| HttpError::Resolve {
            host: host.to_owned(),
            source,
        })?;
    let took = began.elapsed();
    let addr = addrs.next().ok_or_else(|| HttpError::NoAddress {
        host: host.to_owned(),
    })?;
    Ok((addr, Some(took)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_urls_split_into_the_parts_requests_use() {
        // (url, "scheme host port Host-header path")
        let table = [
            (
                "http://127.0.0.1:8080/a?b=1",
                "http 127.0.0.1 8080 127.0.0.1:8080 /a?b=1",
            ),
            ("http://example.com", "http example.com 80 example.com /"),
            (
                "HTTPS://Example.com/x#frag",
                "https Example.com 443 Example.com /x",
            ),
            ("https://h:443/", "https h 443 h /"),
            ("https://h:80/", "https h 80 h:80 /"),
            ("http://[::1]:9000/p", "http ::1 9000 [::1]:9000 /p"),
            ("http://[::1]", "http ::1 80 [::1] /"),
            ("http://h?q=1", "http h 80 h /?q=1"),
        ];
        for (url, want) in table {
            let p = UrlParts::split(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            let got = format!(
                "{} {} {} {} {}",
                p.scheme.as_str(),
                p.host,
                p.port,
                p.authority(),
                p.path_and_query()
            );
            assert_eq!(got, want, "{url}");
        }
    }

    #[test]
    fn bad_urls_say_what_to_fix() {
        let table = [
            (
                "localhost:8080/x",
                r#"missing scheme in "localhost:8080/x": did you mean "http://localhost:8080/x"?"#,
            ),
            (
                "ftp://h/",
                r#"unsupported scheme "ftp" in "ftp://h/": herd speaks http://, https://, ws:// and wss://"#,
            ),
            ("http:///x", r#"missing host in "http:///x""#),
            ("http://:80/", r#"missing host in "http://:80/""#),
            (
                "http://h:99999/",
                r#"bad port "99999" in "http://h:99999/": expected a number from 1 to 65535"#,
            ),
            (
                "http://h:0/",
                r#"bad port "0" in "http://h:0/": expected a number from 1 to 65535"#,
            ),
            (
                "http://h:/",
                r#"bad port "" in "http://h:/": expected a number from 1 to 65535"#,
            ),
            (
                "http://h:+80/",
                r#"bad port "+80" in "http://h:+80/": expected a number from 1 to 65535"#,
            ),
            (
                "http://u:p@h/",
                r#"credentials in "http://…@h/" are not supported: send an Authorization header instead"#,
            ),
            (
                "http://::1/",
                r#"bad host "::1" in "http://::1/": IPv6 addresses go in brackets, as in http://[::1]:8080/"#,
            ),
            (
                "http://[zz]/",
                r#"bad host "[zz]" in "http://[zz]/": not an IPv6 address"#,
            ),
            (
                "http://h/a b",
                r#"the path of "http://h/a b" has a space: percent-encode it, as in "http://h/a%20b" (a space is %20)"#,
            ),
            (
                "http://h/a?q=\t",
                r#"the path of "http://h/a?q=\t" has a control character: percent-encode it, as in "http://h/a?q=%09" (a space is %20)"#,
            ),
            (
                "http://a b/",
                r#"bad host "a b" in "http://a b/": expected a DNS name or IP address (use punycode for international names)"#,
            ),
        ];
        for (url, want) in table {
            let err = UrlParts::split(url).expect_err(url);
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn a_websockets_url_is_shown_as_written() {
        for url in [
            "ws://127.0.0.1:9/chat?x=1",
            "wss://127.0.0.1/",
            "http://127.0.0.1:8/",
        ] {
            assert_eq!(Target::parse(url).unwrap().to_string(), url);
        }
    }

    #[test]
    fn ip_literals_need_no_resolver() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        assert_eq!(t.addr(), "127.0.0.1:8080".parse().unwrap());
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!(t.addr(), "[::1]:443".parse().unwrap());
        assert_eq!(t.to_string(), "https://[::1]/");
        assert_eq!(t.lookup(), None, "no lookup to time");
    }

    #[test]
    fn a_names_lookup_is_timed_and_a_route_makes_none() {
        let t = Target::parse("http://localhost:8080/").unwrap();
        assert!(t.lookup().is_some(), "localhost is looked up (/etc/hosts)");
        let routes = [crate::Route::resolve("shop.example:80:127.0.0.1").unwrap()];
        let t = Target::parse_routed("http://shop.example/", &routes).unwrap();
        assert_eq!(t.lookup(), None, "--resolve looks nothing up");
    }

    #[test]
    fn unresolvable_host_is_named_in_the_error() {
        // `.invalid` is reserved (RFC 2606): no resolver may answer for it.
        let err = Target::parse("http://herd-test.invalid/").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(r#"cannot resolve host "herd-test.invalid": "#),
            "{err}"
        );
    }
}
