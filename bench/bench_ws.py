"""WebSocket bars of issue 29, run by bench.py (`bench.py wscpu wsrss`) against a fast Go echo
server (bench/ws_echo: gorilla/websocket v1.5.3, built here with the Go toolchain from the Go
module proxy) pinned beside bench.py's nginx:

- wscpu: CPU per echoed message (64-byte text, 50 sockets, closed: send, await, send again, 1
  thread) <= 0.8 x herd's CPU per plain HTTP/1.1 request against nginx, same run, alternating.
- wsrss: peak RSS holding 10,000 open WebSockets (closed model, each echoing) <= 2 x the peak
  holding 10,000 keep-alive HTTP/1.1 connections to nginx.

The echo bar (1,000 sockets x 10 messages a second for 20 s against Python's websockets behind
nginx, every message counted by the server, a 1 s SIGSTOP in the p99) is an end-to-end test,
crates/cli/tests/e2e/ws/bar.rs: 200 sockets for 6 s in CI, the full size with
`HERD_WS_BAR=full cargo test -p herd-cli --test e2e ws::bar -- --nocapture` (bench/RESULTS.md).
"""

import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MESSAGE = "x" * 64


class GoServer:
    """A Go server of bench/ (`module`: a folder with its go.mod) built here and started on the
    server CPU, one OS thread for Go code (GOMAXPROCS=1); it prints "listening PORT" first."""

    def __init__(self, b, module, what):
        binary = Path(tempfile.mkdtemp(prefix=f"herd-bench-{module}-")) / module
        b.log(f"bench: building {what} (bench/{module})")
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=HERE / module, check=True)
        self.proc = subprocess.Popen(["taskset", "-c", b.SERVER_CPU, str(binary)], stdout=subprocess.PIPE,
                                     text=True, env={"GOMAXPROCS": "1", "PATH": "/usr/bin:/bin"})
        first = self.proc.stdout.readline()
        if not first.startswith("listening "):
            raise RuntimeError(f"{what} did not start: {first!r}")
        self.port = int(first.split()[1])

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Echo(GoServer):
    """The Go echo server (gorilla/websocket)."""

    def __init__(self, b):
        super().__init__(b, "ws_echo", "the Go WebSocket echo server")
        self.url = f"ws://127.0.0.1:{self.port}/"


def ws_argv(b, url, conns, seconds, json_path):
    return [str(b.HERD), "run", "-t", "1", "-c", str(conns), "-d", f"{seconds}s", "-q", "--timeout", "30s",
            "--send", MESSAGE, "--json", json_path, url]


def cpu(b, nginx, rounds, seconds):
    echo = Echo(b)
    try:
        def one(tool, j):
            if tool == "herd-ws":
                return ws_argv(b, echo.url, 50, seconds, j), "herd"
            return b.argv_for("herd", nginx.url, 50, seconds, j), "herd"
        med, paired = b.paired_cpu(["herd-http", "herd-ws"], one, rounds,
                                   "herd's CPU per HTTP/1.1 request (nginx) and per echoed 64-byte "
                                   "WebSocket message (Go), 50 connections, 1 thread")
    finally:
        echo.stop()
    ratio = paired["herd-ws"]
    print(f"  message / request = {ratio:.2f}  (bar: <= 0.80) -> {'PASS' if ratio <= 0.80 else 'FAIL'}")
    return {"cpu_us": med, "message_vs_request": ratio}


def rss(b, nginx, rounds, seconds):
    conns = 10_000
    b.raise_nofile(conns + 1000)
    echo = Echo(b)
    peaks = {"herd-http": [], "herd-ws": []}
    try:
        for r in range(rounds):
            for tool in list(peaks)[r % 2:] + list(peaks)[:r % 2]:
                with tempfile.NamedTemporaryFile(suffix=".json") as j:
                    argv = (ws_argv(b, echo.url, conns, seconds, j.name) if tool == "herd-ws"
                            else b.argv_for("herd", nginx.url, conns, seconds, j.name))
                    out, _, peak = b.run_measured(argv, timeout=seconds + 120)
                    n, errors = b.requests_of("herd", out, j.name)
                peaks[tool].append(peak)
                b.log(f"  round {r + 1} {tool:9s} peak RSS {peak / 1e6:6.1f} MB  ({n} exchanges, {errors} errors)")
    finally:
        echo.stop()
    med = {t: sorted(v)[len(v) // 2] for t, v in peaks.items()}
    ratio = med["herd-ws"] / med["herd-http"]
    print(f"\nPeak RSS holding {conns:,} connections, 1 thread (median of {rounds})")
    for t, v in med.items():
        print(f"  {t:9s} {v / 1e6:8.1f} MB")
    print(f"  WebSockets / keep-alive = {ratio:.2f}  (bar: <= 2.00) -> {'PASS' if ratio <= 2.0 else 'FAIL'}")
    return {"peak_rss_mb": {t: v / 1e6 for t, v in med.items()}, "ws_vs_http": ratio}
