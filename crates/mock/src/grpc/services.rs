//! The services `herd serve` answers, from .proto files embedded in the binary and compiled
//! once, at the first gRPC call (protox: no protoc), into one descriptor pool that also
//! answers server reflection.

use std::sync::OnceLock;
use std::time::Duration;

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use super::status;

/// (the name importers and reflection clients use, the text)
const FILES: [(&str, &str); 4] = [
    ("herd/echo.proto", include_str!("../../proto/echo.proto")),
    (
        "helloworld.proto",
        include_str!("../../proto/helloworld.proto"),
    ),
    (
        "grpc/reflection/v1/reflection.proto",
        include_str!("../../proto/reflection_v1.proto"),
    ),
    (
        "grpc/reflection/v1alpha/reflection.proto",
        include_str!("../../proto/reflection_v1alpha.proto"),
    ),
];

/// Most messages a server stream may be asked for in one call.
pub(crate) const MAX_COUNT: u32 = 100_000;

/// Messages of a server stream when the request leaves `count` at 0.
pub(crate) const DEFAULT_COUNT: u32 = 10;

/// What a method does with the messages of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    /// `herd.echo.Echo/Unary`
    Unary,
    /// `herd.echo.Echo/ServerStream`
    ServerStream,
    /// `herd.echo.Echo/ClientStream`
    ClientStream,
    /// `herd.echo.Echo/Bidi`
    Bidi,
    /// `helloworld.Greeter/SayHello`
    SayHello,
    /// `grpc.reflection.v1.ServerReflection/ServerReflectionInfo`, or v1alpha's (true).
    Reflection { alpha: bool },
}

const METHODS: [(&str, Handler); 7] = [
    ("/herd.echo.Echo/Unary", Handler::Unary),
    ("/herd.echo.Echo/ServerStream", Handler::ServerStream),
    ("/herd.echo.Echo/ClientStream", Handler::ClientStream),
    ("/herd.echo.Echo/Bidi", Handler::Bidi),
    ("/helloworld.Greeter/SayHello", Handler::SayHello),
    (
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        Handler::Reflection { alpha: false },
    ),
    (
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        Handler::Reflection { alpha: true },
    ),
];

impl Handler {
    pub(crate) fn of(path: &str) -> Option<Handler> {
        METHODS.iter().find(|(p, _)| *p == path).map(|(_, h)| *h)
    }

    /// Answers each request message as it comes, rather than once the client is done.
    pub(crate) fn answers_each(self) -> bool {
        matches!(self, Handler::Bidi | Handler::Reflection { .. })
    }

    /// Takes one request message only (unary and server-streaming methods).
    pub(crate) fn takes_one(self) -> bool {
        matches!(
            self,
            Handler::Unary | Handler::ServerStream | Handler::SayHello
        )
    }
}

/// A call's failure: a gRPC status code and its message.
pub(crate) type Status = (u8, String);

/// An echo request, read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Echo {
    pub(crate) message: String,
    pub(crate) count: u32,
    pub(crate) interval: Duration,
}

pub(crate) struct Services {
    pub(crate) pool: DescriptorPool,
    echo_request: MessageDescriptor,
    echo_response: MessageDescriptor,
    hello_request: MessageDescriptor,
    hello_reply: MessageDescriptor,
}

/// The embedded files, by name; google/protobuf's own from protox.
struct Embedded;

impl FileResolver for Embedded {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match FILES.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => File::from_source(n, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The services, compiled at the first call. The files are part of the binary and a test
/// compiles them, so failing here is a bug in herd, not in what a user wrote.
pub(crate) fn services() -> &'static Services {
    static SERVICES: OnceLock<Services> = OnceLock::new();
    SERVICES.get_or_init(|| Services::compile().expect("herd serve's own .proto files compile"))
}

impl Services {
    fn compile() -> Result<Services, String> {
        let mut resolver = ChainFileResolver::new();
        resolver.add(Embedded);
        resolver.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        for (name, _) in FILES {
            compiler.open_file(name).map_err(|e| e.to_string())?;
        }
        let pool = compiler.descriptor_pool();
        let message = |name: &str| {
            pool.get_message_by_name(name)
                .ok_or_else(|| format!("{name} is not in the embedded files"))
        };
        Ok(Services {
            echo_request: message("herd.echo.EchoRequest")?,
            echo_response: message("herd.echo.EchoResponse")?,
            hello_request: message("helloworld.HelloRequest")?,
            hello_reply: message("helloworld.HelloReply")?,
            pool,
        })
    }

    pub(crate) fn echo(&self, bytes: &[u8]) -> Result<Echo, Status> {
        let request = decode(&self.echo_request, bytes)?;
        let message = string(&request, "message");
        let count = match request.get_field_by_name("count").as_deref() {
            Some(Value::U32(0)) | None => DEFAULT_COUNT,
            Some(Value::U32(n)) => *n,
            Some(_) => DEFAULT_COUNT,
        };
        if count > MAX_COUNT {
            return Err((
                status::INVALID_ARGUMENT,
                format!("count {count} is above herd serve's {MAX_COUNT}"),
            ));
        }
        let interval = match request.get_field_by_name("interval").as_deref() {
            Some(Value::Message(d)) => {
                let seconds = match d.get_field_by_name("seconds").as_deref() {
                    Some(Value::I64(s)) => *s,
                    _ => 0,
                };
                let nanos = match d.get_field_by_name("nanos").as_deref() {
                    Some(Value::I32(n)) => *n,
                    _ => 0,
                };
                if seconds < 0 || nanos < 0 || seconds > 3600 {
                    return Err((
                        status::INVALID_ARGUMENT,
                        "interval must be from 0 to 1h".into(),
                    ));
                }
                Duration::new(seconds as u64, nanos as u32)
            }
            _ => Duration::ZERO,
        };
        Ok(Echo {
            message,
            count,
            interval,
        })
    }

    pub(crate) fn echo_reply(&self, message: &str, index: u32) -> Vec<u8> {
        let mut reply = DynamicMessage::new(self.echo_response.clone());
        reply.set_field_by_name("message", Value::String(message.to_string()));
        reply.set_field_by_name("index", Value::U32(index));
        reply.encode_to_vec()
    }

    /// `SayHello`: "Hello NAME", as grpc-go's greeter_server answers.
    pub(crate) fn hello(&self, bytes: &[u8]) -> Result<Vec<u8>, Status> {
        let name = string(&decode(&self.hello_request, bytes)?, "name");
        let mut reply = DynamicMessage::new(self.hello_reply.clone());
        reply.set_field_by_name("message", Value::String(format!("Hello {name}")));
        Ok(reply.encode_to_vec())
    }
}

pub(crate) fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage, Status> {
    DynamicMessage::decode(desc.clone(), bytes).map_err(|e| {
        (
            status::INTERNAL,
            format!("the request is not a {}: {e}", desc.full_name()),
        )
    })
}

pub(crate) fn string(message: &DynamicMessage, field: &str) -> String {
    match message.get_field_by_name(field).as_deref() {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_files_compile_and_every_method_is_in_them() {
        let s = services();
        for (path, _) in METHODS {
            let (service, method) = path[1..].split_once('/').unwrap();
            let found = s
                .pool
                .get_service_by_name(service)
                .and_then(|svc| svc.methods().find(|m| m.name() == method));
            assert!(found.is_some(), "{path}");
        }
    }

    #[test]
    fn echo_reads_count_and_interval_and_refuses_too_many() {
        let s = services();
        let mut request = DynamicMessage::new(s.echo_request.clone());
        request.set_field_by_name("message", Value::String("hi".into()));
        let echo = s.echo(&request.encode_to_vec()).unwrap();
        assert_eq!((echo.count, echo.interval), (DEFAULT_COUNT, Duration::ZERO));
        request.set_field_by_name("count", Value::U32(100));
        let duration = s
            .pool
            .get_message_by_name("google.protobuf.Duration")
            .unwrap();
        let mut d = DynamicMessage::new(duration);
        d.set_field_by_name("nanos", Value::I32(10_000_000));
        request.set_field_by_name("interval", Value::Message(d));
        let echo = s.echo(&request.encode_to_vec()).unwrap();
        assert_eq!(
            echo,
            Echo {
                message: "hi".into(),
                count: 100,
                interval: Duration::from_millis(10)
            }
        );
        request.set_field_by_name("count", Value::U32(MAX_COUNT + 1));
        assert_eq!(
            s.echo(&request.encode_to_vec()).unwrap_err().0,
            status::INVALID_ARGUMENT
        );
        assert_eq!(s.echo(b"\xff\xff").unwrap_err().0, status::INTERNAL);
    }

    #[test]
    fn say_hello_greets_by_name() {
        let s = services();
        let mut request = DynamicMessage::new(s.hello_request.clone());
        request.set_field_by_name("name", Value::String("herd".into()));
        let reply = s.hello(&request.encode_to_vec()).unwrap();
        let reply = DynamicMessage::decode(s.hello_reply.clone(), &reply[..]).unwrap();
        assert_eq!(string(&reply, "message"), "Hello herd");
    }
}
