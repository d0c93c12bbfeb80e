//! The JSON Schemas of sweeps and capacity searches (`schema/sweep.schema.json`,
//! `schema/capacity.schema.json`) against results real runs wrote, and what they refuse. A
//! step's or probe's run is checked by the run's own schema, `result.schema.json`, which both
//! refer to by its file name.

use crate::fixtures::{
    self, validator, CAPACITY_OPEN, CAPACITY_USERS, SWEEP_CLOSED, SWEEP_OPEN, WATCHED,
};
use serde_json::{json, Value};

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[test]
fn real_results_match_their_schemas() {
    let sweep = validator("sweep.schema.json");
    let capacity = validator("capacity.schema.json");
    let run = validator("result.schema.json");
    for (v, text) in [
        (&sweep, SWEEP_OPEN),
        (&sweep, SWEEP_CLOSED),
        (&capacity, CAPACITY_OPEN),
        (&capacity, CAPACITY_USERS),
        (&run, WATCHED),
    ] {
        let errs = errors(v, &fixtures::value(text));
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

#[test]
fn results_written_back_still_match() {
    // What this herd writes from the types, not only what an earlier build wrote.
    let s = serde_json::to_value(fixtures::sweep(SWEEP_OPEN)).unwrap();
    assert!(errors(&validator("sweep.schema.json"), &s).is_empty());
    let mut c = fixtures::capacity(CAPACITY_OPEN);
    c.capacity_rps = None;
    c.ceiling = None;
    c.knee = None;
    for u in [
        json!({"reason": "generator-limited", "level": 800.0, "reasons": ["cpu 99%"], "at_least": 400.0}),
        json!({"reason": "noisy", "level": 413.0}),
        json!({"reason": "never-broke", "at_least": 1e6}),
        json!({"reason": "out-of-probes", "held": 400.0, "broke": null}),
    ] {
        c.undecided = Some(serde_json::from_value(u).unwrap());
        let v = serde_json::to_value(&c).unwrap();
        let errs = errors(&validator("capacity.schema.json"), &v);
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

#[test]
fn the_schemas_refuse_what_is_not_a_sweep_or_a_capacity_search() {
    let sweep = validator("sweep.schema.json");
    let capacity = validator("capacity.schema.json");
    let breakages: [(&jsonschema::Validator, &str, &str, Value); 7] = [
        (&sweep, SWEEP_OPEN, "/kind", "run".into()),
        (&sweep, SWEEP_OPEN, "/model", "both".into()),
        (&sweep, SWEEP_OPEN, "/steps/0/level", 0.into()),
        // A step's run is held to the run's schema.
        (
            &sweep,
            SWEEP_OPEN,
            "/steps/1/runs/0/totals/ok",
            "many".into(),
        ),
        (
            &capacity,
            CAPACITY_OPEN,
            "/probes/0/purpose",
            "guess".into(),
        ),
        (
            &capacity,
            CAPACITY_OPEN,
            "/slo/objectives/0/percentile",
            98.into(),
        ),
        (
            &capacity,
            CAPACITY_OPEN,
            "/undecided",
            json!({"reason": "bored"}),
        ),
    ];
    for (v, text, pointer, bad) in breakages {
        let mut doc = fixtures::value(text);
        *doc.pointer_mut(pointer).unwrap() = bad;
        assert!(!v.is_valid(&doc), "{pointer} should be refused");
    }
    let mut doc = fixtures::value(CAPACITY_OPEN);
    doc.as_object_mut().unwrap().remove("probes");
    assert!(!capacity.is_valid(&doc));
    // Unknown keys are allowed at the top level only, as in the run's schema.
    let mut doc = fixtures::value(SWEEP_OPEN);
    doc["from_a_later_herd"] = true.into();
    assert!(sweep.is_valid(&doc));
    doc["config"]["typo"] = 1.into();
    assert!(!sweep.is_valid(&doc));
}

#[test]
fn criteria_with_le_and_lt_write_schema_valid_slos_and_stop_rules() {
    // `<=` in --slo and `<` in --stop are kept in the result; the schemas must take them.
    let mut s = fixtures::sweep(SWEEP_OPEN);
    s.config.stop = herd_result::sweep::StopRule::parse("p99 < 100ms, errors < 5%").unwrap();
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["config"]["stop"]["errors_strict"], true);
    let errs = errors(&validator("sweep.schema.json"), &v);
    assert!(errs.is_empty(), "{errs:#?}");
    s.config.stop =
        herd_result::sweep::StopRule::parse("ttft p99 < 500ms, itl p99 <= 50ms").unwrap();
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["config"]["stop"]["streams"][0]["of"], "ttft");
    let errs = errors(&validator("sweep.schema.json"), &v);
    assert!(errs.is_empty(), "{errs:#?}");
    let mut bad = v.clone();
    bad["config"]["stop"]["streams"][0]["of"] = "tokens".into();
    assert!(!errors(&validator("sweep.schema.json"), &bad).is_empty());
    let mut c = fixtures::capacity(CAPACITY_OPEN);
    c.slo = herd_result::capacity::Slo::parse("p99 <= 100ms, errors <= 1%").unwrap();
    let v = serde_json::to_value(&c).unwrap();
    assert_eq!(v["slo"]["objectives"][1]["inclusive"], true);
    let errs = errors(&validator("capacity.schema.json"), &v);
    assert!(errs.is_empty(), "{errs:#?}");
}
