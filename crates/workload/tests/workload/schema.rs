//! schema/workload.schema.json describes the files herd accepts: the repository's example
//! validates against it (as an editor would check it), and a misspelt key does not.

use herd_workload::yaml;
use serde_json::Value;

fn root(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn errors(doc: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(root("schema/workload.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let v = jsonschema::validator_for(&schema).expect("the schema compiles");
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

fn as_json(src: &str) -> Value {
    yaml::to_json(&yaml::parse(src).expect("valid YAML"))
}

#[test]
fn the_example_matches_the_schema() {
    for example in [
        "examples/shop.yaml",
        "examples/token.yaml",
        "examples/card.yaml",
    ] {
        let src = std::fs::read_to_string(root(example)).unwrap();
        let errs = errors(&as_json(&src));
        assert!(errs.is_empty(), "{example}: {}", errs.join("\n"));
    }
    for src in [
        "target: http://h\nload: { model: open, rate: 200, duration: 1m }\nscenarios: [{ name: a, steps: [{ get: / }, { think: 1s }] }]",
        "target: http://h\nload: { profile: soak, target: 10, duration: 2h }\nscenarios: [{ name: a, steps: [{ put: /x, json: { a: [1, \"{{v}}\"] } }] }]",
        "target: ws://h/chat\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ ws: connect }, { ws: { name: join, send: { op: join }, expect: { json: \"$.op\", equals: join }, extract: { t: { json: \"$.t\" } } } }, { think: 1s }, { ws: { send: \"hi {{t}}\", expect: { text: hi }, close: true } }, { ws: close }] }]",
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: /login }, { ws: { connect: /chat, headers: { Authorization: \"Bearer {{t}}\" } } }, { ws: { send: hi, expect: { text: hi } } }, { ws: close }] }]",
        "target: http://h\nproto: e.proto\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ grpc: e.E/U, data: { m: \"{{v}}\" }, metadata: { k: v }, check: { status: [OK, 5], json: { $.m: x } } }] }]",
    ] {
        let errs = errors(&as_json(src));
        assert!(errs.is_empty(), "{src}: {}", errs.join("\n"));
    }
}

#[test]
fn mistakes_do_not_match_the_schema() {
    for src in [
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, stpes: [] }]",
        "target: http://h\nload: { users: 1 }\nscenarios: [{ name: a, steps: [{ get: / }] }]",
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, weight: 0, steps: [{ get: / }] }]",
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: /, post: / }] }]",
        "target: ws://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ ws: open }] }]",
        "target: ws://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ ws: { sned: hi } }] }]",
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: /, grpc: a.B/C }] }]",
        "target: http://h\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: / }] }]\nthresholds: ['p95 is fast']",
    ] {
        assert!(!errors(&as_json(src)).is_empty(), "accepted: {src}");
    }
}
