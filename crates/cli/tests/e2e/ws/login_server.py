"""A chat behind a login, on Python's websockets (PyPI), for herd's workloads that mix HTTP
requests and WebSocket messages: GET /login?user=NAME answers {"token": "t-NAME"}; the
Upgrade on /chat must carry `Authorization: Bearer TOKEN` of a token handed out to anyone but
eve (whose token it does not take), else it is refused with 401; each message on the socket is echoed back and counted. GET /done is the
scenario's last request. Its own counts, for herd's figures to match: GET /counts answers
them as JSON (logins, upgrades with a good token, refused Upgrades, messages, clean closes
with code 1000, requests to /done, Upgrades that carried `X-Client: herd`, the
Authorization headers seen). Listens on a free
loopback port and prints it first."""

import asyncio
import json
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

counts = {"logins": 0, "upgrades": 0, "refused": 0, "messages": 0, "clean": 0, "done": 0,
          "x_client": 0}
tokens = set()
seen = []


async def chat(ws):
    try:
        async for message in ws:
            counts["messages"] += 1
            await ws.send(message)
        if ws.close_code == 1000:
            counts["clean"] += 1
    except ConnectionClosed:
        pass


def route(connection, request):
    path = request.path
    if path.startswith("/login?user="):
        counts["logins"] += 1
        token = "t-" + path.split("=", 1)[1]
        if token != "t-eve":
            tokens.add(token)
        return connection.respond(HTTPStatus.OK, json.dumps({"token": token}) + "\n")
    if path == "/done":
        counts["done"] += 1
        return connection.respond(HTTPStatus.OK, "bye\n")
    if path == "/counts":
        return connection.respond(HTTPStatus.OK, json.dumps(dict(counts, seen=seen)) + "\n")
    if path == "/chat":
        auth = request.headers.get("Authorization", "")
        if request.headers.get("X-Client") == "herd":
            counts["x_client"] += 1
        if len(seen) < 20:
            seen.append(auth)
        if auth.removeprefix("Bearer ") not in tokens:
            counts["refused"] += 1
            return connection.respond(HTTPStatus.UNAUTHORIZED, "who are you?\n")
        counts["upgrades"] += 1
        return None
    return connection.respond(HTTPStatus.NOT_FOUND, "no\n")


async def main():
    async with serve(chat, "127.0.0.1", 0, process_request=route, ping_interval=None,
                     max_queue=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening {port}", flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
