"""A real gRPC server in Python (grpcio, PyPI) for herd's tests: helloworld.Greeter/SayHello
with server reflection (grpcio-reflection), counting the calls it answers.

    python3 tests/grpc-py/server.py [--delay-ms MS]

Prints "listening PORT" first; on SIGTERM or SIGINT, the counts as JSON
({"calls": N, "methods": {"/helloworld.Greeter/SayHello": N}}) before it exits. The .proto is
herd serve's own copy of gRPC's example (crates/mock/proto/helloworld.proto), compiled at start
with grpcio-tools: no generated code is kept.
"""
import argparse
import importlib
import json
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
from grpc_reflection.v1alpha import reflection
from grpc_tools import protoc

PROTO = Path(__file__).resolve().parents[2] / "crates" / "mock" / "proto"


def compile_proto(out):
    include = str(Path(protoc.__file__).parent / "_proto")
    rc = protoc.main(["protoc", f"-I{PROTO}", f"-I{include}", f"--python_out={out}",
                      f"--grpc_python_out={out}", str(PROTO / "helloworld.proto")])
    if rc != 0:
        sys.exit(f"grpc-py: protoc failed ({rc})")
    sys.path.insert(0, out)
    return importlib.import_module("helloworld_pb2"), importlib.import_module("helloworld_pb2_grpc")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=0, help="before each answer")
    args = ap.parse_args()
    pb, pb_grpc = compile_proto(tempfile.mkdtemp(prefix="herd-grpc-py-"))
    lock, counts = threading.Lock(), {}

    class Greeter(pb_grpc.GreeterServicer):
        def SayHello(self, request, context):
            with lock:
                counts["/helloworld.Greeter/SayHello"] = counts.get("/helloworld.Greeter/SayHello", 0) + 1
            if args.delay_ms:
                time.sleep(args.delay_ms / 1000)
            return pb.HelloReply(message="Hello " + request.name)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    pb_grpc.add_GreeterServicer_to_server(Greeter(), server)
    names = (pb.DESCRIPTOR.services_by_name["Greeter"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"listening {port}", flush=True)
    done.wait()
    server.stop(grace=1).wait()
    with lock:
        print(json.dumps({"calls": sum(counts.values()), "methods": counts}), flush=True)


if __name__ == "__main__":
    main()
