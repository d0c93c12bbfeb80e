//! Which stored runs a question is about: the filters every question shares, as given.

use herd_store::{Filter, RunRow, StoreError};

/// The filters as the user wrote them (`--label`, `--target`, `--since 7d`...).
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// `KEY=VALUE`: only runs with every one of them.
    pub labels: Vec<String>,
    pub target: Option<String>,
    pub workload: Option<String>,
    /// 2026-11-01, 2026-11-01T12:00:00Z, or a time ago (7d, 12h).
    pub since: Option<String>,
    pub until: Option<String>,
    /// Only the last N.
    pub last: Option<usize>,
}

impl Select {
    /// The store's filter, times ago counted back from `now` (seconds since 1970).
    pub fn filter(&self, now: i64) -> Result<Filter, StoreError> {
        let time = |t: &Option<String>| {
            t.as_deref()
                .map(|t| herd_store::parse_time(t, now))
                .transpose()
        };
        Ok(Filter {
            labels: herd_store::parse_labels(&self.labels)
                .map_err(StoreError::Bad)?
                .into_iter()
                .collect(),
            target: self.target.clone(),
            workload: self.workload.clone(),
            workload_hash: None,
            since: time(&self.since)?,
            until: time(&self.until)?,
            last: self.last,
        })
    }
}

/// `KEY=VALUE` pairs, comma-separated.
pub fn labels_text(r: &RunRow) -> String {
    r.labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_ago_counts_back_from_now_and_a_bad_label_says_how_to_write_it() {
        let s = Select {
            since: Some("1h".into()),
            labels: vec!["branch=main".into()],
            ..Select::default()
        };
        let f = s.filter(10_000).unwrap();
        assert_eq!(f.since, Some(10_000 - 3600));
        assert_eq!(f.labels, vec![("branch".to_owned(), "main".to_owned())]);
        let bad = Select {
            labels: vec!["main".into()],
            ..Select::default()
        };
        let e = bad.filter(0).unwrap_err().to_string();
        assert!(e.contains("--label branch=main"), "{e}");
    }
}
