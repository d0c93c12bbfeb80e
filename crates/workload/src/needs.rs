//! What of a workload must travel to the pods besides the file itself: the CSV files it names
//! (those marked `secret: true` go into a Secret), its `script:` and the environment variables
//! its templates read with `env('NAME')` or `env.NAME`. Read from the YAML tree, so flow and block style, quoting and
//! comments are all understood as the workload compiler understands them. `herd k8s` ships them
//! and a shard's plan hash covers them.

/// A data file of a workload, relative to its folder; `secret: true` sends it in a Secret.
#[derive(Debug, PartialEq)]
pub struct DataFile {
    pub path: String,
    pub secret: bool,
}

/// The CSV files a workload names (`csv: users.csv`), its `script:`, and the environment
/// variables its templates read (`env('API_TOKEN')`, `{{env.API_TOKEN}}`): what must travel to
/// the pods besides the file itself.
pub fn needs(workload: &str) -> (Vec<DataFile>, Vec<String>) {
    use crate::yaml::{parse, to_json, Value};
    let Ok(tree) = parse(workload) else {
        return (Vec::new(), Vec::new());
    };
    let entries = |v: &Value| match v {
        Value::Map(e) => e.clone(),
        _ => Vec::new(),
    };
    let top = entries(&tree.value);
    let data = top
        .iter()
        .find(|(k, _)| k.scalar() == Some("data"))
        .map(|(_, v)| entries(&v.value))
        .unwrap_or_default();
    let root = to_json(&tree);
    let mut files: Vec<DataFile> = Vec::new();
    if let Some(script) = root["script"].as_str() {
        files.push(DataFile {
            path: script.to_owned(),
            secret: false,
        });
    }
    // In the file's order (a JSON object would sort them), so the pods' paths read as written.
    for source in data.iter().map(|(_, v)| to_json(v)) {
        if let Some(path) = source["csv"].as_str() {
            let secret = source["secret"] == serde_json::Value::Bool(true);
            match files.iter_mut().find(|f| f.path == path) {
                Some(f) => f.secret |= secret,
                None => files.push(DataFile {
                    path: path.to_owned(),
                    secret,
                }),
            }
        }
    }
    let call = regex::Regex::new(r#"\benv\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\)"#)
        .expect("a valid pattern");
    // `env.NAME` only inside a hole: a path such as /env.json reads nothing.
    let hole = regex::Regex::new(r"\{\{(.*?)\}\}").expect("a valid pattern");
    let dotted = regex::Regex::new(r"\benv\.([A-Za-z_][A-Za-z0-9_]*)").expect("a valid pattern");
    let mut env: Vec<String> = Vec::new();
    let mut strings = vec![&root];
    while let Some(v) = strings.pop() {
        match v {
            serde_json::Value::String(s) => {
                let holes = hole.captures_iter(s).map(|h| h.get(1).expect("a group"));
                let names = call
                    .captures_iter(s)
                    .chain(holes.flat_map(|h| dotted.captures_iter(h.as_str())));
                for c in names {
                    if !env.iter().any(|e| e == &c[1]) {
                        env.push(c[1].to_owned());
                    }
                }
            }
            serde_json::Value::Array(a) => strings.extend(a),
            serde_json::Value::Object(o) => strings.extend(o.values()),
            _ => {}
        }
    }
    env.sort();
    (files, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_files_and_env_reads_are_found() {
        let w = "headers: { X-Key: \"{{ env('API_KEY') }}\" }\ndata:\n  user: { csv: users.csv, pick: per-user, secret: true }\n  sku:\n    csv: \"data/skus.csv\"   # sku list\n  # csv: old.csv\n  n: { zipf: { n: 10 } }\nscript: sign.lua\nscenarios:\n  - steps:\n      - get: \"/env.json?t={{ hmac_sha256(env(\\\"SIGNING_KEY\\\"), 'x') }}&u={{env.USER_ID}}&s={{ lua.sign(env.LUA_KEY) }}\"\n";
        let (files, env) = needs(w);
        let f = |p: &str, secret| DataFile {
            path: p.to_owned(),
            secret,
        };
        assert_eq!(
            files,
            vec![
                f("sign.lua", false),
                f("users.csv", true),
                f("data/skus.csv", false)
            ]
        );
        assert_eq!(env, vec!["API_KEY", "LUA_KEY", "SIGNING_KEY", "USER_ID"]);
    }
}
