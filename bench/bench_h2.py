"""HTTP/2 bars of issue 17, run by bench.py (`bench.py h2cpu h2rate h2rss`) against its nginx's
h2c port (`listen ... http2`, streams up to 20,000 per connection):

- h2cpu: CPU per request, 10 connections x 10 streams, 1 thread: herd <= 0.9 x h2load's.
- h2rate: --rate 20000 over HTTP/2 delivered within 1%, latency from the intended time.
- h2rss: peak RSS with 10,000 streams open (10 connections x 1,000): herd <= h2load.
"""

import json
import statistics
import tempfile
from pathlib import Path


def argv(tool, herd, url, conns, streams, seconds, json_path):
    if tool == "herd":
        return [str(herd), "run", "--http2", "-t", "1", "-c", str(conns), "--streams", str(streams),
                "-d", f"{seconds}s", "-q", "--timeout", "30s", "-H", "User-Agent:", "-H", "Accept:",
                "--json", json_path, url]
    return ["h2load", "-t", "1", "-c", str(conns), "-m", str(streams), "-D", str(seconds), url]


def cpu(b, nginx, rounds, seconds):
    def one(tool, j):
        return argv(tool, b.HERD, nginx.h2_url, 10, 10, seconds, j), tool
    med, paired = b.paired_cpu(["h2load", "herd"], one, rounds,
                               "HTTP/2 (h2c), 10 connections x 10 streams, 1 thread")
    ratio = paired["herd"]
    print(f"  herd / h2load = {ratio:.2f}  (bar: <= 0.90) -> {'PASS' if ratio <= 0.90 else 'FAIL'}")
    return {"cpu_us_per_req": med, "herd_vs_h2load": ratio}


def rate(b, nginx, rounds):
    results, p99 = [], []
    for r in range(rounds):
        with tempfile.NamedTemporaryFile(suffix=".json") as j:
            b.run_measured([str(b.HERD), "run", "--http2", "-t", "1", "--rate", "20000", "-c", "10",
                            "--streams", "100", "-d", "5s", "-q", "--json", j.name, nginx.h2_url], timeout=60)
            res = json.loads(Path(j.name).read_text())
        results.append(res["totals"]["ok"])
        p99.append(res["latency_ms"]["p99"])
        t = res["totals"]
        b.log(f"  round {r + 1} ok {t['ok']} dropped {t['dropped']} errors {t['errors']} "
              f"p99 {res['latency_ms']['p99']:.2f} ms (from the intended time)")
    worst = max(abs(n - 100_000) / 100_000 for n in results)
    print(f"\nHTTP/2 --rate 20000 for 5 s: delivered {results} (want 100,000 +-1%), "
          f"p99 {statistics.median(p99):.2f} ms from the intended time")
    print(f"  worst deviation {worst * 100:.2f}% -> {'PASS' if worst <= 0.01 else 'FAIL'}")
    return {"delivered": results, "worst_deviation": worst, "p99_ms": statistics.median(p99)}


def rss(b, nginx, rounds, seconds):
    tools = ["herd", "h2load"]
    peaks = {t: [] for t in tools}
    for r in range(rounds):
        for tool in tools[r % 2:] + tools[:r % 2]:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                out, _, peak = b.run_measured(argv(tool, b.HERD, nginx.h2_url, 10, 1000, seconds, j.name),
                                              timeout=seconds + 120)
                n, errors = b.requests_of(tool, out, j.name)
            peaks[tool].append(peak)
            b.log(f"  round {r + 1} {tool:7s} peak RSS {peak / 1e6:6.1f} MB  ({n} requests, {errors} errors)")
    med = {t: statistics.median(v) for t, v in peaks.items()}
    ratio = med["herd"] / med["h2load"]
    print(f"\nPeak RSS with 10,000 HTTP/2 streams open (10 connections x 1,000), 1 thread (median of {rounds})")
    for t in tools:
        print(f"  {t:8s} {med[t] / 1e6:8.1f} MB")
    print(f"  herd / h2load = {ratio:.2f}  (bar: <= 1.00) -> {'PASS' if ratio <= 1.0 else 'FAIL'}")
    return {"peak_rss_mb": {t: v / 1e6 for t, v in med.items()}, "herd_vs_h2load": ratio}
