use crate::fixture;
use herd_result::{read_json, write_json, ReportError};

#[test]
fn written_results_read_back_equal() {
    let r = fixture::result();
    let path =
        std::env::temp_dir().join(format!("herd-report-roundtrip-{}.json", std::process::id()));
    write_json(&r, std::fs::File::create(&path).unwrap()).unwrap();
    let back = read_json(&path);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(back.unwrap(), r);
}

#[test]
fn json_is_pretty_and_keyed_as_documented() {
    let mut out = Vec::new();
    write_json(&fixture::result(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with("}\n"));
    for key in [
        "\"herd_version\"",
        "\"kind\": \"run\"",
        "\"model\": \"open\"",
        "\"calls_per_conn\": null",
        "\"p999\"",
        "\"verdict\": \"ok\"",
        "\"2xx\"",
    ] {
        assert!(text.contains(key), "missing {key}");
    }
}

#[test]
fn a_result_from_another_herd_version_is_refused_by_name() {
    let mut doc = serde_json::to_value(fixture::result()).unwrap();
    doc["herd_version"] = "9.0.0".into();
    let err = herd_result::parse_json(&doc.to_string(), "old.json").unwrap_err();
    assert!(
        matches!(err, ReportError::UnknownVersion { ref found, .. } if found == "9.0.0"),
        "{err}"
    );
}
