#!/usr/bin/env python3
"""herd merge at scale: 64 shard files of a 10-minute run each, merged in one go.

The shard files are made from a real short run: herd loads its mock server for a few seconds
(open model, several thousand requests per second, so every second carries a realistic
per-second histogram), then each of the 64 files repeats that run's seconds to 10 minutes
(600 timeline entries, each with its own per-second histogram and the generator's sample),
with its own shard header (same plan, index i/64, its host) -- what 64 pods would print.

Then `herd merge` is timed with /usr/bin/time -v: wall time and peak RSS, against the bar
(< 2 s, < 200 MB). The merged result is checked too: counts add up to 64 x one shard.

    python3 bench/merge.py                  # builds herd (release) if needed
    python3 bench/merge.py --shards 64 --seconds 600 --rounds 3
"""

import argparse
import copy
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERD = os.path.join(ROOT, "target", "release", "herd")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_run(tmp, rate, seconds):
    """One short real run against herd's mock server; its JSON result."""
    port = free_port()
    serve = subprocess.Popen(
        [HERD, "serve", "--listen", f"127.0.0.1:{port}", "--threads", "1",
         "--route", "/ latency=lognormal:2ms:0.5 size=512"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        out = os.path.join(tmp, "real.json")
        subprocess.run(
            [HERD, "run", f"http://127.0.0.1:{port}/", "--rate", str(rate), "-d", f"{seconds}s",
             "-t", "1", "-q", "--shard", "0/64", "--start-at", "+1s", "--json", out],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        with open(out) as f:
            return json.load(f)
    finally:
        serve.terminate()
        serve.wait()


def shard_files(real, tmp, shards, seconds):
    """`shards` files of `seconds` each, cycling the real run's full seconds."""
    full = [e for e in real["timeline"] if e["requests"] > 0][:-1] or real["timeline"]
    gen = real["generator"].get("timeline") or []
    paths = []
    for i in range(shards):
        r = copy.deepcopy(real)
        r["timeline"] = []
        for t in range(seconds):
            e = dict(full[t % len(full)])
            e["t"] = t
            r["timeline"].append(e)
        if gen:
            r["generator"]["timeline"] = [dict(gen[t % len(gen)], t=t) for t in range(seconds)]
        scale = seconds / max(real["duration_s"], 1e-9)
        r["duration_s"] = float(seconds)
        for k in ("scheduled", "sent", "completed", "ok", "failed", "errors", "dropped",
                  "bytes_sent", "bytes_received"):
            r["totals"][k] = int(r["totals"][k] * scale)
        r["shard"]["instances"][0]["index"] = i
        r["shard"]["instances"][0]["host"] = f"herd-bench-{i}"
        path = os.path.join(tmp, f"shard-{i:02}.json")
        with open(path, "w") as f:
            json.dump(r, f, indent=2)
        paths.append(path)
    return paths


def timed_merge(paths, out):
    p = subprocess.run(["/usr/bin/time", "-v", HERD, "merge", *paths, "-o", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h, m, s = wall.groups()
    secs = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return p.returncode, secs, rss_kb / 1024, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--rate", type=int, default=3000)
    ap.add_argument("--run-seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(HERD):
        subprocess.run(["cargo", "build", "--release", "-p", "herd-cli"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(prefix="herd-merge-bench-") as tmp:
        real = real_run(tmp, a.rate, a.run_seconds)
        paths = shard_files(real, tmp, a.shards, a.seconds)
        size = sum(os.path.getsize(p) for p in paths) / 1e6
        print(f"{a.shards} shard files of {a.seconds} s each, {size:.1f} MB in all "
              f"(from a real {a.run_seconds} s run at {a.rate} req/s)")
        out = os.path.join(tmp, "total.json")
        results = []
        for r in range(a.rounds):
            code, secs, rss, err = timed_merge(paths, out)
            if code not in (0, 3, 4):
                sys.exit(f"herd merge exited {code}:\n{err}")
            results.append((secs, rss))
            print(f"round {r + 1}: {secs:.2f} s wall, {rss:.1f} MB peak RSS (exit {code})")
        with open(out) as f:
            merged = json.load(f)
        one = json.load(open(paths[0]))
        assert merged["totals"]["completed"] == a.shards * one["totals"]["completed"]
        assert len(merged["timeline"]) == a.seconds
        assert not merged["shard"].get("missing"), merged["shard"].get("missing")
        worst_s = max(s for s, _ in results)
        worst_mb = max(m for _, m in results)
        ok = worst_s < 2.0 and worst_mb < 200.0
        print(f"worst: {worst_s:.2f} s, {worst_mb:.1f} MB  (bar < 2 s, < 200 MB): "
              f"{'PASS' if ok else 'FAIL'}")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
