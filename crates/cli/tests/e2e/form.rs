//! `-F` (curl's multipart fields): an upload reaches the server byte for byte, with its file
//! name and content type; the server echoes the request and a wrk script shows what it got.

use crate::common::*;

#[test]
fn a_multipart_upload_reaches_the_server_as_curl_would_send_it() {
    let server = mock(&[]);
    let dir = TempDir::new("form");
    let file = dir.path("notes.txt");
    std::fs::write(&file, "hello upload\n").unwrap();
    let script = dir.path("show.lua");
    std::fs::write(
        &script,
        "local shown = false\n\
         function response(status, headers, body)\n\
           if not shown then shown = true; io.write(body) end\n\
         end\n",
    )
    .unwrap();
    let ran = Herd::new(&["run", "-q", "-c", "1", "-t", "1", "-n", "3"])
        .args(&["-F", "title=My notes", "-F"])
        .args(&[&format!("doc=@{}", file.display())])
        .file("-s", &script)
        .args(&[&format!("http://{}/echo", server.local_addr())])
        .run();
    ran.code(0);
    let echoed = ran.stdout();
    assert!(
        echoed.starts_with_any_line("POST /echo HTTP/1.1"),
        "{echoed}"
    );
    let boundary = echoed
        .lines()
        .find_map(|l| l.strip_prefix("content-type: multipart/form-data; boundary="))
        .unwrap_or_else(|| panic!("no multipart Content-Type:\n{echoed}"))
        .trim()
        .to_owned();
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nMy notes\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\n\
         Content-Type: text/plain\r\n\r\nhello upload\n\r\n--{boundary}--\r\n"
    );
    assert!(echoed.contains(&body), "{echoed}");

    let ran = Herd::new(&["run", "-n", "1", "-F", "doc=@/no/such/file.bin"])
        .args(&[&format!("http://{}/echo", server.local_addr())])
        .run();
    ran.code(2);
    assert!(
        ran.stderr().contains("/no/such/file.bin"),
        "{}",
        ran.stderr()
    );
}

trait Lines {
    fn starts_with_any_line(&self, line: &str) -> bool;
}

impl Lines for String {
    fn starts_with_any_line(&self, line: &str) -> bool {
        self.lines().any(|l| l.trim_end() == line)
    }
}

#[test]
fn a_workload_steps_multipart_upload_reaches_the_server_as_run_f_sends_it() {
    let server = mock(&[]);
    let dir = TempDir::new("form-workload");
    std::fs::create_dir_all(dir.path("files")).unwrap();
    std::fs::write(dir.path("files/notes.txt"), "hello upload\n").unwrap();
    let file = dir.path("upload.yaml");
    // The echo route answers with the request it read: the checks see what arrived.
    std::fs::write(
        &file,
        format!(
            "target: http://{}\n\
             load: {{ users: 1, iterations: 3 }}\n\
             scenarios:\n\
             \x20 - name: upload\n\
             \x20   steps:\n\
             \x20     - post: /echo\n\
             \x20       name: upload\n\
             \x20       multipart:\n\
             \x20         title: \"by {{{{env.WHO}}}}\"\n\
             \x20         doc: \"@files/notes.txt;type=text/markdown\"\n\
             \x20       check:\n\
             \x20         status: 200\n\
             \x20         body_contains: 'name=\"doc\"; filename=\"notes.txt\"'\n\
             \x20     - post: /echo\n\
             \x20       name: title\n\
             \x20       multipart: {{ title: \"by {{{{env.WHO}}}}\" }}\n\
             \x20       check: {{ body_contains: 'by alice' }}\n",
            server.local_addr()
        ),
    )
    .unwrap();
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", "-q", "-t", "1", "-e", "WHO=alice"])
        .args(&[file.to_str().unwrap()])
        .json(&json)
        .run();
    ran.code(0);
    let r = ran.json();
    let checks = r["checks"].as_array().expect("checks");
    for name in [
        "upload: status 200",
        "upload: body contains \"name=\\\"doc\\\"; filename=\\\"notes.txt\\\"\"",
        "title: body contains \"by alice\"",
    ] {
        let c = checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no check {name}: {checks:?}"));
        assert_eq!(
            (c["passes"].as_u64(), c["fails"].as_u64()),
            (Some(3), Some(0)),
            "{c}"
        );
    }

    // A file that is not there is named with its line and column, before anything is sent.
    let bad = dir.path("bad.yaml");
    std::fs::write(
        &bad,
        "target: http://127.0.0.1:9\nload: { users: 1, iterations: 1 }\nscenarios:\n  - steps:\n      - post: /\n        multipart: { doc: \"@nope.bin\" }\n",
    )
    .unwrap();
    let o = run_herd(&["validate", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(text.contains("6:27") && text.contains("nope.bin"), "{text}");
}
