//! The version policy of result files (docs/results.md, "Versions and added keys"): the schemas
//! describe exactly the current `schema_version`, closed below the top level; a key added at any
//! depth comes with a higher `schema_version`, which herd reads and an older schema refuses by
//! naming `schema_version`. And `compare.schema.json` is as closed as the others, against a
//! comparison of real runs.

use crate::fixtures::{self, validator, CAPACITY_OPEN, OPEN, SLOW, SWEEP_OPEN};
use herd_compare::compare;
use herd_result::{parse_document, write_json, Document, SCHEMA_VERSION};
use serde_json::Value;

fn errors(schema: &str, doc: &Value) -> Vec<String> {
    validator(schema)
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

fn written(doc: &impl serde::Serialize) -> Value {
    let mut out = Vec::new();
    write_json(doc, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A fixture (written before `schema_version` existed) as this herd would write it.
fn current(mut v: Value) -> Value {
    v["schema_version"] = SCHEMA_VERSION.into();
    v
}

/// A real comparison, as `herd compare --json` writes it.
fn comparison() -> Value {
    let (base, slow) = (fixtures::run(OPEN), fixtures::run(SLOW));
    let c = compare(&[("base".into(), &base), ("slow".into(), &slow)], 0.10);
    written(&c.document())
}

#[test]
fn every_schema_describes_this_herds_schema_version() {
    for schema in [
        "result.schema.json",
        "sweep.schema.json",
        "capacity.schema.json",
        "compare.schema.json",
    ] {
        let path = format!("{}/../../schema/{schema}", env!("CARGO_MANIFEST_DIR"));
        let s: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let v = &s["properties"]["schema_version"];
        assert_eq!(
            v["maximum"], SCHEMA_VERSION,
            "{schema}: bump it with SCHEMA_VERSION"
        );
    }
}

#[test]
fn files_of_the_current_version_validate() {
    let run = current(written(&fixtures::run(OPEN)));
    assert_eq!(run["schema_version"], SCHEMA_VERSION);
    assert_eq!(errors("result.schema.json", &run), Vec::<String>::new());
    let sweep = current(written(&fixtures::sweep(SWEEP_OPEN)));
    assert_eq!(sweep["schema_version"], SCHEMA_VERSION);
    assert_eq!(errors("sweep.schema.json", &sweep), Vec::<String>::new());
    let capacity = written(&fixtures::capacity(CAPACITY_OPEN));
    assert_eq!(
        errors("capacity.schema.json", &capacity),
        Vec::<String>::new()
    );
    let c = comparison();
    assert_eq!(c["schema_version"], SCHEMA_VERSION);
    assert_eq!(errors("compare.schema.json", &c), Vec::<String>::new());
    // With per-name rows: a workload run against itself.
    let w = fixtures::run(include_str!(
        "../../../result/tests/fixtures/run-workload.json"
    ));
    let named = written(&compare(&[("a".into(), &w), ("b".into(), &w)], 0.10).document());
    assert!(!named["names"].as_array().unwrap().is_empty());
    assert_eq!(errors("compare.schema.json", &named), Vec::<String>::new());
    // A file written before `schema_version` existed reads as version 1 and validates.
    let old = fixtures::value(OPEN);
    assert!(old.get("schema_version").is_none());
    assert_eq!(fixtures::run(OPEN).schema_version, 1);
    assert_eq!(errors("result.schema.json", &old), Vec::<String>::new());
}

#[test]
fn a_key_added_in_a_nested_object_comes_with_a_newer_schema_version() {
    // A later herd of the series adds `latency_ms.p9999` and says so in `schema_version`.
    let mut newer = fixtures::value(OPEN);
    newer["schema_version"] = (SCHEMA_VERSION + 1).into();
    newer["latency_ms"]["p9999"] = 9.5.into();
    newer["totals"]["unanswered"] = 0.into();
    // herd reads it (the keys it does not know are ignored below the top level) ...
    let doc = parse_document(&newer.to_string(), "newer.json").unwrap();
    assert!(matches!(doc, Document::Run(r) if r.latency_ms.p99 > 0.0));
    // ... and this herd's schema refuses it, naming the version first.
    let errs = errors("result.schema.json", &newer);
    assert!(
        errs.iter().any(|e| e.ends_with("at /schema_version")),
        "{errs:#?}"
    );
    // The same key claiming the current version is simply not in the format: refused.
    let mut wrong = fixtures::value(OPEN);
    wrong["schema_version"] = SCHEMA_VERSION.into();
    wrong["latency_ms"]["p9999"] = 9.5.into();
    let errs = errors("result.schema.json", &wrong);
    assert!(
        errs.iter()
            .any(|e| e.contains("p9999") && e.ends_with("at /latency_ms")),
        "{errs:#?}"
    );
    // The top level stays open for keys of the user's own (a CI job's build id): kept.
    let mut tagged = fixtures::value(OPEN);
    tagged["ci_build"] = "1234".into();
    assert_eq!(errors("result.schema.json", &tagged), Vec::<String>::new());
}

#[test]
fn compare_schema_is_closed_below_the_top_level() {
    let doc = comparison();
    for pointer in [
        "/runs/0",
        "/metrics/0",
        "/metrics/0/metric",
        "/metrics/0/changes/0",
        "/metrics/0/changes/0/noise",
    ] {
        let mut bad = doc.clone();
        bad.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}"))
            .as_object_mut()
            .unwrap()
            .insert("typo".into(), 1.into());
        assert!(
            !validator("compare.schema.json").is_valid(&bad),
            "{pointer} should refuse an unknown key"
        );
    }
    let mut bad = doc.clone();
    bad["regressions"] =
        serde_json::json!([{"run": "slow", "metric": "p50", "fraction": 0.5, "x": 1}]);
    assert!(!validator("compare.schema.json").is_valid(&bad));
}
