//! Every diagnostic of the workload language with its place (line:column), and every problem
//! of a file at once.

use crate::common::fresh_dir;
use herd_workload::Workload;
use std::path::Path;

/// Each bad input gives its message at its place; all of them come at once.
#[test]
fn every_problem_is_reported_at_its_place() {
    let table: &[(&str, &str)] = &[
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios:\n  - { name: a, stpes: [] }\n",
         "4:16: unknown key `stpes` in a scenario (did you mean `steps`?)"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 10 parsecs }\nscenarios: [{ name: a, steps: [{ get: / }] }]\n",
         "2:29: duration: `10 parsecs` is not a duration (write a number with a unit"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, weight: 0, steps: [{ get: / }] }]\n",
         "3:32: a weight of 0 would never run this scenario"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: '/{{nope}}' }] }]\n",
         "3:41: `{{nope}}` names no data source or extracted variable"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: '/{{next}}' }, { get: /, extract: { next: { header: Location } } }] }]\n",
         "3:41: `{{next}}` is used before the step that extracts it"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\ndata: { u: { csv: herd-language-users.csv } }\nscenarios: [{ name: a, steps: [{ get: '/{{u.login}}' }] }]\n",
         "4:41: `{{u.login}}`: the CSV file of `u` has no column `login` (its columns are: user, password)"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\ndata: { u: { csv: no-such.csv } }\nscenarios: [{ name: a, steps: [{ get: / }] }]\n",
         "3:19: cannot read the CSV file "),
        ("target: http://127.0.0.1:1\nload: { model: clsed, users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: / }] }]\n",
         "2:16: `clsed` is not a load model (did you mean `closed`?)"),
        ("target: http://127.0.0.1:1\nload: { profile: peek, target: 5 }\nscenarios: [{ name: a, steps: [{ get: / }] }]\n",
         "2:18: `peek` is not a profile (did you mean `peak`?)"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: /, extract: { t: { json: token } } }] }]\n",
         "3:64: `token` must start with `$`"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ think: { uniform: [3s, 1s] } }] }]\n",
         "3:52: uniform: the first bound must not exceed the second"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: 'http://other:2/' }] }]\n",
         "3:32: request URL \"http://other:2/\" is not on the target"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: / }] }]\nthresholds: ['p95 < fast', 'GET /x: p99 < 1s']\n",
         "4:14: threshold column 7: in `p95 < fast`: `fast` is not a duration"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: / }] }]\nthresholds: ['GET /x: p99 < 1s']\n",
         "4:14: threshold `GET /x: p99 < 1s`: no request is named `GET /x` (did you mean `GET /`?)"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: / ] }\n",
         "YAML syntax"),
        ("target: http://127.0.0.1:1\nload: { users: 1, duration: 1s }\nscenarios: []\n",
         "3:12: `scenarios` is empty"),
    ];
    let dir = fresh_dir("diagnostics");
    std::fs::write(
        dir.join("herd-language-users.csv"),
        "user,password\nalice,a 1\n",
    )
    .unwrap();
    let mut all = String::new();
    for (src, want) in table {
        let err = match Workload::compile(src, Path::new("w.yaml"), &dir) {
            Ok(_) => panic!("accepted:\n{src}"),
            Err(d) => d.to_string(),
        };
        assert!(err.contains(want), "want {want:?}\n got {err}");
        all.push_str(src.lines().last().unwrap_or_default());
    }
    // all at once: three unrelated problems in one file, three diagnostics
    let src = "target: http://127.0.0.1:1\nload: { users: 1, duration: 1 lightyear }\nscenarios:\n  - { name: a, weight: 0, steps: [{ get: '/{{x}}' }] }\n";
    let d = Workload::compile(src, Path::new("w.yaml"), &dir)
        .err()
        .unwrap();
    assert_eq!(d.problems.len(), 3, "{d}");
}
