use crate::fixture;
use serde_json::Value;

pub fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/result.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Building checks the schema itself against the 2020-12 meta-schema.
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema is valid")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn json(r: &herd_result::RunResult) -> Value {
    serde_json::to_value(r).unwrap()
}

#[test]
fn built_results_match_the_schema() {
    let v = validator();
    for r in [fixture::result(), fixture::empty_result()] {
        let errs = errors(&v, &json(&r));
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

#[test]
fn a_result_without_totals_is_rejected() {
    let v = validator();
    let mut doc = json(&fixture::result());
    doc.as_object_mut().unwrap().remove("totals");
    let errs = errors(&v, &doc);
    assert!(errs.iter().any(|e| e.contains("totals")), "{errs:#?}");
}

#[test]
fn wrong_types_and_values_are_rejected() {
    let v = validator();
    let breakages: [(&str, Value); 6] = [
        ("/totals/ok", "90".into()),
        ("/totals/dropped", (-1).into()),
        ("/generator/verdict", "fine".into()),
        ("/latency_ms/p99", Value::Null),
        ("/kind", "compare".into()),
        ("/started_at", "yesterday".into()),
    ];
    for (pointer, bad) in breakages {
        let mut doc = json(&fixture::result());
        *doc.pointer_mut(pointer).unwrap() = bad;
        assert!(!v.is_valid(&doc), "{pointer} should be rejected");
    }
}

#[test]
fn unknown_keys_are_allowed_at_the_top_level_only() {
    let v = validator();
    let mut doc = json(&fixture::result());
    doc["from_a_later_herd"] = true.into();
    assert!(v.is_valid(&doc));
    doc["totals"]["typo"] = 1.into();
    assert!(!v.is_valid(&doc));
}
