use crate::fixtures::{self, OPEN};
use herd_result::{parse_document, parse_json, write_json, Document, ReportError, HERD_VERSION};

#[test]
fn results_of_this_herd_series_are_read() {
    let mut doc = fixtures::value(OPEN);
    // A later patch release of the same series reads the same.
    doc["herd_version"] = "0.1.9".into();
    assert!(matches!(
        parse_document(&doc.to_string(), "a.json"),
        Ok(Document::Run(_))
    ));
}

#[test]
fn results_herd_cannot_read_are_refused_by_name() {
    let mut doc = fixtures::value(OPEN);
    for (version, hint) in [("0.0.3", "0.0.3"), ("2.0.0", "2.0.0")] {
        doc["herd_version"] = version.into();
        let err = parse_document(&doc.to_string(), "old.json").unwrap_err();
        assert!(matches!(err, ReportError::UnknownVersion { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("written by herd {hint}")) && msg.contains(HERD_VERSION),
            "{msg}"
        );
    }
    let not_herd = parse_document(r#"{"metrics": {"http_reqs": 1}}"#, "k6.json").unwrap_err();
    assert_eq!(
        not_herd.to_string(),
        "k6.json is not a herd result: it has no `herd_version` key"
    );
    let html = parse_document("<!DOCTYPE html><html>", "report.html").unwrap_err();
    assert!(
        html.to_string().starts_with("report.html is not JSON"),
        "{html}"
    );
}

#[test]
fn unknown_keys_survive_a_round_trip() {
    let mut doc = fixtures::value(OPEN);
    doc["future_section"] = serde_json::json!({"home": {"requests": 3}});
    let r = parse_json(&doc.to_string(), "a.json").unwrap();
    assert!(r.extra.contains_key("future_section"));
    let mut out = Vec::new();
    write_json(&r, &mut out).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(back["future_section"], doc["future_section"]);
    assert_eq!(parse_json(&back.to_string(), "b.json").unwrap(), r);
}
