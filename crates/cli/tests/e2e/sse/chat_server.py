"""An OpenAI-compatible streaming chat completion on sse-starlette and uvicorn, for herd's
Server-Sent Events tests: the first token after FIRST_MS, each next after GAP_MS, TOKENS of
them, then the usage and [DONE]; with STALL_AFTER, it goes quiet for an hour after that many
tokens, its connection open (a model server stuck mid-answer). Listens on a free loopback port and
prints it first."""

import asyncio
import json
import os
import socket
import sys

import uvicorn
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.routing import Route

FIRST = float(os.environ.get("FIRST_MS", "200")) / 1000
GAP = float(os.environ.get("GAP_MS", "20")) / 1000
TOKENS = int(os.environ.get("TOKENS", "10"))
STALL_AFTER = int(os.environ.get("STALL_AFTER", "-1"))


def chunk(delta, usage=None):
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    if usage:
        body["usage"] = usage
    return json.dumps(body)


async def completions(request):
    await request.body()

    async def tokens():
        loop = asyncio.get_running_loop()
        start = loop.time()
        # On a schedule from the start, so a late wake-up does not push every later token.
        for i in range(TOKENS):
            if i == STALL_AFTER:
                await asyncio.sleep(3600)
            due = start + FIRST + i * GAP
            await asyncio.sleep(max(0.0, due - loop.time()))
            yield {"data": chunk({"content": f"tok{i} "})}
        yield {"data": chunk(None, {"prompt_tokens": 3, "completion_tokens": TOKENS})}
        yield {"data": "[DONE]"}

    return EventSourceResponse(tokens(), ping=600)


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
# Listening before the port is told: a client may connect at once (uvicorn accepts later).
sock.listen(128)
print(f"listening {sock.getsockname()[1]}", flush=True)
config = uvicorn.Config(app, log_level="warning", lifespan="off")
uvicorn.Server(config).run(sockets=[sock])
sys.exit(0)
