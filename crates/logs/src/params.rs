//! The values a request type's query parameters took: `GET /search?q={q}` is one type, and the
//! words users searched for (`bag`, `gloves`) are its data, counted here so `herd model` can
//! draw them in the log's proportions instead of making a request type of each.

use crate::summary::Param;
use ahash::AHashMap;

/// Distinct values kept per parameter; later new values are counted as untracked.
const MAX_VALUES: usize = 1000;
/// The most requested values a summary lists per parameter.
const TOP: usize = 100;

/// One parameter: its name, each value's requests, and requests whose value was not counted.
type Counted = (Box<[u8]>, AHashMap<Box<[u8]>, u64>, u64);

#[derive(Default)]
pub struct ParamValues {
    params: Vec<Counted>,
}

impl ParamValues {
    /// Counts each `name=value` of `query` (as written, still percent-encoded); `budget` is
    /// the distinct values the whole analysis may still keep, shared with the ids.
    pub fn add(&mut self, query: &[u8], budget: &mut usize) {
        for pair in query.split(|&c| c == b'&').filter(|p| !p.is_empty()) {
            let (name, value) = match memchr::memchr(b'=', pair) {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            let at = match self.params.iter().position(|p| &*p.0 == name) {
                Some(at) => at,
                // A type's parameters are few; a query with hundreds is not worth modelling.
                None if self.params.len() < 32 => {
                    self.params.push((name.into(), AHashMap::new(), 0));
                    self.params.len() - 1
                }
                None => continue,
            };
            let (_, values, untracked) = &mut self.params[at];
            if let Some(n) = values.get_mut(value) {
                *n += 1;
            } else if values.len() < MAX_VALUES && *budget > 0 {
                values.insert(value.into(), 1);
                *budget -= 1;
            } else {
                *untracked += 1;
            }
        }
    }

    /// By name; each parameter's most requested values first.
    pub fn summarize(&self) -> Vec<Param> {
        let mut out: Vec<Param> = self
            .params
            .iter()
            .map(|(name, values, untracked)| {
                let mut all: Vec<(&[u8], u64)> = values.iter().map(|(k, v)| (&k[..], *v)).collect();
                all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                Param {
                    name: String::from_utf8_lossy(name).into_owned(),
                    distinct: all.len() as u64,
                    untracked: *untracked,
                    top: all
                        .iter()
                        .take(TOP)
                        .map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), *v))
                        .collect(),
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_per_parameter_within_the_budget() {
        let mut p = ParamValues::default();
        let mut budget = 3;
        for q in ["q=bag&page=1", "q=bag", "q=gloves&page=2", "q=hat"] {
            p.add(q.as_bytes(), &mut budget);
        }
        let s = p.summarize();
        assert_eq!(s[0].name, "page");
        assert_eq!(s[1].name, "q");
        assert_eq!(
            s[1].top,
            vec![("bag".to_owned(), 2), ("gloves".to_owned(), 1)]
        );
        assert_eq!(
            (s[1].distinct, s[1].untracked),
            (2, 1),
            "the budget ran out at `hat`"
        );
    }
}
