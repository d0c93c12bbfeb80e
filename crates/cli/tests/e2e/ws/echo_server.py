"""A WebSocket echo server on Python's websockets (PyPI), for herd's WebSocket tests: each
message is echoed back and counted; GET /count answers the count. After STALL_AFTER messages
(if set) the whole server stalls STALL_MS once, its event loop blocked, as a stopped server
would. Listens on a free loopback port and prints it first."""

import asyncio
import os
import time
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

STALL_AFTER = int(os.environ.get("STALL_AFTER", "0"))
STALL = float(os.environ.get("STALL_MS", "1000")) / 1000
count = 0


async def echo(ws):
    global count
    try:
        async for message in ws:
            count += 1
            if count == STALL_AFTER:
                time.sleep(STALL)
            await ws.send(message)
    except ConnectionClosed:
        pass  # herd ends a run by closing its sockets


def counting(connection, request):
    if request.path == "/count":
        return connection.respond(HTTPStatus.OK, f"{count}\n")
    return None


async def main():
    async with serve(echo, "127.0.0.1", 0, process_request=counting, ping_interval=None,
                     max_queue=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening {port}", flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
