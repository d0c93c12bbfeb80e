//! What a run's connections spoke and how their handshakes went: per protocol (ALPN's name)
//! and per TLS settlement, tallied per worker and added up at the end.

use std::time::Duration;

/// How a connection's handshake used an earlier connection's TLS session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumption {
    /// The session was resumed: no certificate sent or checked.
    pub resumed: bool,
    /// Requests went as early data (0-RTT): `Some(true)` when the server took them,
    /// `Some(false)` when it refused them and they went again after the handshake.
    pub early_data: Option<bool>,
}

/// The handshakes of one protocol's connections, where the protocol tells how they went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshakes {
    /// Full handshakes (a certificate checked) and resumed ones, with their times.
    pub full: HandshakeTimes,
    pub resumed: HandshakeTimes,
    /// Connections whose early data (0-RTT) the server took, and refused.
    pub early_data_accepted: u64,
    pub early_data_rejected: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandshakeTimes {
    pub count: u64,
    pub total: Duration,
    pub max: Duration,
}

impl HandshakeTimes {
    fn add(&mut self, other: &HandshakeTimes) {
        self.count += other.count;
        self.total += other.total;
        self.max = self.max.max(other.max);
    }
}

impl Handshakes {
    /// Adds one connection's handshake, which took `time`.
    pub(crate) fn count(&mut self, r: Resumption, time: Duration) {
        let times = if r.resumed {
            &mut self.resumed
        } else {
            &mut self.full
        };
        times.add(&HandshakeTimes {
            count: 1,
            total: time,
            max: time,
        });
        match r.early_data {
            Some(true) => self.early_data_accepted += 1,
            Some(false) => self.early_data_rejected += 1,
            None => {}
        }
    }

    fn add(&mut self, other: &Handshakes) {
        self.full.add(&other.full);
        self.resumed.add(&other.resumed);
        self.early_data_accepted += other.early_data_accepted;
        self.early_data_rejected += other.early_data_rejected;
    }

    /// Nothing was told: the protocol does not say how its handshakes went.
    pub fn is_empty(&self) -> bool {
        self.full.count + self.resumed.count == 0
    }
}

/// What a TLS handshake settled on, in rustls's names (the version as nginx's `$ssl_protocol`
/// writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Negotiated {
    /// `TLSv1.2`, `TLSv1.3`.
    pub version: &'static str,
    /// The IANA name, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: &'static str,
    /// The protocol ALPN agreed on (`h2`, `http/1.1`), `None` when the server chose none.
    pub alpn: Option<&'static str>,
}

/// The connections of a run whose handshakes settled on the same [`Negotiated`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsUse {
    pub negotiated: Negotiated,
    pub connections: u64,
}

/// Adds `connections` to `negotiated`'s row of `rows` (a handful of rows at most).
pub(crate) fn count_tls(rows: &mut Vec<TlsUse>, negotiated: Negotiated, connections: u64) {
    match rows.iter_mut().find(|r| r.negotiated == negotiated) {
        Some(r) => r.connections += connections,
        None => rows.push(TlsUse {
            negotiated,
            connections,
        }),
    }
}

/// The connections of a run that spoke one protocol (the name from [`crate::Opened::protocol`]), and
/// the requests handed to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtocolUse {
    pub protocol: &'static str,
    pub connections: u64,
    pub requests: u64,
    pub handshakes: Handshakes,
}

/// Adds `connections` and `requests` to `protocol`'s row of `rows` (a handful of rows at most).
pub(crate) fn count_protocol(
    rows: &mut Vec<ProtocolUse>,
    protocol: &'static str,
    connections: u64,
    requests: u64,
) {
    match rows.iter_mut().find(|r| r.protocol == protocol) {
        Some(r) => {
            r.connections += connections;
            r.requests += requests;
        }
        None => rows.push(ProtocolUse {
            protocol,
            connections,
            requests,
            handshakes: Handshakes::default(),
        }),
    }
}

/// Adds a worker's row `p` to the run's `rows`.
pub(crate) fn add_protocol(rows: &mut Vec<ProtocolUse>, p: &ProtocolUse) {
    count_protocol(rows, p.protocol, p.connections, p.requests);
    if let Some(row) = rows.iter_mut().find(|row| row.protocol == p.protocol) {
        row.handshakes.add(&p.handshakes);
    }
}
