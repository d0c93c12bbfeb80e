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
}
