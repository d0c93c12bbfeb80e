//! `-d` data with templates: each call's message numbered, as herd's other bodies are
//! (`{{seq}}`: the call's number in the run, from 1; ghz's `{{.RequestNumber}}`: from 0). The
//! JSON is split around them once; a call renders its number in and encodes its message.

use prost_reflect::MethodDescriptor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const SEQ: &str = "{{seq}}";
const GHZ: &str = "{{.RequestNumber}}";

/// One piece of the data: literal text, or a number.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// `{{seq}}` (from 1) or `{{.RequestNumber}}` (from 0).
    Number {
        from: u64,
    },
}

/// Templated data and the run's call counter, shared by every thread.
#[derive(Clone, Debug)]
pub struct Data {
    pieces: Arc<[Piece]>,
    method: MethodDescriptor,
    seq: Arc<AtomicU64>,
}

impl Data {
    /// The data's pieces, or `None` when it holds no template (the same bytes every call).
    /// A template other than the two is refused, with the ones there are.
    pub fn parse(
        json: &str,
        method: &MethodDescriptor,
        flag: &str,
    ) -> Result<Option<Data>, String> {
        if !json.contains("{{") {
            return Ok(None);
        }
        let mut pieces = Vec::new();
        let mut rest = json;
        while let Some(at) = rest.find("{{") {
            let (text, tail) = rest.split_at(at);
            if !text.is_empty() {
                pieces.push(Piece::Text(text.to_owned()));
            }
            let (piece, len) = if tail.starts_with(SEQ) {
                (Piece::Number { from: 1 }, SEQ.len())
            } else if tail.starts_with(GHZ) {
                (Piece::Number { from: 0 }, GHZ.len())
            } else {
                let shown: String = tail.chars().take(24).collect();
                return Err(format!(
                    "{flag}: {shown}... is not a template herd grpc renders: {SEQ} (the call's \
                     number, from 1) or {GHZ} (ghz's, from 0)"
                ));
            };
            pieces.push(piece);
            rest = &tail[len..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        let data = Data {
            pieces: pieces.into(),
            method: method.clone(),
            seq: Arc::default(),
        };
        // The first call's message, checked before the run: a bad field is told now.
        crate::message::encode_json(method, &data.render(0), flag)?;
        Ok(Some(data))
    }

    /// The JSON of the call numbered `n` (from 0).
    fn render(&self, n: u64) -> String {
        let mut out = String::new();
        for p in self.pieces.iter() {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Number { from } => out.push_str(&(n + from).to_string()),
            }
        }
        out
    }

    /// The first call's framed messages (the counter left as it is).
    pub fn first(&self) -> Result<Vec<u8>, String> {
        crate::message::encode_json(&self.method, &self.render(0), "-d")
    }

    /// The next call's framed messages.
    pub fn next(&self) -> Result<Vec<u8>, String> {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        crate::message::encode_json(&self.method, &self.render(n), "-d")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{tempdir, GREETER};

    fn method() -> MethodDescriptor {
        let dir = tempdir();
        let p = dir.join("g.proto");
        std::fs::write(&p, GREETER).unwrap();
        let pool = crate::describe::pool(Some(&p), &[], None).unwrap();
        crate::describe::method(&pool, "helloworld.Greeter/SayHello").unwrap()
    }

    #[test]
    fn each_call_gets_its_number() {
        let m = method();
        assert!(Data::parse(r#"{"name":"x"}"#, &m, "-d").unwrap().is_none());
        let first = [0, 0, 0, 0, 4, 0x0a, 2, b'u', b'1'];
        let d = Data::parse(
            r#"{"name":"u{{seq}}","times":{{.RequestNumber}}}"#,
            &m,
            "-d",
        )
        .unwrap()
        .unwrap();
        let twin = d.clone();
        assert_eq!(d.first().unwrap(), first);
        // name "u1", times 0; then name "u2", times 1 (the counter is the run's, shared)
        assert_eq!(d.next().unwrap(), first);
        assert_eq!(
            twin.next().unwrap(),
            [0, 0, 0, 0, 6, 0x0a, 2, b'u', b'2', 0x10, 1]
        );
        let e = Data::parse(r#"{"name":"{{uuid}}"}"#, &m, "-d").unwrap_err();
        assert!(e.contains("{{seq}}") && e.contains("{{uuid}}"), "{e}");
        let e = Data::parse(r#"{"nom":"{{seq}}"}"#, &m, "-d").unwrap_err();
        assert!(e.contains("not a helloworld.HelloRequest"), "{e}");
    }
}
