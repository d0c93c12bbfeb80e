"""A real gRPC client for the tests: Python's grpcio, messages learnt by server reflection
(grpcio-reflection), no .proto and no generated code.

    python3 client.py HOST:PORT CHECK...

prints one JSON object with a result per CHECK:
    list               the services reflection names
    hello              helloworld.Greeter/SayHello {"name":"herd"}: the reply's message, or the status
    echo               herd.echo.Echo/Unary {"message":"hi"}
    stream:N:MS        herd.echo.Echo/ServerStream, N messages MS apart: indexes, and when each
                       came (ms from the call's start)
    client             herd.echo.Echo/ClientStream with "a", "b", "c"
    bidi               herd.echo.Echo/Bidi with "a", "b", "c", each sent after its answer came
    codes:N            N calls of herd.echo.Echo/Unary, one at a time: their status names
"""
import json
import sys
import time

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

TIMEOUT = 10


def main():
    channel = grpc.insecure_channel(sys.argv[1])
    database = ProtoReflectionDescriptorDatabase(channel)
    pool = DescriptorPool(database)

    def message(name):
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    def method(kind, path, request, response):
        make = getattr(channel, kind)
        return make(
            path,
            request_serializer=message(request).SerializeToString,
            response_deserializer=message(response).FromString,
        )

    def status(call):
        try:
            return call()
        except grpc.RpcError as e:
            return {"code": e.code().name, "details": e.details()}

    def echo_method(kind, name):
        return method(kind, "/herd.echo.Echo/" + name, "herd.echo.EchoRequest", "herd.echo.EchoResponse")

    out = {}
    for check in sys.argv[2:]:
        name, _, arg = check.partition(":")
        if name == "list":
            out[check] = sorted(database.get_services())
        elif name == "hello":
            hello = method("unary_unary", "/helloworld.Greeter/SayHello", "helloworld.HelloRequest", "helloworld.HelloReply")
            Req = message("helloworld.HelloRequest")
            out[check] = status(lambda: hello(Req(name="herd"), timeout=TIMEOUT).message)
        elif name == "echo":
            Req = message("herd.echo.EchoRequest")
            out[check] = status(lambda: echo_method("unary_unary", "Unary")(Req(message="hi"), timeout=TIMEOUT).message)
        elif name == "stream":
            count, ms = (int(x) for x in arg.split(":"))
            Req = message("herd.echo.EchoRequest")
            request = Req(message="s", count=count)
            request.interval.nanos = ms * 1_000_000
            start = time.monotonic()
            indexes, times = [], []
            for reply in echo_method("unary_stream", "ServerStream")(request, timeout=TIMEOUT):
                times.append((time.monotonic() - start) * 1000)
                indexes.append(reply.index)
            out[check] = {"indexes": indexes, "ms": times}
        elif name == "client":
            Req = message("herd.echo.EchoRequest")
            reply = echo_method("stream_unary", "ClientStream")(iter([Req(message=m) for m in "abc"]), timeout=TIMEOUT)
            out[check] = {"message": reply.message, "index": reply.index}
        elif name == "bidi":
            out[check] = bidi(echo_method("stream_stream", "Bidi"), message("herd.echo.EchoRequest"))
        elif name == "codes":
            Req = message("herd.echo.EchoRequest")
            unary = echo_method("unary_unary", "Unary")
            codes = []
            for _ in range(int(arg)):
                try:
                    unary(Req(message="x"), timeout=TIMEOUT)
                    codes.append("OK")
                except grpc.RpcError as e:
                    codes.append(e.code().name)
            out[check] = codes
        else:
            sys.exit(f"unknown check {check!r}")
    print(json.dumps(out))


def bidi(call, Req):
    """Sends the next message only once the answer to the last came: proves the server answers
    each message while the client's side is still open."""
    import queue

    to_send = queue.Queue()
    to_send.put(Req(message="a"))

    def requests():
        while True:
            item = to_send.get(timeout=TIMEOUT)
            if item is None:
                return
            yield item

    answers = []
    for reply in call(requests(), timeout=TIMEOUT):
        answers.append([reply.message, reply.index])
        following = {"a": "b", "b": "c"}.get(reply.message)
        to_send.put(Req(message=following) if following else None)
    return answers


if __name__ == "__main__":
    main()
