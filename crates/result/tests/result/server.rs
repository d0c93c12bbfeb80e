//! The watched server in the result: optional, schema-checked, read back.

use crate::fixture::{self, watched};
use crate::schema::validator;
use herd_result::{parse_json, write_json};

#[test]
fn a_watched_result_matches_the_schema_and_reads_back_equal() {
    let r = watched();
    let doc = serde_json::to_value(&r).unwrap();
    let v = validator();
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:#?}");
    assert_eq!(
        doc["server"]["processes"][0]["samples"][1]["cpu_percent"],
        80.0
    );
    assert_eq!(
        doc["server"]["prometheus"][0]["series"][1]["samples"][2],
        serde_json::json!([3.0, null])
    );
    let mut out = Vec::new();
    write_json(&r, &mut out).unwrap();
    let back = parse_json(std::str::from_utf8(&out).unwrap(), "watched.json").unwrap();
    assert_eq!(back, r);
}

#[test]
fn the_schema_rejects_a_malformed_server() {
    let v = validator();
    let breakages: [(&str, serde_json::Value); 4] = [
        ("/server/processes/0/samples/0/cpu_percent", (-1).into()),
        ("/server/prometheus/0/series/0/kind", "meter".into()),
        (
            "/server/prometheus/0/series/0/samples/0",
            serde_json::json!([1.0]),
        ),
        ("/server/processes/0/pid", "nginx".into()),
    ];
    for (pointer, bad) in breakages {
        let mut doc = serde_json::to_value(watched()).unwrap();
        *doc.pointer_mut(pointer).unwrap() = bad;
        assert!(!v.is_valid(&doc), "{pointer} should be rejected");
    }
}

#[test]
fn results_without_a_server_have_no_key_and_still_read() {
    let r = fixture::result();
    assert_eq!(r.server, None);
    let doc = serde_json::to_value(&r).unwrap();
    assert!(
        doc.get("server").is_none(),
        "no key when nothing was watched"
    );
    let back = parse_json(&doc.to_string(), "old.json").unwrap();
    assert_eq!(back.server, None);
}
