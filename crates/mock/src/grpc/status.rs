//! gRPC's 17 status codes (grpc/doc/statuscodes.md), by number and by name.

/// Names in code order: `NAMES[code]` (herd-metrics' table, the one the client counts by).
pub(crate) use herd_metrics::GRPC_CODES as NAMES;

pub(crate) const OK: u8 = 0;
pub(crate) const INVALID_ARGUMENT: u8 = 3;
pub(crate) const DEADLINE_EXCEEDED: u8 = 4;
pub(crate) const NOT_FOUND: u8 = 5;
pub(crate) const UNIMPLEMENTED: u8 = 12;
pub(crate) const INTERNAL: u8 = 13;

/// A code from its number (`14`) or its name in any case (`unavailable`, `UNAVAILABLE`).
pub(crate) fn parse(word: &str) -> Option<u8> {
    if let Ok(n) = word.parse::<u8>() {
        return (usize::from(n) < NAMES.len()).then_some(n);
    }
    NAMES
        .iter()
        .position(|name| name.eq_ignore_ascii_case(word))
        .map(|i| i as u8)
}

/// A `grpc-status=` value: codes separated by commas, or `all` for the 16 that are errors.
pub(crate) fn parse_list(value: &str) -> Result<Vec<u8>, String> {
    if value.eq_ignore_ascii_case("all") {
        return Ok((1..NAMES.len() as u8).collect());
    }
    value
        .split(',')
        .map(|word| {
            parse(word).ok_or_else(|| {
                format!(
                    "grpc-status '{word}' is not a gRPC status; write a code 0..16 or a name ({}), \
                     several with commas, or all",
                    NAMES.join(", ").to_ascii_lowercase()
                )
            })
        })
        .collect()
}

/// How a `grpc-status=` list is written back: names in lower case, `all` for all 16 errors.
pub(crate) fn format_list(codes: &[u8]) -> String {
    if codes.iter().copied().eq(1..NAMES.len() as u8) {
        return "all".into();
    }
    let names: Vec<String> = codes
        .iter()
        .map(|c| NAMES[usize::from(*c)].to_ascii_lowercase())
        .collect();
    names.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_by_number_or_name_and_write_back() {
        assert_eq!(parse("14"), Some(14));
        assert_eq!(parse("unavailable"), Some(14));
        assert_eq!(parse("DATA_LOSS"), Some(15));
        assert_eq!(parse("17"), None);
        assert_eq!(parse("nope"), None);
        assert_eq!(parse_list("all").unwrap().len(), 16);
        assert_eq!(parse_list("5,internal").unwrap(), [5, 13]);
        assert_eq!(format_list(&[5, 13]), "not_found,internal");
        assert_eq!(format_list(&parse_list("all").unwrap()), "all");
        let e = parse_list("5,teapot").unwrap_err();
        assert!(e.contains("'teapot'") && e.contains("unavailable"), "{e}");
    }
}
