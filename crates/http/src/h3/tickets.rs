//! The QUIC connections' TLS session store. rustls' own keeps 8 TLS 1.3 tickets per server and
//! a ticket serves one resumption, so when 50 connections reconnect at once (`-c 50
//! --calls-per-conn 2`) 42 of them would pay a full handshake. A server sends a ticket to each
//! connection: this store keeps up to [`TICKETS`] per server, the newest given out first.

use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Tickets kept per server: one per connection of a large run, bounded in memory (a ticket
/// carries the server's certificate chain, a few KiB).
const TICKETS: usize = 1024;

#[derive(Debug)]
pub(crate) struct Tickets {
    /// Key exchange hints (and TLS 1.2 sessions, which QUIC never makes).
    other: ClientSessionMemoryCache,
    tls13: Mutex<HashMap<ServerName<'static>, VecDeque<Tls13ClientSessionValue>>>,
    /// The cipher suite of the last ticket: quinn does not tell a connection's suite, and a
    /// ticket carries the one its connection negotiated (a server picks the same one from the
    /// same offer every time).
    suite: Mutex<Option<&'static str>>,
}

/// A store shared by every QUIC connection of a run.
pub(crate) fn store() -> Arc<Tickets> {
    Arc::new(Tickets {
        other: ClientSessionMemoryCache::new(16),
        tls13: Mutex::new(HashMap::new()),
        suite: Mutex::new(None),
    })
}

impl Tickets {
    /// TLS 1.3 tickets held, for every server.
    pub(crate) fn held(&self) -> usize {
        self.tls13
            .lock()
            .map_or(0, |m| m.values().map(VecDeque::len).sum())
    }

    /// The TLS 1.3 cipher suite the server's tickets were made under, once one came.
    pub(crate) fn suite(&self) -> Option<&'static str> {
        *self.suite.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ClientSessionStore for Tickets {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.other.set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.other.kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.other.set_tls12_session(server_name, value);
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.other.tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.other.remove_tls12_session(server_name);
    }

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        *self.suite.lock().unwrap_or_else(|e| e.into_inner()) = value.suite().common.suite.as_str();
        let mut tls13 = self.tls13.lock().unwrap_or_else(|e| e.into_inner());
        let tickets = tls13.entry(server_name).or_default();
        if tickets.len() >= TICKETS {
            tickets.pop_front();
        }
        tickets.push_back(value);
    }

    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        let mut tls13 = self.tls13.lock().unwrap_or_else(|e| e.into_inner());
        tls13.get_mut(server_name)?.pop_back()
    }
}
