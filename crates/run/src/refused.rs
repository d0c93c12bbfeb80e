//! Nothing listens: a URL target whose connection is refused outright is said at once, before
//! a search probes for tens of seconds to learn what one connection says.

use std::time::Duration;

/// What to say when the connection to `url` is refused outright; `None` for anything else
/// (workload files included: their runs say the rest).
pub fn nothing_listens(url: &str) -> Option<String> {
    let target = herd_http::Target::parse(url).ok()?;
    let addr = target.addr();
    match std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Some(format!(
            "NOTHING LISTENS: the connection to {url} ({addr}) was refused; is the server running, \
             and are the host and port right?"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_closed_port_is_said_and_an_open_one_is_not() {
        let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let url = format!("http://127.0.0.1:{closed_port}/");
        let said = super::nothing_listens(&url).unwrap();
        assert!(
            said.starts_with(&format!("NOTHING LISTENS: the connection to {url}")),
            "{said}"
        );
        let up = format!("http://{}/", open.local_addr().unwrap());
        assert_eq!(super::nothing_listens(&up), None);
        assert_eq!(super::nothing_listens("shop.yaml"), None);
    }
}
