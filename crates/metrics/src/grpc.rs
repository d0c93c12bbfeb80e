//! gRPC's status codes (the `grpc-status` a call's trailers carry), counted by name: a call
//! that got its trailers is one outcome, its code beside the HTTP status, never mixed with it
//! or with transport errors.

/// The 17 codes of gRPC's `grpc-status`, by value (grpc/doc/statuscodes.md).
pub const GRPC_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The name of code `code` (`OK`, `UNAVAILABLE`, ...).
pub fn grpc_code_name(code: u8) -> &'static str {
    GRPC_CODES
        .get(usize::from(code))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// The code a name stands for, any case (`not_found`, `NOT_FOUND`), or its number.
pub fn grpc_code(name: &str) -> Option<u8> {
    if let Ok(n) = name.parse::<u8>() {
        return (usize::from(n) < GRPC_CODES.len()).then_some(n);
    }
    GRPC_CODES
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
        .map(|i| i as u8)
}

/// The `grpc-status` among a response's header fields (trailers included), when one is there
/// and says a code. A value outside the 17 codes is UNKNOWN, as gRPC's clients read it.
pub fn grpc_status<'a>(mut fields: impl Iterator<Item = (&'a str, &'a str)>) -> Option<u8> {
    let (_, value) = fields.find(|(n, _)| n.eq_ignore_ascii_case("grpc-status"))?;
    let n: u32 = value.trim().parse().ok()?;
    Some(if n < GRPC_CODES.len() as u32 {
        n as u8
    } else {
        2
    })
}

/// Calls counted by `grpc-status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrpcCounts(pub [u64; 17]);

impl GrpcCounts {
    pub fn add(&mut self, code: u8, n: u64) {
        if let Some(c) = self.0.get_mut(usize::from(code)) {
            *c += n;
        }
    }

    pub fn merge(&mut self, other: &GrpcCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }

    /// (name, count) of the codes that occurred, in code order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (GRPC_CODES[i], n))
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// A run's calls by `grpc-status`, each code with the latency of its calls (from the intended
/// send, in microseconds): a call that fails fast and one that fails slow tell different
/// stories (a DEADLINE_EXCEEDED at the deadline, an UNAVAILABLE at once).
#[derive(Clone, Debug, Default)]
pub struct GrpcStats {
    pub counts: GrpcCounts,
    /// The codes that occurred, each with its histogram (a run sees a handful of codes).
    latency: Vec<(u8, crate::CompactHistogram)>,
}

impl GrpcStats {
    pub fn record(&mut self, code: u8, latency_us: u64) {
        if usize::from(code) >= GRPC_CODES.len() {
            return;
        }
        self.counts.add(code, 1);
        self.histogram(code).saturating_record(latency_us);
    }

    fn histogram(&mut self, code: u8) -> &mut crate::CompactHistogram {
        let at = match self.latency.iter().position(|(c, _)| *c == code) {
            Some(at) => at,
            None => {
                self.latency.push((code, crate::CompactHistogram::new()));
                self.latency.len() - 1
            }
        };
        &mut self.latency[at].1
    }

    pub fn merge(&mut self, other: &GrpcStats) {
        self.counts.merge(&other.counts);
        for (code, h) in &other.latency {
            self.histogram(*code).add(h);
        }
    }

    /// (name, latency) of the codes that occurred, in code order.
    pub fn latency(&self) -> Vec<(&'static str, &crate::CompactHistogram)> {
        let mut by_code: Vec<_> = self.latency.iter().collect();
        by_code.sort_by_key(|(c, _)| *c);
        by_code
            .into_iter()
            .map(|(c, h)| (GRPC_CODES[usize::from(*c)], h))
            .collect()
    }

    pub fn heap_bytes(&self) -> usize {
        self.latency
            .iter()
            .map(|(_, h)| h.heap_bytes())
            .sum::<usize>()
            + self.latency.capacity() * std::mem::size_of::<(u8, crate::CompactHistogram)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_name_both_ways() {
        for (i, name) in GRPC_CODES.iter().enumerate() {
            assert_eq!(grpc_code(name), Some(i as u8));
            assert_eq!(grpc_code_name(i as u8), *name);
        }
        assert_eq!(grpc_code("unavailable"), Some(14));
        assert_eq!(grpc_code("16"), Some(16));
        assert_eq!((grpc_code("17"), grpc_code("NOPE")), (None, None));
    }

    #[test]
    fn the_status_is_read_from_the_trailers() {
        let fields = [("content-type", "application/grpc"), ("grpc-status", "5")];
        assert_eq!(grpc_status(fields.iter().copied()), Some(5));
        assert_eq!(grpc_status([("Grpc-Status", "99")].into_iter()), Some(2));
        assert_eq!(grpc_status([("grpc-status", "x")].into_iter()), None);
        assert_eq!(grpc_status(std::iter::empty()), None);
        let mut c = GrpcCounts::default();
        c.add(0, 3);
        c.add(14, 1);
        c.add(40, 1);
        let both = {
            let mut m = c.clone();
            m.merge(&c);
            m
        };
        assert_eq!(
            both.iter().collect::<Vec<_>>(),
            [("OK", 6), ("UNAVAILABLE", 2)]
        );
        assert_eq!(both.total(), 8);
    }

    #[test]
    fn each_code_keeps_the_latency_of_its_calls() {
        let mut a = GrpcStats::default();
        for (code, us) in [(4, 500_000), (0, 1_000), (4, 500_000), (14, 10), (0, 3_000)] {
            a.record(code, us);
        }
        a.record(17, 1);
        let mut b = a.clone();
        b.merge(&a);
        let names: Vec<_> = b.latency().iter().map(|(n, h)| (*n, h.len())).collect();
        assert_eq!(
            names,
            [("OK", 4), ("DEADLINE_EXCEEDED", 4), ("UNAVAILABLE", 2)]
        );
        let slow = b.latency()[1].1.value_at_quantile(0.5);
        assert!((499_000..=501_000).contains(&slow), "{slow}");
        assert_eq!(b.counts.total(), 10);
    }
}
