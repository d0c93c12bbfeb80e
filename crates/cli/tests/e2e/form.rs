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
