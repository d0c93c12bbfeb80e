#!/usr/bin/env python3
"""gRPC: herd grpc beside ghz against grpc-go's greeter, and herd's own HTTP/2 request on
nginx, in the same rounds (issue 30's bars).

The Go greeter (tests/grpc-go, GOMAXPROCS=1) and nginx run on CPU 0, the generators on CPU 1.
Each round runs every tool once, the order rotating, at the same closed load: C calls in flight
on one connection (ghz -c C --connections 1; herd grpc takes ghz's flags; herd run --http2 -c 1
--streams C on nginx's h2c port).

    python3 bench/grpc.py                      # 5 rounds of 5 s, 50 calls in flight
    python3 bench/grpc.py --rounds 1 -n 200    # a tiny run proving the harness (no ratios to trust)
    python3 bench/grpc.py --herd target/debug/herd --rounds 1 -n 200   # no release build

Prints per tool: calls/s, p50, CPU per call, and whether the count it reports equals the Go
server's; then the ratios:
  herd grpc CPU per call / ghz's          (bar: <= 0.5)
  herd grpc CPU per call / herd's HTTP/2  (bar: <= 1.2)
  herd grpc p50 / ghz p50                 (bar: within 10%), like for like: in rounds of their
      own against the greeter started with `-delay` (--delay-ms, 20 ms: 50 in flight is 2,500
      calls/s, well within either client), where the server sets the latency. At full speed
      ghz saturates its own CPU at 50 in flight (~7,200 calls/s), and its p50 is its own queue.

Needs: the Go toolchain (builds ghz and the greeter into ~/.cache/herd/go-bin when missing, as
scripts/check does), nginx, taskset, GNU time; builds herd in release mode. Without `herd grpc`
in this build, the herd grpc side is left out and said so.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench as b  # noqa: E402  the shared harness: nginx, pinning, measured runs

GO_BIN = Path.home() / ".cache" / "herd" / "go-bin"
CALL = "helloworld.Greeter/SayHello"
DATA = '{"name":"herd"}'


def ensure_go_tools():
    env = {**os.environ, "GOBIN": str(GO_BIN), "GOFLAGS": "-buildvcs=false"}
    if not (GO_BIN / "ghz").exists():
        b.log("bench: building ghz v0.121.0")
        subprocess.run(["go", "install", "github.com/bojand/ghz/cmd/ghz@v0.121.0"], env=env, check=True)
    # Rebuilt when its sources change, by the same sum scripts/check keeps (an older build has
    # no -delay).
    src = b.ROOT / "tests" / "grpc-go"
    import hashlib
    digest = hashlib.sha256(b"".join((src / f).read_bytes() for f in ("go.mod", "go.sum", "main.go")))
    sum_file, want = GO_BIN / "herd-grpc-go.sum", digest.hexdigest()[:16]
    have = sum_file.read_text().strip() if sum_file.exists() else None
    if not (GO_BIN / "herd-grpc-go").exists() or have != want:
        b.log("bench: building tests/grpc-go")
        GO_BIN.mkdir(parents=True, exist_ok=True)
        fresh = GO_BIN / ".herd-grpc-go.new"
        subprocess.run(["go", "build", "-o", str(fresh), "."], cwd=src, env=env, check=True)
        fresh.replace(GO_BIN / "herd-grpc-go")
        sum_file.write_text(want + "\n")


class Greeter:
    """grpc-go's greeter on CPU 0, one P; counts calls (GET /count on its admin port)."""

    def __init__(self, delay_ms=0):
        delay = ["-delay", f"{delay_ms}ms"] if delay_ms else []
        self.proc = subprocess.Popen(["taskset", "-c", b.SERVER_CPU, str(GO_BIN / "herd-grpc-go"), *delay],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                     env={**os.environ, "GOMAXPROCS": "1"})
        self.port = int(self.proc.stdout.readline().split()[1])
        self.admin = int(self.proc.stdout.readline().split()[1])
        self.addr = f"127.0.0.1:{self.port}"

    def calls(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/count", timeout=10) as r:
            return json.load(r)["methods"].get("/" + CALL, 0)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def herd_has_grpc():
    r = subprocess.run([str(b.HERD), "grpc", "--help"], capture_output=True)
    return r.returncode == 0


def argv(tool, load, conc, greeter, nginx, json_path):
    """load: ("n", calls) or ("z", seconds)."""
    kind, amount = load
    if tool in ("ghz", "herd grpc"):
        size = ["-n", str(amount)] if kind == "n" else ["-z", f"{amount}s"]
        common = ["--insecure", "--call", CALL, "-d", DATA, "-c", str(conc), "--connections", "1", *size]
        if tool == "ghz":
            return [str(GO_BIN / "ghz"), *common, "-O", "json", greeter.addr]
        return [str(b.HERD), "grpc", *common, "--threads", "1", "--json", json_path, greeter.addr]
    size = ["-n", str(amount)] if kind == "n" else ["-d", f"{amount}s"]
    return [str(b.HERD), "run", "--http2", "-t", "1", "-c", "1", "--streams", str(conc), *size, "-q",
            "-H", "User-Agent:", "-H", "Accept:", "--json", json_path, nginx.h2_url]


def figures(tool, out, json_path):
    """(calls, p50 ms) a tool reports."""
    if tool == "ghz":
        r = json.loads(out[out.index("{"):])
        p50 = next(d["latency"] for d in r["latencyDistribution"] if d["percentage"] == 50) / 1e6
        return r["count"], p50
    r = json.loads(Path(json_path).read_text())
    return r["totals"]["completed"], r["latency_ms"]["p50"]


def measure(tools, greeter, nginx, args, load):
    """Every tool once a round, the order rotating: CPU per call, calls/s and p50 of each round."""
    cpu, rate, p50 = ({t: [] for t in tools} for _ in range(3))
    for r in range(args.rounds):
        for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                before = greeter.calls()
                started = time.monotonic()
                out, secs, _ = b.run_measured(argv(tool, load, args.c, greeter, nginx, j.name), timeout=600)
                wall = time.monotonic() - started
                n, p = figures(tool, out, j.name)
            served = greeter.calls() - before
            if tool != "herd h2" and n != served:
                b.log(f"bench: warning: {tool} reports {n} calls, the greeter answered {served}")
            cpu[tool].append(secs / max(n, 1) * 1e6)
            rate[tool].append(n / (args.seconds if load[0] == "z" else wall))
            p50[tool].append(p)
            b.log(f"  round {r + 1} {tool:9s} {n:8d} calls {rate[tool][-1]:9.0f}/s p50 {p:7.3f} ms"
                  f" {cpu[tool][-1]:7.2f} us CPU/call" + ("" if tool == "herd h2" else f" (server: {served})"))
    return cpu, rate, p50


def table(tools, cpu, rate, p50):
    for t in tools:
        print(f"  {t:9s} {MED(rate, t):9.0f} {MED(p50, t):8.3f} {MED(cpu, t):8.2f}")


MED = lambda d, t: statistics.median(d[t])  # noqa: E731
PAIRED = lambda d, t, base: statistics.median(a / b_ for a, b_ in zip(d[t], d[base]))  # noqa: E731


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("-n", type=int, help="calls per run instead of --seconds (a quick proof)")
    ap.add_argument("-c", type=int, default=50, help="calls in flight (default 50)")
    ap.add_argument("--delay-ms", type=int, default=20,
                    help="the greeter's time per call in the p50 rounds (default 20; 0 leaves them out)")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--herd", help="this herd binary instead of building target/release/herd")
    args = ap.parse_args()
    b.ensure_tools()
    ensure_go_tools()
    if args.herd:
        b.HERD = Path(args.herd).resolve()
    else:
        b.build_herd()
    tools = ["ghz", "herd h2"]
    grpc = herd_has_grpc()
    if grpc:
        tools.insert(1, "herd grpc")
    else:
        b.log("bench: this herd has no `herd grpc`: only ghz and herd's HTTP/2 are measured")
    load = ("n", args.n) if args.n else ("z", args.seconds)
    greeter, nginx = Greeter(), b.Nginx()
    try:
        cpu, rate, p50 = measure(tools, greeter, nginx, args, load)
        greeter.stop()
        greeter = None
        if grpc and args.delay_ms:
            b.log(f"bench: the greeter at {args.delay_ms} ms a call, for the p50 like for like")
            greeter = Greeter(args.delay_ms)
            slow = measure(["ghz", "herd grpc"], greeter, nginx, args, load)
    finally:
        if greeter:
            greeter.stop()
        nginx.stop()
    what = f"{args.n} calls" if args.n else f"{args.seconds}s"
    print(f"\ngRPC unary ({CALL}) on grpc-go's greeter, {args.c} in flight on 1 connection, {what} x {args.rounds}")
    print(f"  {'tool':9s} {'calls/s':>9s} {'p50 ms':>8s} {'us/call':>8s}")
    table(tools, cpu, rate, p50)
    out = {"cpu_us_per_call": {t: MED(cpu, t) for t in tools}, "p50_ms": {t: MED(p50, t) for t in tools}}
    if grpc:
        vs_ghz = PAIRED(cpu, "herd grpc", "ghz")
        vs_h2 = PAIRED(cpu, "herd grpc", "herd h2")
        print(f"  herd grpc CPU / ghz CPU = {vs_ghz:.2f}  (bar: <= 0.50) -> {'PASS' if vs_ghz <= 0.5 else 'FAIL'}")
        print(f"  herd grpc CPU / herd HTTP/2 CPU = {vs_h2:.2f}  (bar: <= 1.20) -> {'PASS' if vs_h2 <= 1.2 else 'FAIL'}")
        print(f"  herd grpc p50 / ghz p50 = {PAIRED(p50, 'herd grpc', 'ghz'):.2f} at full speed (not like for like: "
              "ghz's own CPU is the bottleneck there)")
        out.update({"cpu_vs_ghz": vs_ghz, "cpu_vs_herd_h2": vs_h2})
        if args.delay_ms:
            s_cpu, s_rate, s_p50 = slow
            print(f"\nThe same, the greeter taking {args.delay_ms} ms a call (the server sets the latency)")
            table(["ghz", "herd grpc"], s_cpu, s_rate, s_p50)
            lat = PAIRED(s_p50, "herd grpc", "ghz")
            print(f"  herd grpc p50 / ghz p50 = {lat:.2f}  (bar: 0.90..1.10) -> {'PASS' if 0.9 <= lat <= 1.1 else 'FAIL'}")
            out.update({"p50_vs_ghz": lat, "delay_ms": args.delay_ms,
                        "p50_ms_delayed": {t: MED(s_p50, t) for t in ["ghz", "herd grpc"]}})
    else:
        print("  herd grpc: not in this build (no ratios)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
