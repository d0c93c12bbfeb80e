//! `herd grpc`: ghz's flags -> a `RunSpec` whose URL's request is the call (herd-args'
//! `grpc::spec`, from `herd run`'s groups; herd-run checks it with herd-grpc and plays it on the
//! engine over HTTP/2); the rest is `herd run`'s path.

use crate::exit::Exit;
use herd_args::grpc::GrpcArgs;

pub fn cmd(a: &GrpcArgs) -> Result<i32, Exit> {
    if let Some(refused) = a.refused() {
        return Err(Exit::bad_input(refused));
    }
    let binary = if a.binary {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| Exit::bad_input(format!("-b: cannot read stdin: {e}")))?;
        Some(bytes)
    } else {
        None
    };
    let mut spec = herd_args::grpc::spec(a, binary);
    spec.shard = crate::outputs::shard(&a.reach.shard)?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    crate::run::play(&prepared, &a.outputs)
}
