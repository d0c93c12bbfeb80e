"""Server-Sent Events' cost bar of issue 29, run by bench.py (`bench.py ssecpu`) against a fast Go
event server (bench/sse_events: Go's standard library only, built here) pinned beside bench.py's
nginx:

- ssecpu: herd's CPU per event of a text/event-stream response whose server writes four 64-byte
  events at a time (1,000 events a response, 50 connections, closed, 1 thread) <= 0.3 x herd's
  CPU per plain HTTP/1.1 request against nginx, same run, alternating. The same bytes sent as
  text/plain (read as a plain body, no events) are a third row: what the event parsing adds.
"""

from bench_ws import GoServer

EVENTS = 1000


class Events(GoServer):
    """The Go event server (standard library only)."""

    def __init__(self, b):
        super().__init__(b, "sse_events", "the Go event server")
        self.url = f"http://127.0.0.1:{self.port}/?n={EVENTS}"


def cpu(b, nginx, rounds, seconds):
    server = Events(b)
    try:
        def one(tool, j):
            url = {"herd-http": nginx.url, "herd-sse": server.url, "herd-plain": server.url + "&plain=1"}[tool]
            return b.argv_for("herd", url, 50, seconds, j), {"herd-http": "herd", "herd-sse": "herd-events",
                                                              "herd-plain": "herd-plain-events"}[tool]
        med, paired = b.paired_cpu(["herd-http", "herd-sse", "herd-plain"], one, rounds,
                                   "herd's CPU per HTTP/1.1 request (nginx) and per 64-byte event (Go, four "
                                   "a write, 1,000 a response), 50 connections, 1 thread")
    finally:
        server.stop()
    ratio = paired["herd-sse"]
    print(f"  event / request = {ratio:.2f}  (bar: <= 0.30) -> {'PASS' if ratio <= 0.30 else 'FAIL'}; "
          f"the same bytes as a plain body {paired['herd-plain']:.2f}")
    return {"cpu_us": med, "event_vs_request": ratio, "plain_body_vs_request": paired["herd-plain"]}
