"""A WebSocket echo app on Hypercorn (PyPI), which offers WebSockets over HTTP/2 (RFC 8441:
SETTINGS_ENABLE_CONNECT_PROTOCOL, extended CONNECT) as well as over HTTP/1.1's Upgrade, for
herd's WebSocket-over-HTTP/2 tests. Each message is echoed back and counted; GET /count answers
the count, /sockets how many WebSockets it accepted and /h2 how many of them came over HTTP/2.
Listens on a free loopback port and prints it first: plain TCP (HTTP/2 by prior knowledge), or
TLS with the certificate and key files CERT and KEY name (HTTP/2 by ALPN; its counts then
also in plain HTTP on port COUNTS_PORT)."""

import asyncio
import os
import socket

from hypercorn.asyncio import serve
from hypercorn.config import Config

counts = {"count": 0, "sockets": 0, "h2": 0}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        counts["sockets"] += 1
        if scope.get("http_version") == "2":
            counts["h2"] += 1
        while True:
            event = await receive()
            if event["type"] != "websocket.receive":
                return
            counts["count"] += 1
            if event.get("text") is not None:
                await send({"type": "websocket.send", "text": event["text"]})
            else:
                await send({"type": "websocket.send", "bytes": event["bytes"]})
    if scope["type"] == "http":
        while (await receive()).get("more_body"):
            pass
        body = f"{counts.get(scope['path'].strip('/'), 0)}\n".encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


async def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.accesslog = None
    config.errorlog = None
    config.backlog = 1024
    if os.environ.get("CERT"):
        config.certfile = os.environ["CERT"]
        config.keyfile = os.environ["KEY"]
        config.insecure_bind = [f"127.0.0.1:{os.environ['COUNTS_PORT']}"]
    print(f"listening {port}", flush=True)
    await serve(app, config)


asyncio.run(main())
