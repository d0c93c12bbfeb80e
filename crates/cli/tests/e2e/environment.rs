//! `{{env.NAME}}` in workload files and `-e NAME=VALUE`: a token reaches the server without
//! being written in the file, and a missing one is named before anything is sent.

use crate::common::*;

#[test]
fn env_values_fill_a_workload_and_stay_out_of_the_file() {
    let nginx = Nginx::start_configured(
        r#"log_format auth '$request_uri $http_authorization';"#,
        "access_log requests.log auth;",
        "",
    );
    let dir = TempDir::new("env-values");
    let file = dir.path("api.yaml");
    std::fs::write(
        &file,
        format!(
            r#"target: {}
load: {{ model: closed, users: 1, iterations: 2 }}
scenarios:
  - name: api
    steps:
      - get: /api?user={{{{env.API_USER}}}}
        headers: {{ Authorization: "Bearer {{{{env.API_TOKEN}}}}" }}
"#,
            nginx.url("")
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();

    // Missing: both named, nothing sent.
    let ran = Herd::new(&["run", "-q", "-t", "1", file]).run();
    ran.code(2);
    let err = ran.stderr();
    assert!(
        err.contains("API_USER is not set") && err.contains("API_TOKEN"),
        "{err}"
    );
    assert!(err.contains("-e API_TOKEN=VALUE"), "{err}");
    let ran = Herd::new(&["validate", file]).run();
    ran.code(2);

    Herd::new(&["validate", "-e", "API_USER=x", "-e", "API_TOKEN=y", file])
        .run()
        .code(0);
    let mut cmd = herd();
    cmd.args(["run", "-q", "-t", "1", "-e", "API_TOKEN=s3cret", file])
        .env("API_USER", "ann")
        .env("API_TOKEN", "overridden by -e");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = std::fs::read_to_string(nginx.dir.path("requests.log")).unwrap();
    assert_eq!(log, "/api?user=ann Bearer s3cret\n".repeat(2));

    let ran = Herd::new(&["run", "-e", "NO-EQUALS", file]).run();
    ran.code(2);
    assert!(
        ran.stderr().contains("expected NAME=VALUE"),
        "{}",
        ran.stderr()
    );
}
