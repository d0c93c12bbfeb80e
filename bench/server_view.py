"""The server's view (issue 33), run by bench.py (`bench.py server`): what each client's requests
cost the server, against bench.py's nginx (one worker on CPU 0) serving its static file (nginx's
welcome page with its usual headers, bench/corpus.py), saturated.

For each protocol and concurrency, herd and its peer send the same requests in alternating
rounds; each run reads the nginx worker's own CPU time (utime + stime from /proc) before and
after, so the table gives, per tool:

- the achieved rate (requests / wall seconds) against the saturated server, and
- the server's CPU per request (worker CPU seconds / requests),

and the ratios herd / peer (median of the rounds' paired ratios). The server counts as saturated
when its worker was busy >= 90% of the run's wall time; a row where it was not says so (the
client was the bottleneck, and the rate ratio is the clients' speed, not the server's view).

Bars (issue 33): h2c at -c 10 and -c 100 x 100 streams: rate >= 0.97 x h2load's and nginx's CPU
per request <= 1.03 x; HTTP/1.1 plain and pipelined 16 deep at 50 connections, wrk's request:
rate >= 0.97 x wrk's, CPU per request <= 1.03 x.
"""

import os
import statistics
import tempfile
import time
from pathlib import Path

STATIC = "static/index.html"


def worker_pid(nginx):
    """The one nginx worker (the master's child)."""
    children = Path(f"/proc/{nginx.proc.pid}/task/{nginx.proc.pid}/children").read_text().split()
    if len(children) != 1:
        raise SystemExit(f"bench: expected one nginx worker, found {len(children)}")
    return int(children[0])


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of the line (11 and 12 after the command's ")").
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rows(b, nginx, seconds, pipeline_script):
    """(label, peer, {tool: argv maker}) for every row of the table."""
    h1 = nginx.url + STATIC
    h2 = nginx.h2_url + STATIC

    def herd_h2(conns):
        return lambda j: ([*b.argv_for("herd", h2, conns, seconds, j)[:-1], "--http2", "--streams", "100", h2],
                          "herd")

    def h2load(conns):
        return lambda j: (["h2load", "-t", "1", "-c", str(conns), "-m", "100", "-D", str(seconds), h2], "h2load")

    def plain(tool, extra=()):
        kind = "wrk" if tool.startswith("wrk") else "herd"
        return lambda j: ([*b.argv_for(kind, h1, 50, seconds, j)[:-1], *extra, h1], kind)

    return [
        ("h2c, 10 connections x 100 streams", "h2load", {"h2load": h2load(10), "herd": herd_h2(10)}),
        ("h2c, 100 connections x 100 streams", "h2load", {"h2load": h2load(100), "herd": herd_h2(100)}),
        ("HTTP/1.1, 50 connections", "wrk", {"wrk": plain("wrk"), "herd": plain("herd")}),
        ("HTTP/1.1 pipelined 16 deep, 50 connections", "wrk",
         {"wrk": plain("wrk", ["-s", pipeline_script]), "herd": plain("herd", ["--pipeline", "16"])}),
    ]


def measure(b, worker, argv_of, tool):
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        argv, kind = argv_of(j.name)
        before, start = cpu_seconds(worker), time.monotonic()
        out, _, _ = b.run_measured(argv, timeout=300)
        wall, busy = time.monotonic() - start, cpu_seconds(worker) - before
        n, errors = b.requests_of(kind, out, j.name)
    if errors:
        b.log(f"bench: warning: {tool} saw {errors} errors")
    return {"rate": n / wall, "cpu_us": busy / max(n, 1) * 1e6, "busy": busy / wall}


def run(b, nginx, rounds, seconds):
    worker = worker_pid(nginx)
    scripts = Path(tempfile.mkdtemp(prefix="herd-bench-server-"))
    script = scripts / "pipeline16.lua"
    script.write_text(b.LUA_PIPELINE16.replace('wrk.format(nil, "/")', f'wrk.format(nil, "/{STATIC}")'))
    figures = {}
    print(f"\nThe server's view: nginx (one worker, CPU 0) serving its static file, {rounds} rounds x {seconds} s")
    print(f"  {'':44s} {'rate':>9s} {'x peer':>7s} {'srv us/req':>10s} {'x peer':>7s} {'busy':>5s}")
    for label, peer, tools in rows(b, nginx, seconds, str(script)):
        samples = {t: [] for t in tools}
        names = list(tools)
        for r in range(rounds):
            for tool in names[r % 2:] + names[:r % 2]:
                s = measure(b, worker, tools[tool], tool)
                samples[tool].append(s)
                b.log(f"  {label}: round {r + 1} {tool:7s} {s['rate']:9.0f} req/s  server "
                      f"{s['cpu_us']:6.2f} us/req  busy {s['busy'] * 100:3.0f}%")
        row = {}
        for t in names:
            med = {k: statistics.median(s[k] for s in samples[t]) for k in ("rate", "cpu_us", "busy")}
            med["rate_vs_peer"] = statistics.median(
                a["rate"] / p["rate"] for a, p in zip(samples[t], samples[peer]))
            med["cpu_vs_peer"] = statistics.median(
                a["cpu_us"] / p["cpu_us"] for a, p in zip(samples[t], samples[peer]))
            row[t] = med
        print(f"  {label}")
        for t in names:
            m = row[t]
            note = "" if m["busy"] >= 0.9 else "  (server not saturated)"
            print(f"    {t:40s} {m['rate']:9.0f} {m['rate_vs_peer']:7.2f} {m['cpu_us']:10.2f} "
                  f"{m['cpu_vs_peer']:7.2f} {m['busy'] * 100:4.0f}%{note}")
        h = row["herd"]
        ok = h["rate_vs_peer"] >= 0.97 and h["cpu_vs_peer"] <= 1.03
        print(f"    herd / {peer}: rate {h['rate_vs_peer']:.2f} (bar >= 0.97), server CPU per request "
              f"{h['cpu_vs_peer']:.2f} (bar <= 1.03) -> {'PASS' if ok else 'FAIL'}")
        figures[label] = row
    return figures
