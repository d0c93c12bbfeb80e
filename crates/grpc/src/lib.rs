//! gRPC calls on herd's own HTTP/2 session: no tokio, no tonic. A call is an HTTP/2 POST to
//! `/package.Service/Method` with `content-type: application/grpc` and a length-prefixed
//! protobuf message; its trailers say `grpc-status`. This crate turns ghz's flags into that
//! request (types from a `.proto` compiled in-process by protox, or a protoset; messages from
//! JSON through prost-reflect), and judges each response on the engine's loop.
//!
//! ```
//! use herd_grpc::frame::{encode, Decoder};
//! let wire = [encode(b"ab"), encode(b"c")].concat();
//! let mut d = Decoder::default();
//! let mut got = Vec::new();
//! d.feed(&wire[..4], |m| got.push(m.to_vec())).unwrap();
//! d.feed(&wire[4..], |m| got.push(m.to_vec())).unwrap();
//! assert_eq!(got, [b"ab".to_vec(), b"c".to_vec()]);
//! ```

mod call;
mod data;
mod describe;
#[cfg(test)]
mod fixture;
pub mod frame;
mod message;
mod reflect;
mod script;

pub use call::{Call, CallSpec, ReflectTls};
pub use data::Data;
pub use describe::{method, pool};
pub use message::{encode_json, reply_json};
pub use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
pub use script::{judge, GrpcScript};
