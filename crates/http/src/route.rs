//! Where a site's connections go when it is not where its name says (curl's `--resolve` and
//! `--connect-to`): a staging address for the production name, one shard per backend. The
//! URL keeps its name, so the Host header and the TLS SNI (and the certificate checked) are
//! the site's; only the address connections are made to changes.

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// One `--resolve HOST:PORT:ADDR` or `--connect-to HOST:PORT:ADDR:PORT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The URL's host this applies to; `None` (an empty field) for any.
    host: Option<String>,
    /// The URL's port; `None` for any.
    port: Option<u16>,
    /// Where to connect: an IP address (`--resolve`) or a name or address (`--connect-to`).
    to_host: String,
    /// `None` keeps the URL's port.
    to_port: Option<u16>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{flag} {given:?}: {reason}, e.g. {flag} {example}")]
pub struct RouteError {
    flag: &'static str,
    given: String,
    reason: String,
    example: &'static str,
}

impl Route {
    /// curl's `--resolve HOST:PORT:ADDR`: the name at that port is at this IP address.
    pub fn resolve(s: &str) -> Result<Route, RouteError> {
        let err = |reason: &str| RouteError {
            flag: "--resolve",
            given: s.to_owned(),
            reason: reason.to_owned(),
            example: "shop.example:443:127.0.0.1",
        };
        let [host, port, addr] = fields(s)
            .try_into()
            .map_err(|_| err("expected HOST:PORT:ADDR"))?;
        if host.is_empty() {
            return Err(err("the host is missing"));
        }
        let port = port_of(port).map_err(|r| err(&r))?;
        if port.is_none() {
            return Err(err("the port is missing"));
        }
        addr.parse::<IpAddr>()
            .map_err(|_| err(&format!("{addr:?} is not an IP address")))?;
        Ok(Route {
            host: Some(host.to_owned()),
            port,
            to_host: addr.to_owned(),
            to_port: None,
        })
    }

    /// curl's `--connect-to HOST:PORT:ADDR:PORT`: connections for that host and port go to the
    /// other host and port; an empty field matches any host or port (or keeps it).
    pub fn connect_to(s: &str) -> Result<Route, RouteError> {
        let err = |reason: &str| RouteError {
            flag: "--connect-to",
            given: s.to_owned(),
            reason: reason.to_owned(),
            example: "shop.example:443:10.0.0.7:8443",
        };
        let [host, port, to_host, to_port] = fields(s)
            .try_into()
            .map_err(|_| err("expected HOST:PORT:ADDR:PORT"))?;
        if to_host.is_empty() && to_port.is_empty() {
            return Err(err("say where to connect"));
        }
        Ok(Route {
            host: (!host.is_empty()).then(|| host.to_owned()),
            port: port_of(port).map_err(|r| err(&r))?,
            to_host: to_host.to_owned(),
            to_port: port_of(to_port).map_err(|r| err(&r))?,
        })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        self.host
            .as_deref()
            .is_none_or(|h| h.eq_ignore_ascii_case(host))
            && self.port.is_none_or(|p| p == port)
    }

    /// The address for `host:port` when this route applies to it; resolving a name given as
    /// the destination may fail.
    pub(crate) fn apply(&self, host: &str, port: u16) -> Option<std::io::Result<SocketAddr>> {
        if !self.matches(host, port) {
            return None;
        }
        let to_host = if self.to_host.is_empty() {
            host
        } else {
            &self.to_host
        };
        let port = self.to_port.unwrap_or(port);
        Some(match to_host.parse::<IpAddr>() {
            Ok(ip) => Ok(SocketAddr::new(ip, port)),
            Err(_) => (to_host, port).to_socket_addrs().and_then(|mut a| {
                a.next()
                    .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))
            }),
        })
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let port = |p: Option<u16>| p.map_or(String::new(), |p| p.to_string());
        write!(
            f,
            "{}:{} -> {}:{}",
            self.host.as_deref().unwrap_or("*"),
            port(self.port),
            self.to_host,
            port(self.to_port)
        )
    }
}

/// `s` split at colons, an IPv6 address in brackets kept whole (and unbracketed).
fn fields(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        if let Some(inner) = rest.strip_prefix('[') {
            if let Some(end) = inner.find(']') {
                out.push(&inner[..end]);
                rest = &inner[end + 1..];
                match rest.strip_prefix(':') {
                    Some(r) => {
                        rest = r;
                        continue;
                    }
                    None if rest.is_empty() => return out,
                    None => {
                        out.push(rest);
                        return out;
                    }
                }
            }
        }
        match rest.split_once(':') {
            Some((a, b)) => {
                out.push(a);
                rest = b;
            }
            None => {
                out.push(rest);
                return out;
            }
        }
    }
}

fn port_of(s: &str) -> Result<Option<u16>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(Some(p)),
        _ => Err(format!("{s:?} is not a port from 1 to 65535")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(r: &Route, host: &str, port: u16) -> Option<SocketAddr> {
        r.apply(host, port).map(|a| a.unwrap())
    }

    #[test]
    fn resolve_sends_one_name_and_port_to_an_address() {
        let r = Route::resolve("shop.example:443:127.0.0.2").unwrap();
        assert_eq!(
            to(&r, "SHOP.example", 443),
            Some("127.0.0.2:443".parse().unwrap())
        );
        assert_eq!(to(&r, "shop.example", 80), None);
        assert_eq!(to(&r, "other.example", 443), None);
        let r = Route::resolve("shop.example:443:[::1]").unwrap();
        assert_eq!(
            to(&r, "shop.example", 443),
            Some("[::1]:443".parse().unwrap())
        );
    }

    #[test]
    fn connect_to_moves_host_and_port_and_empty_fields_match_any() {
        let r = Route::connect_to("shop.example:443:127.0.0.3:8443").unwrap();
        assert_eq!(
            to(&r, "shop.example", 443),
            Some("127.0.0.3:8443".parse().unwrap())
        );
        let r = Route::connect_to("::127.0.0.1:9000").unwrap();
        assert_eq!(
            to(&r, "anything", 80),
            Some("127.0.0.1:9000".parse().unwrap())
        );
        let r = Route::connect_to("shop.example:80:[::1]:").unwrap();
        assert_eq!(
            to(&r, "shop.example", 80),
            Some("[::1]:80".parse().unwrap())
        );
    }

    #[test]
    fn bad_routes_say_what_is_expected() {
        let e = Route::resolve("shop.example:443").unwrap_err().to_string();
        assert!(e.contains("expected HOST:PORT:ADDR"), "{e}");
        let e = Route::resolve("shop.example:443:staging")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an IP address"), "{e}");
        let e = Route::connect_to("a:99999:b:1").unwrap_err().to_string();
        assert!(e.contains("not a port"), "{e}");
    }
}
