"""A real gRPC server (grpcio, PyPI) for herd grpc's tests: helloworld.Greeter/SayHello on a
free loopback port, printing `listening PORT` once it listens.

The request's name steers the answer: `code:N` (N > 0) ends the call with status N (its grpc-message
"asked for N"), `garbage` answers bytes that are no HelloReply; anything else is greeted. Every
call is counted by the server itself into COUNT_FILE (JSON: calls, and calls by status code)
before it is answered, so a test compares herd's count with the server's.
"""

import json
import os
import sys
import threading
from concurrent import futures

import grpc

COUNT_FILE = os.environ["COUNT_FILE"]
lock = threading.Lock()
counts = {"calls": 0, "by_code": {}}
CODES = {c.value[0]: c for c in grpc.StatusCode}


def name_of(request: bytes) -> str:
    # HelloRequest: field 1 (name), length-delimited; a short name's length is one byte.
    if len(request) >= 2 and request[0] == 0x0A:
        return request[2 : 2 + request[1]].decode()
    return ""


def count(code: int) -> None:
    with lock:
        counts["calls"] += 1
        key = str(code)
        counts["by_code"][key] = counts["by_code"].get(key, 0) + 1
        with open(COUNT_FILE + ".tmp", "w") as f:
            json.dump(counts, f)
        os.replace(COUNT_FILE + ".tmp", COUNT_FILE)


def say_hello(request: bytes, context) -> bytes:
    name = name_of(request)
    code = int(name[5:]) if name.startswith("code:") else 0
    if code != 0:
        count(code)
        context.abort(CODES[code], f"asked for {code}")
    count(0)
    if name == "garbage":
        return b"\xff\xff\xff"
    message = ("Hello " + name).encode()
    return bytes([0x0A, len(message)]) + message


def main() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    handler = grpc.method_handlers_generic_handler(
        "helloworld.Greeter",
        {"SayHello": grpc.unary_unary_rpc_method_handler(say_hello)},
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening {port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(main())
