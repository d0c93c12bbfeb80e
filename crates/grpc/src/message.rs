//! A call's messages as JSON, both ways: the request's JSON (an array: a client stream's
//! messages) checked and framed for the wire, and a reply's framed messages read back as JSON,
//! every field shown (defaults too), for a workload's checks and extraction by JSON path.

use crate::frame::{self, Decoder};
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor, SerializeOptions};

/// `json` as `method`'s request messages, each framed: the request body. `flag` names where
/// the JSON came from in messages (`-d`, a step's `data`).
pub fn encode_json(method: &MethodDescriptor, json: &str, flag: &str) -> Result<Vec<u8>, String> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| format!("{flag}: the data is not JSON ({e}): give a JSON object"))?;
    let messages = match value {
        serde_json::Value::Array(items) if method.is_client_streaming() => items,
        serde_json::Value::Array(_) => {
            return Err(format!(
                "{flag}: an array is a client stream's messages, and {} takes one \
                 message: give a JSON object",
                method.full_name()
            ))
        }
        one => vec![one],
    };
    let input = method.input();
    let mut body = Vec::new();
    for m in messages {
        let msg = DynamicMessage::deserialize(input.clone(), m).map_err(|e| {
            format!(
                "{flag}: the data is not a {} message: {e}",
                input.full_name()
            )
        })?;
        body.extend(frame::encode(&msg.encode_to_vec()));
    }
    Ok(body)
}

/// A reply's messages (the response body, framed) as JSON: one message an object, none
/// `null`, several an array. A broken frame or a message of another type says what is wrong.
pub fn reply_json(reply: &MessageDescriptor, body: &[u8]) -> Result<serde_json::Value, String> {
    let options = SerializeOptions::new().skip_default_fields(false);
    let mut decoder = Decoder::default();
    let (mut messages, mut bad) = (Vec::new(), None);
    decoder
        .feed(body, |m| {
            if bad.is_some() {
                return;
            }
            let json = DynamicMessage::decode(reply.clone(), m)
                .map_err(|e| format!("a reply message is not a {}: {e}", reply.full_name()))
                .and_then(|msg| {
                    msg.serialize_with_options(serde_json::value::Serializer, &options)
                        .map_err(|e| e.to_string())
                });
            match json {
                Ok(v) => messages.push(v),
                Err(e) => bad = Some(e),
            }
        })
        .and_then(|()| decoder.finish())
        .map_err(|e| e.to_string())?;
    if let Some(e) = bad {
        return Err(e);
    }
    Ok(match messages.len() {
        0 => serde_json::Value::Null,
        1 => messages.pop().unwrap_or_default(),
        _ => serde_json::Value::Array(messages),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{tempdir, GREETER};

    fn method(name: &str) -> MethodDescriptor {
        let dir = tempdir();
        let p = dir.join("g.proto");
        std::fs::write(&p, GREETER).unwrap();
        let pool = crate::describe::pool(Some(&p), &[], None).unwrap();
        crate::describe::method(&pool, name).unwrap()
    }

    #[test]
    fn a_reply_reads_back_as_json_with_every_field() {
        let m = method("helloworld.Greeter/SayHello");
        let wire = encode_json(&m, r#"{"name": "x"}"#, "data").unwrap();
        assert_eq!(wire, [0, 0, 0, 0, 3, 0x0a, 1, b'x']);
        // HelloReply { message: "hi" }, twice: a stream's two messages
        let one = frame::encode(&[0x0a, 2, b'h', b'i']);
        assert_eq!(
            reply_json(&m.output(), &one).unwrap(),
            serde_json::json!({"message": "hi"})
        );
        let two = [one.clone(), frame::encode(&[])].concat();
        assert_eq!(
            reply_json(&m.output(), &two).unwrap(),
            serde_json::json!([{"message": "hi"}, {"message": ""}])
        );
        assert_eq!(
            reply_json(&m.output(), &[]).unwrap(),
            serde_json::Value::Null
        );
        let e = reply_json(&m.output(), &frame::encode(&[0xff, 0xff])).unwrap_err();
        assert!(e.contains("not a helloworld.HelloReply"), "{e}");
        let e = reply_json(&m.output(), &one[..4]).unwrap_err();
        assert!(e.contains("ended inside a message"), "{e}");
        let e = encode_json(&m, r#"{"nom": 1}"#, "data").unwrap_err();
        assert!(
            e.starts_with("data: the data is not a helloworld.HelloRequest"),
            "{e}"
        );
    }
}
