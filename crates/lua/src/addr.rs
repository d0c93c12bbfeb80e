//! wrk's addresses: `wrk.lookup(host, service)` resolves a name into `addr` values,
//! `wrk.connect(addr)` says whether one accepts a connection, and `thread.addr` picks the
//! address a thread's connections go to.

use mlua::{FromLua, Lua, MetaMethod, UserData, UserDataMethods, Value};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// One resolved address; `tostring(addr)` gives `ip:port` as in wrk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr(pub SocketAddr);

impl UserData for Addr {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, a, ()| Ok(a.0.to_string()));
        methods.add_meta_method(MetaMethod::Eq, |_, a, b: Addr| Ok(a.0 == b.0));
    }
}

impl FromLua for Addr {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<Self> {
        match value {
            Value::UserData(ud) => Ok(*ud.borrow::<Addr>()?),
            other => Err(mlua::Error::runtime(format!(
                "an addr from wrk.lookup expected, got {}",
                other.type_name()
            ))),
        }
    }
}

/// `wrk.lookup(host, service)`: the addresses a name and a port (or a service such as "http")
/// resolve to. An unknown name is an error naming it, as wrk stops on one.
pub(crate) fn lookup(lua: &Lua, (host, service): (String, Option<String>)) -> mlua::Result<Value> {
    let port = match service.as_deref() {
        None | Some("http") => 80,
        Some("https") => 443,
        Some(s) => s.parse::<u16>().map_err(|_| {
            mlua::Error::runtime(format!(
                "wrk.lookup: service `{s}` is neither a port number nor http/https"
            ))
        })?,
    };
    let addrs = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| mlua::Error::runtime(format!("unable to resolve {host}:{port}: {e}")))?;
    let t = lua.create_table()?;
    for (i, a) in addrs.enumerate() {
        t.set(i + 1, Addr(a))?;
    }
    Ok(Value::Table(t))
}

/// `wrk.connect(addr)`: whether a TCP connection to it opens (within two seconds).
pub(crate) fn connect(_: &Lua, addr: Addr) -> mlua::Result<bool> {
    Ok(TcpStream::connect_timeout(&addr.0, Duration::from_secs(2)).is_ok())
}
