//! A listen address as people write it (`herd serve --listen`, `herd proxy`, the dashboard
//! and the metrics endpoint). A port alone binds loopback, not every interface: a server herd
//! starts is for this machine unless an explicit `0.0.0.0:PORT` says otherwise.

use std::net::SocketAddr;

/// `8080`, `:8080` (loopback), `localhost:8080` (its IPv4 address first), `0.0.0.0:8080`,
/// `[::1]:8080`; a message with how to write it otherwise.
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    use std::net::{Ipv4Addr, ToSocketAddrs};
    let t = s.trim();
    let port_only = t.strip_prefix(':').unwrap_or(t);
    if !port_only.is_empty() && port_only.bytes().all(|b| b.is_ascii_digit()) {
        return port_only
            .parse::<u16>()
            .map(|p| SocketAddr::from((Ipv4Addr::LOCALHOST, p)))
            .map_err(|_| format!("port {port_only} is not from 0 to 65535"));
    }
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    let hint =
        "write HOST:PORT or a port, e.g. 8080, :8080, localhost:8080, 0.0.0.0:8080, [::1]:8080";
    if t.rsplit_once(':')
        .is_none_or(|(h, p)| h.is_empty() || p.parse::<u16>().is_err())
    {
        return Err(format!("`{s}` is not an address: {hint}"));
    }
    let addrs: Vec<SocketAddr> = t
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{s}`: {e}; {hint}"))?
        .collect();
    // localhost may list ::1 first; clients told "localhost" try 127.0.0.1 too, and tools given
    // the printed address (curl, herd run) expect the IPv4 one.
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("`{s}` resolved to no address; {hint}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    #[test]
    fn listen_addresses_as_people_write_them() {
        let lo = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        assert_eq!(parse_listen("8080"), Ok(lo(8080)));
        assert_eq!(parse_listen(":8080"), Ok(lo(8080)));
        assert_eq!(parse_listen("localhost:8080"), Ok(lo(8080)));
        assert_eq!(parse_listen("127.0.0.1:0"), Ok(lo(0)));
        assert_eq!(
            parse_listen("0.0.0.0:8080"),
            Ok(SocketAddr::from(([0, 0, 0, 0], 8080)))
        );
        assert_eq!(parse_listen("[::1]:9"), Ok("[::1]:9".parse().unwrap()));
        for bad in ["", "http://x:1/", "localhost", "99999", ":x", "h:70000"] {
            let e = parse_listen(bad).unwrap_err();
            assert!(
                e.contains("e.g. 8080, :8080") || e.contains("65535"),
                "{bad}: {e}"
            );
        }
    }
}
