"""A WebSocket echo server on Python's websockets (PyPI), for herd's WebSocket tests: each
message is echoed back and counted; GET /count answers the count. After STALL_AFTER messages
(if set) the whole server stalls STALL_MS once, its event loop blocked, as a stopped server
would. Its own counts of what herd's figures must match: on /close/CODE each socket is closed
with CODE when its fourth message comes (unanswered), on /abort its connection is dropped
without a close frame then; /forbidden refuses the Upgrade with 403. GET /closes and
/refused answer how many sockets it closed and Upgrades it refused, /sockets how many it
opened, /clean how many the client closed with a close frame of code 1000. Listens on a free
loopback port and prints it first."""

import asyncio
import os
import time
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

STALL_AFTER = int(os.environ.get("STALL_AFTER", "0"))
STALL = float(os.environ.get("STALL_MS", "1000")) / 1000
count = 0
closes = 0
refused = 0
sockets = 0
clean = 0


async def echo(ws):
    global count, closes, sockets, clean
    sockets += 1
    path = ws.request.path
    mine = 0
    try:
        async for message in ws:
            count += 1
            mine += 1
            if count == STALL_AFTER:
                time.sleep(STALL)
            if mine == 4 and path.startswith("/close/"):
                closes += 1
                await ws.close(code=int(path.split("/")[2]), reason="test")
                return
            if mine == 4 and path == "/abort":
                closes += 1
                ws.transport.abort()
                return
            await ws.send(message)
        if ws.close_code == 1000:
            clean += 1
    except ConnectionClosed:
        pass  # herd ends a run by closing its sockets


def counting(connection, request):
    global refused
    for path, value in (("/count", count), ("/closes", closes), ("/refused", refused),
                        ("/sockets", sockets), ("/clean", clean)):
        if request.path == path:
            return connection.respond(HTTPStatus.OK, f"{value}\n")
    if request.path == "/forbidden":
        refused += 1
        return connection.respond(HTTPStatus.FORBIDDEN, "no\n")
    return None


async def main():
    async with serve(echo, "127.0.0.1", 0, process_request=counting, ping_interval=None,
                     max_queue=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening {port}", flush=True)
        await asyncio.get_running_loop().create_future()


try:
    # uvloop (PyPI, installed by scripts/check) runs the same server about 1.5-2x faster: the
    # full-size bar's 10,000 messages a second want it; without it, asyncio's own loop.
    import uvloop
except ImportError:
    asyncio.run(main())
else:
    uvloop.run(main())
