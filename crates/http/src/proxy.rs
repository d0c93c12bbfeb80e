//! A forward proxy (`--proxy`, or `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`): http:// requests
//! go to the proxy in absolute form; https:// connections open a tunnel with `CONNECT`, then TLS
//! runs end to end through it. A tunnel costs one exchange when its connection opens and nothing
//! per request after that.

use crate::target::UrlParts;
use crate::{HttpError, Scheme, Target};
use base64::Engine;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

/// A proxy's reply head longer than this is refused rather than buffered.
const MAX_REPLY: usize = 16 * 1024;

/// What a proxy's 407 (Proxy Authentication Required) asks of the user.
pub const PROXY_CREDENTIALS: &str = "the proxy needs credentials: give them in its URL, \
     --proxy http://USER:PASSWORD@HOST:PORT (or in HTTP_PROXY / HTTPS_PROXY; \
     percent-encode an @ or : in them)";
const PROXY_CREDENTIALS_REFUSED: &str = "the proxy refused the credentials in its URL: check the \
     user and password of --proxy http://USER:PASSWORD@HOST:PORT (percent-encode an @ or : in \
     them)";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    /// `http://host:port`, without credentials (for messages and results).
    pub shown: String,
    pub addr: SocketAddr,
    /// `Basic ...` when the proxy URL carries `user:password@`.
    authorization: Option<String>,
}

impl Proxy {
    /// `http://[user:password@]host[:port]`; the port defaults to 1080, as in curl.
    pub fn parse(url: &str) -> Result<Proxy, HttpError> {
        let bad = |reason: &str| HttpError::Proxy {
            proxy: strip_credentials(url),
            reason: reason.to_owned(),
        };
        let with_scheme = if url.contains("://") {
            url.to_owned()
        } else {
            format!("http://{url}")
        };
        let (scheme, rest) = with_scheme.split_once("://").expect("a scheme was added");
        if !scheme.eq_ignore_ascii_case("http") {
            return Err(bad(
                "herd speaks to proxies over http:// (https:// sites go through CONNECT)",
            ));
        }
        let authority_end = rest.find('/').unwrap_or(rest.len());
        let (userinfo, hostport) = match rest[..authority_end].rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, &rest[..authority_end]),
        };
        let hostport = if hostport.contains(':') && !hostport.ends_with(']') {
            hostport.to_owned()
        } else {
            format!("{hostport}:1080")
        };
        let as_url = format!("http://{hostport}/");
        let parts = UrlParts::split(&as_url).map_err(|e| bad(&e.to_string()))?;
        let addr = (parts.host, parts.port)
            .to_socket_addrs()
            .map_err(|e| bad(&format!("cannot resolve it: {e}")))?
            .next()
            .ok_or_else(|| bad("it resolves to no address"))?;
        let authorization = userinfo.map(|u| {
            let u = percent_decode(u);
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(u)
            )
        });
        Ok(Proxy {
            shown: format!("http://{}", parts.authority()),
            addr,
            authorization,
        })
    }

    /// The proxy the environment names for `target` (curl's and Go's variables): `https_proxy`
    /// or `HTTPS_PROXY` for https, `http_proxy` or `HTTP_PROXY` for http, unless `no_proxy` or
    /// `NO_PROXY` lists the host. Loopback targets are never sent to an environment's proxy
    /// (as in Go), so a proxy exported for the outside world does not catch a local test.
    pub fn from_env(target: &Target) -> Result<Option<Proxy>, HttpError> {
        let var = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
        };
        let url = match target.scheme() {
            Scheme::Https => var(&["https_proxy", "HTTPS_PROXY"]),
            Scheme::Http => var(&["http_proxy", "HTTP_PROXY"]),
        };
        let Some(url) = url else { return Ok(None) };
        let host = target.host();
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let excluded = var(&["no_proxy", "NO_PROXY"]).is_some_and(|list| no_proxy(&list, host));
        if loopback || excluded {
            return Ok(None);
        }
        Proxy::parse(&url).map(Some)
    }

    /// The `CONNECT` request that opens a tunnel to `target`.
    pub(crate) fn connect_request(&self, target: &Target) -> Arc<[u8]> {
        let authority = format!("{}:{}", bracketed(target.host()), target.port());
        let mut r = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(a) = &self.authorization {
            r.push_str(&format!("Proxy-Authorization: {a}\r\n"));
        }
        r.push_str("\r\n");
        r.into_bytes().into()
    }

    /// An http:// request as a proxy takes it: the absolute URL in its request line, and the
    /// proxy's credentials.
    pub fn absolute_form(&self, request: &[u8], target: &Target) -> Vec<u8> {
        let Some(sp) = request.iter().position(|&b| b == b' ') else {
            return request.to_vec();
        };
        let line_end = request
            .windows(2)
            .position(|w| w == b"\r\n")
            .unwrap_or(request.len());
        let mut out = Vec::with_capacity(request.len() + 96);
        out.extend_from_slice(&request[..=sp]);
        if request.get(sp + 1) == Some(&b'/') {
            out.extend_from_slice(format!("http://{}", target.authority()).as_bytes());
        }
        out.extend_from_slice(&request[sp + 1..line_end]);
        out.extend_from_slice(b"\r\n");
        if let Some(a) = &self.authorization {
            out.extend_from_slice(format!("Proxy-Authorization: {a}\r\n").as_bytes());
        }
        out.extend_from_slice(request.get(line_end + 2..).unwrap_or_default());
        out
    }
}

/// A tunnel being opened on a new connection: the `CONNECT` sent, the proxy's reply read.
#[derive(Debug)]
pub(crate) struct Tunnel {
    request: Arc<[u8]>,
    sent: usize,
    reply: Vec<u8>,
}

impl Tunnel {
    pub fn new(request: Arc<[u8]>) -> Tunnel {
        Tunnel {
            request,
            sent: 0,
            reply: Vec::new(),
        }
    }

    /// What a 407 asks of the user: credentials, or other ones.
    fn credentials(&self) -> &'static str {
        if self
            .request
            .windows(20)
            .any(|w| w == b"Proxy-Authorization:")
        {
            PROXY_CREDENTIALS_REFUSED
        } else {
            PROXY_CREDENTIALS
        }
    }

    /// Moves the tunnel on: `Ok(true)` once the proxy said 200, `Ok(false)` while waiting, an
    /// error saying what the proxy answered otherwise.
    pub fn drive(&mut self, sock: &mut (impl Read + Write)) -> Result<bool, String> {
        while self.sent < self.request.len() {
            match sock.write(&self.request[self.sent..]) {
                Ok(0) => return Err("the proxy closed the connection".to_owned()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        let mut buf = [0u8; 1024];
        loop {
            // One byte at a time would be exact; the proxy sends nothing after its reply head
            // until TLS starts, so reading what is there is exact too.
            match sock.read(&mut buf) {
                Ok(0) => return Err("the proxy closed the connection before answering".to_owned()),
                Ok(n) => self.reply.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            }
            if let Some(end) = self.reply.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.reply[..end]);
                let status = head.lines().next().unwrap_or_default().to_owned();
                let ok = status.split_whitespace().nth(1) == Some("200");
                return if ok && end + 4 == self.reply.len() {
                    Ok(true)
                } else if ok {
                    Err("the proxy sent bytes after its reply to CONNECT".to_owned())
                } else if status.split_whitespace().nth(1) == Some("407") {
                    Err(format!(
                        "the proxy refused the tunnel: {status}: {}",
                        self.credentials()
                    ))
                } else {
                    Err(format!("the proxy refused the tunnel: {status}"))
                };
            }
            if self.reply.len() > MAX_REPLY {
                return Err("the proxy's reply to CONNECT has no end".to_owned());
            }
        }
    }
}

/// Whether `NO_PROXY`'s list names `host`: `*`, the host, or a domain it is in
/// (`example.com` and `.example.com` both cover `www.example.com`).
fn no_proxy(list: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    list.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|e| {
            let e = e.to_ascii_lowercase();
            let e = e
                .split(':')
                .next()
                .unwrap_or_default()
                .trim_start_matches('.');
            e == "*" || host == e || host.ends_with(&format!(".{e}"))
        })
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn strip_credentials(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}{}", &url[..s + 3], &url[at + 1..]),
        (None, Some(at)) => url[at + 1..].to_owned(),
        _ => url.to_owned(),
    }
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_url_keeps_its_credentials_out_of_sight() {
        let p = Proxy::parse("http://ann:p%40ss@127.0.0.1:3128").unwrap();
        assert_eq!(p.shown, "http://127.0.0.1:3128");
        assert_eq!(p.addr, "127.0.0.1:3128".parse().unwrap());
        let b64 = base64::engine::general_purpose::STANDARD.encode("ann:p@ss");
        assert_eq!(p.authorization.as_deref(), Some(&*format!("Basic {b64}")));
        assert_eq!(Proxy::parse("127.0.0.1").unwrap().addr.port(), 1080);
        let e = Proxy::parse("socks5://u:secret@127.0.0.1:1")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
    }

    #[test]
    fn requests_take_the_absolute_form_and_the_credentials() {
        let p = Proxy::parse("http://u:p@127.0.0.1:3128").unwrap();
        let t = Target::parse("http://127.0.0.1:8080/x").unwrap();
        let r = p.absolute_form(b"GET /x?y HTTP/1.1\r\nHost: h\r\n\r\n", &t);
        let r = String::from_utf8(r).unwrap();
        assert!(
            r.starts_with("GET http://127.0.0.1:8080/x?y HTTP/1.1\r\nProxy-Authorization: Basic "),
            "{r}"
        );
        assert!(r.ends_with("\r\nHost: h\r\n\r\n"), "{r}");
    }

    #[test]
    fn no_proxy_names_hosts_and_domains() {
        assert!(no_proxy("example.com", "www.example.com"));
        assert!(no_proxy(" .example.com ,x", "example.com"));
        assert!(no_proxy("*", "anything"));
        assert!(!no_proxy("example.com", "badexample.com"));
    }

    #[test]
    fn a_tunnel_opens_on_200_and_says_why_not_otherwise() {
        let mut t = Tunnel::new(b"CONNECT h:443 HTTP/1.1\r\n\r\n".to_vec().into());
        let mut io = io::Cursor::new(Vec::new());
        struct Pipe<'a>(&'a [u8], &'a mut io::Cursor<Vec<u8>>);
        impl Read for Pipe<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }
        impl Write for Pipe<'_> {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.1.write(buf)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
        assert_eq!(t.drive(&mut Pipe(ok, &mut io)), Ok(true));
        let mut t = Tunnel::new(b"CONNECT h:443 HTTP/1.1\r\n\r\n".to_vec().into());
        let no = b"HTTP/1.0 407 Proxy Authentication Required\r\n\r\n";
        let e = t.drive(&mut Pipe(no, &mut io)).unwrap_err();
        assert!(e.contains("407"), "{e}");
        assert!(e.contains("--proxy http://USER:PASSWORD@HOST:PORT"), "{e}");
    }
}
