//! A result printed as one framed block on stdout, so `kubectl logs` (or any log collector)
//! carries it back with no shared volume: base64 lines between two marker lines, which survive
//! log prefixes, interleaved progress lines and CRLF.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

const BEGIN: &str = "-----BEGIN HERD RESULT";
const END: &str = "-----END HERD RESULT-----";
const WIDTH: usize = 76;

/// The block for `json`, labelled (e.g. with the shard `2/8`) for people reading the log.
pub fn frame(json: &[u8], label: &str) -> String {
    let b64 = STANDARD.encode(json);
    let mut out = format!("{BEGIN} {label}-----\n");
    for chunk in b64.as_bytes().chunks(WIDTH) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// Every framed block in `log`, decoded, in order. A block cut short (the pod was killed
/// while printing) or damaged is an error naming its label, never a silent skip.
pub fn extract(log: &str) -> Vec<Result<Vec<u8>, String>> {
    let mut found = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in log.lines() {
        // Log collectors may prefix lines (timestamps, pod names): look for the marker inside.
        let line = line.trim_end_matches('\r');
        if let Some(at) = line.find(BEGIN) {
            if let Some((label, _)) = open.take() {
                found.push(Err(format!(
                    "the result block {label} ends without its END line"
                )));
            }
            let label = line[at + BEGIN.len()..].trim().trim_end_matches('-').trim();
            open = Some((label.to_owned(), String::new()));
        } else if line.contains(END) {
            if let Some((label, b64)) = open.take() {
                found.push(
                    STANDARD
                        .decode(b64.as_bytes())
                        .map_err(|e| format!("the result block {label} is damaged: {e}")),
                );
            }
        } else if let Some((_, b64)) = open.as_mut() {
            // The payload is the last whitespace-separated word: prefixes fall away.
            b64.push_str(line.split_whitespace().last().unwrap_or(""));
        }
    }
    if let Some((label, _)) = open {
        found.push(Err(format!(
            "the result block {label} ends without its END line: the instance stopped while printing it"
        )));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_exactly_among_other_lines() {
        let a = br#"{"a":1}"#.repeat(40);
        let b = b"{\"b\":2}".to_vec();
        let log = format!(
            "herd: waiting for 2026-12-01T12:00:00Z\n{}progress 50%\r\n{}done\n",
            frame(&a, "0/2"),
            frame(&b, "1/2").replace('\n', "\r\n")
        );
        let got: Vec<Vec<u8>> = extract(&log).into_iter().map(Result::unwrap).collect();
        assert_eq!(got, vec![a, b]);
    }

    #[test]
    fn prefixed_log_lines_are_read_through() {
        let json = b"{\"x\": [1, 2, 3]}".repeat(20);
        let log: String = frame(&json, "3/4")
            .lines()
            .map(|l| format!("2026-12-01T12:00:01.5Z stdout F {l}\n"))
            .collect();
        assert_eq!(extract(&log), vec![Ok(json)]);
    }

    #[test]
    fn a_cut_block_is_an_error_naming_it() {
        let block = frame(b"{\"long\": true}", "2/4");
        let cut: String = block.lines().take(2).map(|l| format!("{l}\n")).collect();
        let got = extract(&cut);
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().unwrap_err().contains("2/4"), "{got:?}");
        assert!(extract("no blocks here\n").is_empty());
        let bad = "-----BEGIN HERD RESULT 1/4-----\n!!!!\n-----END HERD RESULT-----\n";
        assert!(extract(bad)[0].as_ref().unwrap_err().contains("damaged"));
    }
}
