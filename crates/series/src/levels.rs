//! What a series is given as text: its levels (`20:600:20`, `1,5,10`) and its targets
//! (`NAME=URL`, a URL or a workload file), named for columns and legends.

/// Parses levels: `20:600:20` (low:high:step, both ends included) or a list `1,5,10,100`.
pub fn parse_levels(spec: &str) -> Result<Vec<f64>, String> {
    let bad = |why: &str| {
        format!("`{spec}` {why}: write low:high:step (20:600:20) or a list (100,200,400)")
    };
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| bad(&format!("has `{}`, not a number above 0", s.trim())))
    };
    let levels = if spec.contains(':') {
        let parts: Vec<&str> = spec.split(':').collect();
        let [low, high, step] = parts[..] else {
            return Err(bad("needs three parts"));
        };
        let (low, high, step) = (num(low)?, num(high)?, num(step)?);
        if high < low {
            return Err(bad("goes down"));
        }
        let n = ((high - low) / step + 1e-9).floor() as u64 + 1;
        if n > 10_000 {
            return Err(bad(&format!("has {n} steps, more than 10,000")));
        }
        (0..n).map(|i| low + step * i as f64).collect()
    } else {
        spec.split(',').map(num).collect::<Result<Vec<f64>, _>>()?
    };
    if levels.is_empty() {
        return Err(bad("is empty"));
    }
    Ok(levels)
}

/// A target as given: `NAME=URL` or a bare URL.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTarget {
    pub name: String,
    pub url: String,
    /// `NAME=` was given: the name is the user's, not the URL's host:port.
    pub named: bool,
}

/// Names the targets: a `NAME=` prefix wins; otherwise the URL's host:port, made unique with a
/// number when two targets share it. Names become column suffixes and legend labels, so they
/// keep only letters, digits and `.-:`.
pub fn name_targets(given: &[String]) -> Vec<NamedTarget> {
    let mut out: Vec<NamedTarget> = Vec::new();
    for g in given {
        let (name, url, named) = match g.split_once('=') {
            Some((n, u)) if !n.contains('/') && !n.is_empty() => (n.to_owned(), u.to_owned(), true),
            _ => match herd_run::workload_path(g) {
                // A workload file is named by its file name, without the folders.
                Some(file) => (
                    file.file_name()
                        .map_or(g.clone(), |f| f.to_string_lossy().into_owned()),
                    g.clone(),
                    false,
                ),
                None => (authority(g).to_owned(), g.clone(), false),
            },
        };
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".-:_".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let mut unique = clean.clone();
        let mut n = 2;
        while out.iter().any(|t| t.name == unique) {
            unique = format!("{clean}-{n}");
            n += 1;
        }
        out.push(NamedTarget {
            name: unique,
            url,
            named,
        });
    }
    out
}

fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_people_write() {
        let table: [(&str, &[f64]); 5] = [
            ("20:100:20", &[20.0, 40.0, 60.0, 80.0, 100.0]),
            ("20:90:20", &[20.0, 40.0, 60.0, 80.0]),
            ("1,5,10,100,1000", &[1.0, 5.0, 10.0, 100.0, 1000.0]),
            ("0.5:1.5:0.5", &[0.5, 1.0, 1.5]),
            ("400", &[400.0]),
        ];
        for (spec, want) in table {
            assert_eq!(parse_levels(spec).unwrap(), want, "{spec}");
        }
        for bad in ["600:20:20", "1:2", "a,b", "0,5", "1:1000000:1", ""] {
            let e = parse_levels(bad).unwrap_err();
            assert!(e.contains("low:high:step"), "{bad}: {e}");
        }
    }

    #[test]
    fn targets_are_named_for_columns_and_legends() {
        let given = [
            "apache=http://10.0.0.1/".to_owned(),
            "http://127.0.0.1:8080/a".to_owned(),
            "http://127.0.0.1:8080/b?x=1".to_owned(),
            "my site=http://h/".to_owned(),
        ];
        let names: Vec<String> = name_targets(&given).into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            vec!["apache", "127.0.0.1:8080", "127.0.0.1:8080-2", "my-site"]
        );
        assert_eq!(name_targets(&given)[0].url, "http://10.0.0.1/");
        assert_eq!(name_targets(&given)[2].url, "http://127.0.0.1:8080/b?x=1");
    }
}
