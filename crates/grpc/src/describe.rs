//! Where a call's types come from: a `.proto` compiled in-process (protox: no protoc), or a
//! compiled FileDescriptorSet (`--protoset`); and the method `--call` names in them.

use prost_reflect::{DescriptorPool, MethodDescriptor};
use std::path::{Path, PathBuf};

/// The types of `--proto` (its own directory and `--import-paths` searched for its imports,
/// as ghz does) or of `--protoset`.
pub fn pool(
    proto: Option<&Path>,
    import_paths: &[PathBuf],
    protoset: Option<&Path>,
) -> Result<DescriptorPool, String> {
    match (proto, protoset) {
        (Some(proto), _) => compile(proto, import_paths),
        (None, Some(set)) => {
            let bytes = std::fs::read(set)
                .map_err(|e| format!("cannot read --protoset {}: {e}", set.display()))?;
            DescriptorPool::decode(bytes.as_slice()).map_err(|e| {
                format!(
                    "--protoset {} is not a FileDescriptorSet ({e}); make one with \
                     `protoc --include_imports -o FILE.protoset FILE.proto`",
                    set.display()
                )
            })
        }
        (None, None) => Err(
            "give the call's types: --proto FILE.proto (with --import-paths for its imports) \
             or --protoset FILE, or leave both out to ask the server (reflection)"
                .into(),
        ),
    }
}

fn compile(proto: &Path, import_paths: &[PathBuf]) -> Result<DescriptorPool, String> {
    if !proto.is_file() {
        return Err(format!(
            "--proto {}: no such file; give the path of a .proto file",
            proto.display()
        ));
    }
    let dir = match proto.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let includes: Vec<PathBuf> = import_paths.iter().cloned().chain([dir]).collect();
    let compiled = protox::Compiler::new(&includes).and_then(|mut c| {
        c.include_imports(true).open_file(proto)?;
        Ok(c.descriptor_pool())
    });
    compiled.map_err(|e| {
        let mut text = format!("--proto {}: {e}", proto.display());
        if let Some(cause) = std::error::Error::source(&e) {
            text.push_str(&format!(": {cause}"));
        }
        text + "; --import-paths DIR,DIR names where its imports are"
    })
}

/// The method `call` names: `package.Service/Method` or `package.Service.Method`, as ghz
/// takes it. A name that is not there says what is.
pub fn method(pool: &DescriptorPool, call: &str) -> Result<MethodDescriptor, String> {
    let split = call.rfind('/').or_else(|| call.rfind('.'));
    let Some(at) = split.filter(|&at| at > 0 && at + 1 < call.len()) else {
        return Err(format!(
            "--call {call:?}: give the method as package.Service/Method (e.g. \
             helloworld.Greeter/SayHello)"
        ));
    };
    let (service, name) = (call[..at].trim_start_matches('/'), &call[at + 1..]);
    let services: Vec<String> = pool.services().map(|s| s.full_name().to_owned()).collect();
    let Some(svc) = pool.get_service_by_name(service) else {
        return Err(format!(
            "--call {call:?}: no service {service} in the types given; {}",
            match services.is_empty() {
                true => "they declare no service".to_owned(),
                false => format!("services: {}", services.join(", ")),
            }
        ));
    };
    let found = svc.methods().find(|m| m.name() == name);
    found.ok_or_else(|| {
        let methods: Vec<String> = svc.methods().map(|m| m.name().to_owned()).collect();
        format!(
            "--call {call:?}: {service} has no method {name}; its methods: {}",
            methods.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{tempdir, GREETER};

    fn greeter(dir: &Path) -> PathBuf {
        let p = dir.join("helloworld.proto");
        std::fs::write(&p, GREETER).unwrap();
        p
    }

    #[test]
    fn a_proto_compiles_and_names_its_methods() {
        let dir = tempdir();
        let pool = pool(Some(&greeter(&dir)), &[], None).unwrap();
        let m = method(&pool, "helloworld.Greeter/SayHello").unwrap();
        assert_eq!(m.input().full_name(), "helloworld.HelloRequest");
        assert!(method(&pool, "helloworld.Greeter.SayHellos")
            .unwrap()
            .is_server_streaming());
        let e = method(&pool, "helloworld.Greeter/Nope").unwrap_err();
        assert!(e.contains("methods: SayHello, SayHellos"), "{e}");
        let e = method(&pool, "hello.Greeter/SayHello").unwrap_err();
        assert!(e.contains("services: helloworld.Greeter"), "{e}");
        assert!(method(&pool, "SayHello")
            .unwrap_err()
            .contains("package.Service/Method"));
    }

    #[test]
    fn a_missing_or_broken_proto_says_so() {
        let dir = tempdir();
        let e = pool(Some(&dir.join("nope.proto")), &[], None).unwrap_err();
        assert!(e.contains("no such file"), "{e}");
        let bad = dir.join("bad.proto");
        std::fs::write(&bad, "syntax = \"proto3\";\nmessage A { Missing b = 1; }\n").unwrap();
        let e = pool(Some(&bad), &[], None).unwrap_err();
        assert!(e.contains("bad.proto") && e.contains("Missing"), "{e}");
        let e = pool(None, &[], None).unwrap_err();
        assert!(e.contains("--proto") && e.contains("--protoset"), "{e}");
        let junk = dir.join("junk.protoset");
        std::fs::write(&junk, b"\xff\xff\xff").unwrap();
        let e = pool(None, &[], Some(&junk)).unwrap_err();
        assert!(e.contains("not a FileDescriptorSet"), "{e}");
    }

    #[test]
    fn a_protoset_gives_the_same_types() {
        use prost::Message;
        let dir = tempdir();
        let compiled = protox::compile([greeter(&dir)], [&dir]).unwrap();
        let set = dir.join("g.protoset");
        std::fs::write(&set, compiled.encode_to_vec()).unwrap();
        let pool = pool(None, &[], Some(&set)).unwrap();
        assert!(method(&pool, "helloworld.Greeter/SayHello").is_ok());
    }
}
