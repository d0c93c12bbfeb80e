#!/usr/bin/env python3
"""herd's benchmark harness: herd and its peers against the same nginx, pinned and alternating.

nginx runs on CPU 0, the load generator on CPU 1. Each round runs every tool once, in turn, so
drift on a shared machine hits all of them alike; the harness prints per-tool medians and the
ratios against wrk, which hold where absolute numbers drift.

    python3 bench/bench.py               # all benchmarks, 5 rounds
    python3 bench/bench.py cpu --rounds 3 --seconds 5
    python3 bench/bench.py rss rate
    python3 bench/bench.py cpu --baseline /path/to/older/herd   # + herd / older herd, same rounds

Benchmarks:
  cpu       CPU time (user + sys) per request at 50 connections, 1 thread  (bar: herd <= 0.85 x wrk)
  rss       peak RSS holding 10,000 keep-alive connections                 (bar: herd <= 0.25 x wrk)
  rate      open-model accuracy: --rate 5000 for 5 s delivers 25,000 +-1%
  https     CPU per request over TLS (nginx TLS, keep-alive, 50 conns)  (bar: herd <= 0.9 x wrk),
            and handshakes per second with --calls-per-conn 1
  rsstls    peak RSS holding 10,000 https keep-alive connections         (bar: herd <= wrk)
  workload  CPU per request: a one-step workload file (bar <= 1.05 x `herd run URL`) and a 4-step
            session (login form, JSON extraction, cookie, templated URL; bar <= 1.3 x)
  open      --rate 5000: p50 latency from the intended time, plain vs https vs a workload file
            (bar: within 20% of each other)
  replay    herd replay of a log at 20,000 req/s against herd run --rate 20000: delivered, and
            CPU per request (bar: replay holds the rate, CPU within 10% of run's)
  h3        HTTP/3 against Caddy (QUIC, 50 connections, 1 thread): throughput and CPU per request
            of herd --http3 beside h2load's HTTP/3 when this h2load has it (Debian's has not), else
            beside h2load's HTTP/2 and herd's HTTP/1.1 (and HTTP/2 when herd has --http2) over TLS
            against the same Caddy; then 10 connections x 10 streams (--streams 10 beside h2load
            -m 10), and handshakes per second with --calls-per-conn 2 (full, resumed, 0-RTT)
  lua       CPU per request with wrk's Lua scripting: a request() returning a string built in
            init (bar: <= 1.15 x `herd run URL`, and <= wrk with the same script) and a
            response(status) hook (bar: <= 1.3 x)
  pipeline  CPU per request with HTTP/1.1 pipelining 16 deep at 50 connections: herd --pipeline 16
            against wrk with a 16-request pipelining script (bar: herd <= wrk)
  proxy     CPU per request direct and through tinyproxy: https through a CONNECT tunnel
            (keep-alive; a tunnel costs nothing per request once open: bar <= 1.05 x direct),
            and http in absolute form (one request per connection: tinyproxy closes each)
  reqlog    what --requests-log costs: CPU per request (worker and writer thread together) of
            herd plain, with a gzip log (FILE.csv.gz) and with a plain CSV log, 50 connections,
            1 thread; the ratios are the cost docs/outputs.md states (no bar), lost lines flagged
  corpus    real responses (bench/corpus.py): nginx's static file, with ten more headers, 4 KB,
            64 KB, chunked; herd against wrk (plain, https, pipelining 16) and h2load (h2c 10 x
            10) on each, the worst ratio the headline (bars on the static file: h2c <= 0.80,
            pipelining <= 0.95, plain and https <= 0.90)
  server    the server's view (bench/server_view.py): nginx's CPU per request and the rate it
            reaches, saturated, under herd and under its peer (h2c 10 and 100 x 100 streams
            vs h2load, plain and pipelined 16 vs wrk) on the static file (bars: rate >= 0.97 x,
            server CPU per request <= 1.03 x)
  ssecpu    herd's CPU per Server-Sent Event (bench/bench_sse.py: a Go server writing four 64-byte
            events at a time, 1,000 a response) against its CPU per plain HTTP/1.1 request to
            nginx, same rounds (bar: <= 0.3 x); the same bytes as a plain body beside it
  shard     one process (2 threads) against 2 shards (1 thread each, own loopback addresses,
            a shared --start-at) of the same open-model plan, merged: throughput within 2%

Needs: nginx, wrk, ab (apache2-utils), h2load (nghttp2-client), caddy (h3), tinyproxy (proxy), taskset, GNU time (peak RSS); installs them with
apt-get when missing and running as root. Builds herd in release mode.
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERD = ROOT / "target" / "release" / "herd"
PACKAGES = {"nginx": "nginx-light", "wrk": "wrk", "ab": "apache2-utils", "h2load": "nghttp2-client", "time": "time",
            "caddy": "caddy",
            "tinyproxy": "tinyproxy", "squid": "squid"}
SERVER_CPU, CLIENT_CPU = "0", "1"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ensure_tools():
    missing = [pkg for tool, pkg in PACKAGES.items() if not (shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists())]
    if missing:
        if os.geteuid() != 0:
            sys.exit(f"bench: missing {' '.join(missing)}: apt-get install -y {' '.join(missing)}")
        log(f"bench: installing {' '.join(missing)}")
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdout=subprocess.DEVNULL)
    if not shutil.which("taskset"):
        sys.exit("bench: taskset (util-linux) is needed to pin server and generator")
    if os.cpu_count() < 2:
        log("bench: warning: fewer than 2 CPUs; server and generator share a core")


def build_herd():
    log("bench: building herd (release)")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "herd-cli"], cwd=ROOT, check=True)


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(n, soft), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


class Nginx:
    """One nginx worker on CPU 0 answering a small fixed body, no logging."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="herd-bench-nginx-"))
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.tls_port = s.getsockname()[1]
        s.close()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.h2_port = s.getsockname()[1]
        s.close()
        d = self.dir
        import corpus  # real responses (bench/corpus.py): files every server below also serves
        corpus.write_files(d / "www")
        served = corpus.locations(d / "www")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "2",
                        "-subj", "/CN=127.0.0.1"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (d / "nginx.conf").write_text(f"""
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log crit;
worker_rlimit_nofile 40000;
events {{ worker_connections 30000; use epoll; multi_accept on; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{self.port} backlog=16384 reuseport;
        location = /login {{ add_header Set-Cookie "sid=s3ss10n; Path=/"; default_type application/json;
                             return 200 '{{"token":"t0k3n"}}'; }}
        location / {{ default_type text/plain; return 200 "hello from nginx\\n"; }}
        {served}
    }}
    server {{
        listen 127.0.0.1:{self.h2_port} http2 backlog=16384 reuseport;
        http2_max_concurrent_streams 20000;
        location / {{ default_type text/plain; return 200 "hello from nginx\\n"; }}
        {served}
    }}
    server {{
        listen 127.0.0.1:{self.tls_port} ssl backlog=16384 reuseport;
        ssl_certificate {d}/cert.pem;
        ssl_certificate_key {d}/key.pem;
        ssl_session_cache shared:tls:10m;
        location / {{ default_type text/plain; return 200 "hello from nginx\\n"; }}
        {served}
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, nginx, "-c", str(d / "nginx.conf"), "-p", str(d)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("bench: nginx did not start")
                time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/"
        self.tls_url = f"https://127.0.0.1:{self.tls_port}/"
        self.h2_url = f"http://127.0.0.1:{self.h2_port}/"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_measured(argv, timeout):
    """Runs argv pinned to the client CPU; returns (stdout, cpu seconds, peak RSS in bytes).

    The peak comes from GNU time, not from this process's wait4: a child's ru_maxrss counts the
    memory it had before exec, and a child of Python starts as a copy of Python (~18 MB), so
    wait4 read 18 MB for /bin/true and no tool could be seen below that. GNU time forks its
    child from its own small image. CPU time still comes from wait4 (time's children included).
    """
    peak_file = tempfile.NamedTemporaryFile(suffix=".maxrss")
    # Output goes to files, not pipes read at the end: a tool that writes more than a pipe holds
    # (ghz's JSON lists every call) would block on its write while this waits for its exit.
    out_file, err_file = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak_file.name, "taskset", "-c", CLIENT_CPU, *argv],
                            stdout=out_file, stderr=err_file, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    deadline = time.time() + timeout
    # wait4 gives the child's own rusage and its reaped children's (GNU time's child, which
    # taskset execs into the tool).
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)  # time and the tool it forked
            pid, status, ru = os.wait4(proc.pid, 0)
            raise RuntimeError(f"timed out: {' '.join(argv)}")
        time.sleep(0.02)
    out_file.seek(0)
    err_file.seek(0)
    out, err = out_file.read(), err_file.read()
    out_file.close()
    err_file.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # herd exits 4 when it judges itself the bottleneck, as a flat-out benchmark makes it; the
    # figures are still written.
    if proc.returncode not in (0, 4):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err.strip()[:400]}")
    with peak_file:
        peak_kb = int(Path(peak_file.name).read_text().split()[-1])
    return out + err, ru.ru_utime + ru.ru_stime, peak_kb * 1024


def requests_of(tool, out, json_path=None):
    if tool == "herd-text":
        # herd without --json: its summary's counts.
        n = int(re.search(r"([\d,]+) completed", out).group(1).replace(",", ""))
        return n, int(re.search(r"([\d,]+) errors", out).group(1).replace(",", ""))
    if tool == "herd-events":
        # an event stream's events (bench_sse.py), not its responses
        r = json.loads(Path(json_path).read_text())
        return r["streams"]["events"], r["totals"]["errors"]
    if tool == "herd-plain-events":
        import bench_sse  # the same bytes as a plain body: the events they would have been
        r = json.loads(Path(json_path).read_text())
        return r["totals"]["completed"] * bench_sse.EVENTS, r["totals"]["errors"]
    if tool.startswith("herd") or tool.startswith("baseline"):
        r = json.loads(Path(json_path).read_text())
        return r["totals"]["completed"], r["totals"]["errors"]
    if tool == "wrk":
        n = int(re.search(r"(\d+) requests in", out).group(1))
        e = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
        return n, sum(int(x) for x in e.groups()) if e else 0
    if tool == "ab":
        n = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
        return n, int(re.search(r"Failed requests:\s+(\d+)", out).group(1))
    if tool == "h2load":
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", out)
        return int(m.group(4)), int(m.group(5)) + int(m.group(6))
    raise ValueError(tool)


BASELINE = None  # --baseline: an older herd binary, measured beside this one


def argv_for(tool, url, conns, seconds, json_path):
    if tool in ("baseline", "baseline+ua"):
        mine = "herd" if tool == "baseline" else "herd+ua"
        return [str(BASELINE), *argv_for(mine, url, conns, seconds, json_path)[1:]]
    if tool in ("herd", "herd+ua"):
        # wrk sends only Host; without its User-Agent and Accept headers herd sends wrk's very
        # request, so nginx does the same work for both. "herd+ua" keeps them (39 bytes more
        # per request, and nginx parsing them), for comparison.
        same = [] if tool == "herd+ua" else ["-H", "User-Agent:", "-H", "Accept:"]
        return [str(HERD), "run", "-t", "1", "-c", str(conns), "-d", f"{seconds}s", "-q", "--timeout", "30s",
                "-k", *same, "--json", json_path, url]
    if tool == "wrk":
        return ["wrk", "-t", "1", "-c", str(conns), "-d", f"{seconds}s", "--timeout", "30s", url]
    if tool == "ab":
        return ["ab", "-q", "-k", "-c", str(conns), "-t", str(seconds), "-n", "100000000", url]
    if tool == "h2load":
        return ["h2load", "--h1", "-t", "1", "-c", str(conns), "-D", str(seconds), url]
    raise ValueError(tool)


def bench_cpu(nginx, rounds, seconds, path="/"):
    tools = ["herd", "wrk", "ab", "h2load", "herd+ua"] + (["baseline", "baseline+ua"] if BASELINE else [])
    samples = {t: [] for t in tools}
    rps = {t: [] for t in tools}
    for r in range(rounds):
        # herd goes first in even rounds and last in odd ones, the others rotating between: each
        # ratio to herd is then paired herd-first in half the rounds. A rotation of all six
        # kept neighbours in the same order (baseline ran just before herd in 13 of 16 rounds),
        # and the second of two back-to-back runs reads higher: 16 paired rounds, herd-first and
        # baseline-first, read herd / baseline 1.004 and 1.023 (bench/RESULTS.md, session 11).
        others = tools[1:]
        others = others[r % len(others):] + others[:r % len(others)]
        order = ["herd", *others] if r % 2 == 0 else [*others, "herd"]
        for tool in order:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                url = nginx.url + path.lstrip("/")
                out, cpu, _ = run_measured(argv_for(tool, url, 50, seconds, j.name), timeout=seconds + 60)
                n, errors = requests_of(tool, out, j.name)
            if errors:
                log(f"bench: warning: {tool} saw {errors} errors")
            samples[tool].append(cpu / n * 1e6)
            rps[tool].append(n / seconds)
            log(f"  round {r + 1} {tool:7s} {cpu / n * 1e6:6.2f} us/req  {n / seconds:9.0f} req/s")
    med = {t: statistics.median(v) for t, v in samples.items()}
    # Each round ran every tool back to back, so a ratio within a round shares that round's
    # background load; the median of those paired ratios is the figure that holds.
    paired = {t: statistics.median(a / b for a, b in zip(samples[t], samples["wrk"])) for t in tools}
    print(f"\nCPU time per request, {path}, 50 connections, 1 thread, {seconds}s x {rounds} rounds")
    print(f"  {'tool':8s} {'us/req':>8s} {'req/s':>9s} {'vs wrk':>7s}   (medians; 'vs wrk' = median of paired ratios)")
    for t in tools:
        print(f"  {t:8s} {med[t]:8.2f} {statistics.median(rps[t]):9.0f} {paired[t]:7.2f}")
    ratio = paired["herd"]
    print(f"  herd / wrk = {ratio:.2f}  (bar: <= 0.85) -> {'PASS' if ratio <= 0.85 else 'FAIL'}")
    figures = {"cpu_us_per_req": med, "herd_vs_wrk": ratio}
    if BASELINE:
        # The same rounds, paired against the older herd: a regression shows here first.
        vs = statistics.median(a / b for a, b in zip(samples["herd"], samples["baseline"]))
        print(f"  herd / baseline ({BASELINE}) = {vs:.3f}  (no regression: <= 1.00 within noise)")
        figures["herd_vs_baseline"] = vs
        # herd's default request (User-Agent and Accept) against the older herd's.
        ua = statistics.median(a / b for a, b in zip(samples["herd+ua"], samples["baseline+ua"]))
        print(f"  herd+ua / baseline+ua (default headers) = {ua:.3f}")
        figures["herd_ua_vs_baseline_ua"] = ua
    return figures


def paired_cpu(tools, argv, rounds, label, after=None):
    """CPU per request of each tool, rounds alternating who goes first; medians and paired ratios
    against the first tool. `after(tool, json_path)` looks at each run's result, when given."""
    samples = {t: [] for t in tools}
    for r in range(rounds):
        for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                a, kind = argv(tool, j.name)
                out, cpu, _ = run_measured(a, timeout=300)
                n, errors = requests_of(kind, out, j.name)
                if after:
                    after(tool, j.name)
            if errors:
                log(f"bench: warning: {tool} saw {errors} errors")
            samples[tool].append(cpu / max(n, 1) * 1e6)
            log(f"  round {r + 1} {tool:10s} {cpu / max(n, 1) * 1e6:7.2f} us/req  ({n} requests)")
    base = tools[0]
    med = {t: statistics.median(v) for t, v in samples.items()}
    paired = {t: statistics.median(a / b for a, b in zip(samples[t], samples[base])) for t in tools}
    print(f"\n{label}, {rounds} rounds")
    for t in tools:
        print(f"  {t:10s} {med[t]:8.2f} us/req   x{paired[t]:.2f} of {base}")
    return med, paired


def bench_https(nginx, rounds, seconds):
    def argv(tool, j):
        return argv_for("herd" if tool == "herd" else "wrk", nginx.tls_url, 50, seconds, j), tool
    med, paired = paired_cpu(["wrk", "herd"], argv, rounds, "HTTPS keep-alive, 50 connections, 1 thread")
    ratio = paired["herd"]
    print(f"  herd / wrk = {ratio:.2f}  (bar: <= 0.90) -> {'PASS' if ratio <= 0.90 else 'FAIL'}")
    # A new TLS connection per request: what handshakes cost (sessions resumed from the cache).
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        run_measured([str(HERD), "run", "-t", "1", "-c", "50", "-d", f"{seconds}s", "-q", "-k",
                      "--calls-per-conn", "1", "--json", j.name, nginx.tls_url], timeout=seconds + 60)
        r = json.loads(Path(j.name).read_text())
    hs = r["generator"]["connections_opened"] / r["duration_s"]
    print(f"  herd --calls-per-conn 1: {hs:,.0f} handshakes/s, {r['totals']['completed'] / r['duration_s']:,.0f} req/s")
    return {"cpu_us_per_req": med, "herd_vs_wrk": ratio, "handshakes_per_s": hs}


def bench_rss_tls(nginx, rounds, seconds):
    return peak_rss(nginx.tls_url, "https keep-alive", rounds, seconds, timeout=seconds + 180, bar=1.0)


def workload_file(nginx, name, load, steps):
    path = nginx.dir / f"{name}.yaml"
    path.write_text(f"""target: {nginx.url.rstrip('/')}
load: {load}
data: {{ item: {{ zipf: {{ n: 1000, s: 1.1 }} }} }}
scenarios:
  - name: s
    steps:
{steps}""")
    return str(path)


SESSION_STEPS = """      - post: /login
        form: { user: alice, password: secret }
        extract: { token: { json: "$.token" } }
      - get: /items/{{item}}
        headers: { Authorization: "Bearer {{token}}" }
      - get: /cart
      - get: /items/{{item}}?page=2
"""


def bench_workload(nginx, rounds, seconds):
    load = f"{{ model: closed, users: 50, duration: {seconds}s, threads: 1 }}"
    files = {
        "one-step": workload_file(nginx, "one-step", load, "      - get: /\n"),
        "session": workload_file(nginx, "session", load, SESSION_STEPS),
    }

    def argv(tool, j):
        if tool == "herd URL":
            return [str(HERD), "run", "-t", "1", "-c", "50", "-d", f"{seconds}s", "-q", "--json", j, nginx.url], "herd"
        return [str(HERD), "run", "-q", "--json", j, files[tool]], "herd"
    med, paired = paired_cpu(["herd URL", "one-step", "session"], argv, rounds,
                             "Workload files against herd run URL, 50 users, 1 thread")
    ok1, ok4 = paired["one-step"] <= 1.05, paired["session"] <= 1.3
    print(f"  one-step x{paired['one-step']:.2f} (bar <= 1.05) -> {'PASS' if ok1 else 'FAIL'};"
          f" session x{paired['session']:.2f} (bar <= 1.30) -> {'PASS' if ok4 else 'FAIL'}")
    return {"cpu_us_per_req": med, "vs_url": paired}


def bench_open(nginx, rounds):
    wl = workload_file(nginx, "open", "{ model: open, rate: 5000, duration: 5s, threads: 1 }", "      - get: /\n")
    variants = {
        "plain": [str(HERD), "run", "-t", "1", "--rate", "5000", "-d", "5s", "-q", nginx.url],
        "https": [str(HERD), "run", "-t", "1", "--rate", "5000", "-d", "5s", "-q", "-k", nginx.tls_url],
        "workload": [str(HERD), "run", "-q", wl],
    }
    p50 = {v: [] for v in variants}
    for r in range(rounds):
        for v in list(variants)[r % 3:] + list(variants)[:r % 3]:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                run_measured([*variants[v][:-1], "--json", j.name, variants[v][-1]], timeout=60)
                res = json.loads(Path(j.name).read_text())
            p50[v].append(res["latency_ms"]["p50"])
            log(f"  round {r + 1} {v:8s} p50 {res['latency_ms']['p50'] * 1000:6.0f} us  ok {res['totals']['ok']}")
    med = {v: statistics.median(x) for v, x in p50.items()}
    spread = max(med.values()) / min(med.values())
    print(f"\nOpen model at 5,000 req/s, p50 latency from the intended time (median of {rounds})")
    for v in med:
        print(f"  {v:8s} {med[v] * 1000:8.0f} us")
    print(f"  max / min = {spread:.2f}  (bar: <= 1.20) -> {'PASS' if spread <= 1.2 else 'FAIL'}")
    return {"p50_ms": med, "spread": spread}


def bench_rss(nginx, rounds, seconds):
    # Issue 17's bar: 10,000 keep-alive connections in a quarter of wrk's memory.
    return peak_rss(nginx.url, "keep-alive", rounds, seconds, timeout=seconds + 120, bar=0.25)


def text_order_found():
    """How many of crates/cli/text-order.txt's functions the release binary has, and how many the
    list names. herd's resident code depends on it (crates/cli/build.rs); names go stale as the
    code changes, which costs memory silently, so the memory benches say how stale it is."""
    listed = set((ROOT / "crates" / "cli" / "text-order.txt").read_text().split())
    nm = subprocess.run(["nm", "--defined-only", str(HERD)], capture_output=True, text=True)
    have = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    return len(listed & have), len(listed)


def peak_rss(url, kind, rounds, seconds, timeout, bar):
    """Peak RSS of herd and wrk each holding 10,000 connections to `url`, alternating who goes first."""
    conns = 10_000
    found, listed = text_order_found()
    log(f"  text order: {found} of {listed} listed functions are in the binary"
        + ("" if found >= 0.95 * listed else " (stale: rerun bench/text_order.py, see bench/README.md)"))
    raise_nofile(conns + 1000)
    tools = ["herd", "wrk"]
    rss = {t: [] for t in tools}
    for r in range(rounds):
        for tool in tools[r % 2:] + tools[:r % 2]:
            with tempfile.NamedTemporaryFile(suffix=".json") as j:
                out, _, peak = run_measured(argv_for(tool, url, conns, seconds, j.name), timeout=timeout)
                n, errors = requests_of(tool, out, j.name)
            rss[tool].append(peak)
            log(f"  round {r + 1} {tool:7s} peak RSS {peak / 1e6:6.1f} MB  ({n} requests, {errors} errors)")
    med = {t: statistics.median(v) for t, v in rss.items()}
    ratio = med["herd"] / med["wrk"]
    print(f"\nPeak RSS holding {conns:,} {kind} connections, 1 thread (median of {rounds})")
    for t in tools:
        print(f"  {t:8s} {med[t] / 1e6:8.1f} MB")
    print(f"  herd / wrk = {ratio:.2f}  (bar: <= {bar:.2f}) -> {'PASS' if ratio <= bar else 'FAIL'}")
    return {"peak_rss_mb": {t: v / 1e6 for t, v in med.items()}, "herd_vs_wrk": ratio}


def bench_rate(nginx, rounds):
    results = []
    for r in range(rounds):
        with tempfile.NamedTemporaryFile(suffix=".json") as j:
            run_measured([str(HERD), "run", "-t", "1", "--rate", "5000", "-d", "5s", "-q", "--json", j.name, nginx.url],
                         timeout=60)
            t = json.loads(Path(j.name).read_text())["totals"]
        results.append(t["ok"])
        log(f"  round {r + 1} scheduled {t['scheduled']} ok {t['ok']} dropped {t['dropped']} errors {t['errors']}")
    worst = max(abs(n - 25_000) / 25_000 for n in results)
    print(f"\nOpen model --rate 5000 for 5 s: delivered {results} (want 25,000 +-1%)")
    print(f"  worst deviation {worst * 100:.2f}% -> {'PASS' if worst <= 0.01 else 'FAIL'}")
    return {"delivered": results, "worst_deviation": worst}


def outputs_flags(d):
    """Every live output of issue 19 that a run can have on at once, written under `d`."""
    return ["--dashboard=127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--hlog", f"{d}/r.hlog",
            "--csv", f"{d}/r.csv", "--record", f"{d}/rec.ndjson"]


def bench_outputs(nginx, rounds, seconds):
    """Issue 19's bars: with the dashboard, the metrics endpoint, the hlog and the JSON all on,
    CPU per request within 3% of a plain run (50 connections), and --rate 20000 kept."""
    d = tempfile.mkdtemp(prefix="herd-outputs-")

    def argv(tool, j):
        a = argv_for("herd", nginx.url, 50, seconds, j)
        if tool == "no-json":
            i = a.index("--json")
            return a[:i] + a[i + 2:], "herd-text"
        return (a + outputs_flags(d) if tool == "herd+outputs" else a), "herd"

    med, paired = paired_cpu(["herd", "herd+outputs", "no-json"], argv, rounds,
                             "CPU per request, 50 connections: plain (--json) vs every output on, and no --json")
    ratio = paired["herd+outputs"]
    print(f"  every output on / plain = {ratio:.3f}  (bar: <= 1.03) -> {'PASS' if ratio <= 1.03 else 'FAIL'}")
    json_cost = 1 / paired["no-json"]
    print(f"  --json written as it goes / no --json = {json_cost:.3f}  (bar: <= 1.01) -> "
          f"{'PASS' if json_cost <= 1.01 else 'FAIL'}")
    delivered = []
    for r in range(max(1, rounds // 2)):
        with tempfile.NamedTemporaryFile(suffix=".json") as j:
            run_measured([str(HERD), "run", "-t", "1", "--rate", "20000", "-d", "5s", "-q", "-c", "200",
                          "--json", j.name, *outputs_flags(d), nginx.url], timeout=60)
            t = json.loads(Path(j.name).read_text())["totals"]
        delivered.append(t["ok"])
        log(f"  round {r + 1} --rate 20000, every output on: ok {t['ok']} dropped {t['dropped']}")
    worst = max(abs(n - 100_000) / 100_000 for n in delivered)
    print(f"  --rate 20000 for 5 s with every output on: delivered {delivered} (want 100,000 +-1%)"
          f" -> {'PASS' if worst <= 0.01 else 'FAIL'}")
    subprocess.run(["rm", "-rf", d])
    return {"cpu_us_per_req": med, "outputs_vs_plain": ratio, "json_vs_none": json_cost,
            "rate20000_delivered": delivered}


def bench_replay(nginx, rounds, seconds):
    rate = 20_000
    log = nginx.dir / "replay.log"
    with open(log, "w") as f:
        for sec in range(seconds):
            t = time.gmtime(1_700_000_000 + sec)
            stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", t)
            line = f'127.0.0.1 - - [{stamp}] "GET /items/1 HTTP/1.1" 200 12 "-" "bench"\n'
            f.write(line * rate)

    def argv(tool, j):
        if tool == "run --rate":
            return [str(HERD), "run", "-t", "1", "-c", "1000", "--rate", str(rate), "-d", f"{seconds}s", "-q",
                    "--json", j, nginx.url], "herd"
        return [str(HERD), "replay", str(log), "--target", nginx.url, "-q", "--json", j], "herd"
    med, paired = paired_cpu(["run --rate", "replay"], argv, rounds,
                             f"Replay of a {rate:,} req/s log against herd run --rate {rate}, 1 thread")
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        a, _ = argv("replay", j.name)
        run_measured(a, timeout=seconds + 60)
        r = json.loads(Path(j.name).read_text())
    delivered = r["totals"]["completed"]
    ok = delivered >= 0.99 * rate * seconds and paired["replay"] <= 1.10
    print(f"  replay delivered {delivered:,} of {rate * seconds:,}; CPU x{paired['replay']:.2f} of run"
          f" (bar: >= 99% and <= 1.10) -> {'PASS' if ok else 'FAIL'}")
    return {"cpu_us_per_req": med, "vs_run": paired["replay"], "delivered": delivered}


def bench_shard(nginx, rounds, seconds):
    rate = 30_000
    plan = ["--rate", str(rate), "-d", f"{seconds}s", "-c", "1000", "-q"]
    single_tp, merged_tp = [], []
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            one = f"{d}/single.json"
            subprocess.run([str(HERD), "run", *plan, "-t", "2", "--json", one, nginx.url], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            parts = [f"{d}/shard-{i}.json" for i in range(2)]
            procs = [subprocess.Popen([str(HERD), "run", *plan, "-t", "1", "--shard", f"{i}/2", "--start-at", "+2s",
                                       "--bind", f"127.0.0.{i + 2}", "--json", parts[i], nginx.url],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(2)]
            for p in procs:
                p.wait()
            total = f"{d}/total.json"
            subprocess.run([str(HERD), "merge", *parts, "-o", total], check=False, stdout=subprocess.DEVNULL)
            a, b = (json.loads(Path(x).read_text()) for x in (one, total))
            single_tp.append(a["throughput_rps"])
            merged_tp.append(b["throughput_rps"])
            log(f"  round {r + 1} single {a['throughput_rps']:9.0f} req/s ({a['totals']['completed']})  "
                f"2 shards {b['throughput_rps']:9.0f} req/s ({b['totals']['completed']})")
    s, m = statistics.median(single_tp), statistics.median(merged_tp)
    diff = abs(m - s) / s
    print(f"\nOpen model at {rate:,} req/s for {seconds} s: one process (2 threads) against 2 shards merged")
    print(f"  single {s:,.0f} req/s, sharded {m:,.0f} req/s, difference {diff * 100:.2f}%"
          f" (bar: <= 2%) -> {'PASS' if diff <= 0.02 else 'FAIL'}")
    return {"single_rps": s, "sharded_rps": m, "difference": diff}


class Caddy:
    """One Caddy on CPU 0 (GOMAXPROCS=1) serving HTTP/1.1, 2 and 3 with its internal CA on one
    loopback port (TCP and UDP), no access log."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="herd-bench-caddy-"))
        while True:
            t = socket.socket()
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                u.bind(("127.0.0.1", port))
                break
            except OSError:
                pass
            finally:
                t.close()
                u.close()
        d = self.dir
        (d / "Caddyfile").write_text(f"""{{
\tadmin off
\tstorage file_system {d}/data
\tskip_install_trust
\tdefault_sni 127.0.0.1
\tauto_https disable_redirects
\tservers {{
\t\tprotocols h1 h2 h3
\t}}
}}
https://127.0.0.1:{port} {{
\tbind 127.0.0.1
\ttls internal
\trespond "hello from caddy\n" 200
}}
""")
        env = {**os.environ, "HOME": str(d), "XDG_DATA_HOME": str(d / "data"), "XDG_CONFIG_HOME": str(d / "config"),
               "GOMAXPROCS": "1"}
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, "caddy", "run", "--adapter", "caddyfile",
                                      "--config", str(d / "Caddyfile")], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"https://127.0.0.1:{port}/"
        # Ready when one HTTP/3 request gets its answer (the internal CA issues the certificate
        # a moment after the listeners open).
        deadline = time.time() + 20
        while subprocess.run([str(HERD), "run", "--http3", "-k", "-n", "1", "-q", self.url],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            if time.time() > deadline:
                raise SystemExit("bench: caddy did not serve HTTP/3")
            time.sleep(0.2)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def h2load_has_h3():
    help_text = subprocess.run(["h2load", "--help"], capture_output=True, text=True).stdout
    return re.search(r"Default: h3", help_text) is not None


def bench_h3(rounds, seconds):
    herd_help = subprocess.run([str(HERD), "run", "--help"], capture_output=True, text=True).stdout
    tools = ["herd-h3"] + (["h2load-h3"] if h2load_has_h3() else ["h2load-h2", "herd-https"])
    if "--http2" in herd_help:
        tools.append("herd-h2")
    caddy = Caddy()

    def argv(tool, j):
        herd = [str(HERD), "run", "-t", "1", "-c", "50", "-d", f"{seconds}s", "-q", "--timeout", "30s", "-k",
                "--json", j]
        if tool == "herd-h3":
            return herd + ["--http3", caddy.url], "herd"
        if tool == "herd-h2":
            return herd + ["--http2", caddy.url], "herd"
        if tool == "herd-https":
            return herd + [caddy.url], "herd"
        h2load = ["h2load", "-t", "1", "-c", "50", "-D", str(seconds)]
        if tool == "h2load-h3":
            return h2load + ["--npn-list=h3", caddy.url], "h2load"
        return h2load + [caddy.url], "h2load"

    # Multiplexed: 10 connections of 10 streams (h2load's -m 10), HTTP/3 beside HTTP/2.
    streamed = ["herd-h3-m10", "h2load-h3-m10" if h2load_has_h3() else "h2load-h2-m10", "herd-h2-m10"]

    def argv_streams(tool, j):
        if tool.startswith("herd"):
            proto = "--http3" if "h3" in tool else "--http2"
            return [str(HERD), "run", "-t", "1", "-c", "10", "--streams", "10", "-d", f"{seconds}s", "-q",
                    "--timeout", "30s", "-k", "--json", j, proto, caddy.url], "herd"
        h2load = ["h2load", "-t", "1", "-c", "10", "-m", "10", "-D", str(seconds)]
        if "h3" in tool:
            h2load.append("--npn-list=h3")
        return h2load + [caddy.url], "h2load"

    try:
        med, paired = paired_cpu(tools, argv, rounds, "HTTP/3 against Caddy, 50 connections, 1 thread (CPU per request)")
        med_m, paired_m = paired_cpu(streamed, argv_streams, rounds,
                                     "HTTP/3 against Caddy, 10 connections x 10 streams, 1 thread (CPU per request)")
        # A new QUIC connection every 2 requests: handshakes, resumed ones, and 0-RTT.
        with tempfile.NamedTemporaryFile(suffix=".json") as j:
            run_measured([str(HERD), "run", "-t", "1", "-c", "50", "-d", f"{seconds}s", "-q", "-k", "--http3",
                          "--calls-per-conn", "2", "--json", j.name, caddy.url], timeout=seconds + 60)
            r = json.loads(Path(j.name).read_text())
        h3 = next(p for p in r["generator"]["protocols"] if p["protocol"] == "h3")
        h = h3.get("handshakes") or {}
        full, resumed = h.get("full", {}), h.get("resumed", {})
        hs = r["generator"]["connections_opened"] / r["duration_s"]
        print(f"  herd --http3 --calls-per-conn 2: {hs:,.0f} handshakes/s; {full.get('count', 0)} full "
              f"(mean {full.get('mean_ms', 0):.2f} ms), {resumed.get('count', 0)} resumed "
              f"(mean {resumed.get('mean_ms', 0):.2f} ms), {h.get('early_data_accepted', 0)} in 0-RTT")
    finally:
        caddy.stop()
    return {"cpu_us_per_req": med, "vs_herd_h3": paired, "streams_cpu_us_per_req": med_m,
            "streams_vs_herd_h3": paired_m, "handshakes_per_s": hs, "handshakes": h}
LUA_PREBUILT = """
init = function(args)
   req = wrk.format()
end

request = function()
   return req
end
"""

LUA_STATUS = """
local bad = 0
function response(status)
   if status >= 400 then bad = bad + 1 end
end
"""


def bench_lua(nginx, rounds, seconds):
    scripts = Path(tempfile.mkdtemp(prefix="herd-bench-lua-"))
    (scripts / "prebuilt.lua").write_text(LUA_PREBUILT)
    (scripts / "status.lua").write_text(LUA_STATUS)

    def argv(tool, j):
        script = {"herd": None, "herd-lua": "prebuilt.lua", "herd-status": "status.lua",
                  "wrk-lua": "prebuilt.lua"}[tool]
        kind = "wrk" if tool.startswith("wrk") else "herd"
        a = argv_for(kind, nginx.url, 50, seconds, j)
        if script:
            a = [*a[:-1], "-s", str(scripts / script), a[-1]]
        return a, kind
    try:
        med, paired = paired_cpu(["herd", "herd-lua", "herd-status", "wrk-lua"], argv, rounds,
                                 "Lua scripts, 50 connections, 1 thread")
    finally:
        shutil.rmtree(scripts, ignore_errors=True)
    prebuilt, status = paired["herd-lua"], paired["herd-status"]
    vs_wrk = med["herd-lua"] / med["wrk-lua"]
    print(f"  request() prebuilt / plain = {prebuilt:.2f}  (bar: <= 1.15) -> {'PASS' if prebuilt <= 1.15 else 'FAIL'}")
    print(f"  request() prebuilt / wrk -s = {vs_wrk:.2f}  (bar: <= 1.00) -> {'PASS' if vs_wrk <= 1.0 else 'FAIL'}")
    print(f"  response(status) / plain = {status:.2f}  (bar: <= 1.30) -> {'PASS' if status <= 1.3 else 'FAIL'}")
    return {"cpu_us_per_req": med, "prebuilt_vs_plain": prebuilt, "prebuilt_vs_wrk": vs_wrk,
            "status_vs_plain": status}


# wrk's scripts/pipeline.lua, with 16 requests instead of 3: wrk writes the batch at once and
# starts the next batch when the last response of this one is in.
LUA_PIPELINE16 = """
init = function(args)
   local r = {}
   for i = 1, 16 do r[i] = wrk.format(nil, "/") end
   req = table.concat(r)
end
request = function()
   return req
end
"""


def bench_pipeline(nginx, rounds, seconds):
    scripts = Path(tempfile.mkdtemp(prefix="herd-bench-pipeline-"))
    (scripts / "pipeline16.lua").write_text(LUA_PIPELINE16)

    def argv(tool, j):
        kind = "wrk" if tool.startswith("wrk") else "herd"
        a = argv_for(kind, nginx.url, 50, seconds, j)
        if tool == "herd-pipeline":
            a = [*a[:-1], "--pipeline", "16", a[-1]]
        if tool == "wrk-pipeline":
            a = [*a[:-1], "-s", str(scripts / "pipeline16.lua"), a[-1]]
        return a, kind
    try:
        med, paired = paired_cpu(["wrk-pipeline", "herd-pipeline", "herd"], argv, rounds,
                                 "HTTP/1.1 pipelining 16 deep, 50 connections, 1 thread")
    finally:
        shutil.rmtree(scripts, ignore_errors=True)
    ratio = paired["herd-pipeline"]
    print(f"  herd --pipeline 16 / wrk pipelining 16 = {ratio:.2f}  (bar: <= 1.00) -> "
          f"{'PASS' if ratio <= 1.0 else 'FAIL'}")
    return {"cpu_us_per_req": med, "herd_vs_wrk": ratio}


def bench_reqlog(nginx, rounds, seconds):
    logs = Path(tempfile.mkdtemp(prefix="herd-bench-reqlog-"))
    files = {"herd+gz": logs / "r.csv.gz", "herd+csv": logs / "r.csv"}
    lost = []

    def argv(tool, j):
        a = argv_for("herd", nginx.url, 50, seconds, j)
        if tool in files:
            a = [*a[:-1], "--requests-log", str(files[tool]), a[-1]]
        return a, "herd"

    def counted(tool, j):
        # The result says what the log holds: a writer that fell behind shows as lost lines.
        r = json.loads(Path(j).read_text()).get("requests_log")
        if r and r["lost"]:
            lost.append(f"{tool}: {r['lost']} of {r['lost'] + r['lines']} lines lost")
    try:
        med, paired = paired_cpu(["herd", "herd+gz", "herd+csv"], argv, rounds,
                                 "--requests-log, 50 connections, 1 thread", after=counted)
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    for l in lost:
        log(f"bench: warning: {l}")
    gz, csv = paired["herd+gz"], paired["herd+csv"]
    print(f"  with a gzip log / plain = {gz:.2f}, with a plain CSV log / plain = {csv:.2f}"
          f"  (the stated cost; {'no line lost' if not lost else 'LINES LOST'})")
    return {"cpu_us_per_req": med, "gzip_vs_plain": gz, "csv_vs_plain": csv, "lost": lost}


class Proxy:
    """A forward proxy of Debian's on a free loopback port, unpinned (it is the network, not a
    tool): `conf(port, dir)` is its config file's text, `argv(path)` its foreground command;
    `tries` waits of 50 ms for it to listen."""

    def __init__(self, name, conf, argv, tries, kill=False):
        self.dir = Path(tempfile.mkdtemp(prefix=f"herd-bench-{name}-"))
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        path = self.dir / f"{name}.conf"
        path.write_text(conf(self.port, self.dir))
        self.proc = subprocess.Popen(argv(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(tries):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"
        self.kill = kill

    def stop(self):
        if self.kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def start_tinyproxy():
    """Debian's tinyproxy: a thread per connection."""
    return Proxy("tinyproxy",
                 lambda port, _: f"Port {port}\nListen 127.0.0.1\nTimeout 60\nAllow 127.0.0.1\n"
                                 "MaxClients 1000\nLogLevel Critical\n",
                 lambda conf: ["tinyproxy", "-d", "-c", str(conf)], 100)


def start_squid():
    """Debian's squid (`apt-get install -y squid`): one event-driven process, beside tinyproxy's
    thread per connection, so a tunnel's cost to herd can be told apart from the way a proxy
    relays. Killed at the end: its own shutdown waits out `shutdown_lifetime` (30 s), and there
    is nothing in it to save."""
    return Proxy("squid",
                 lambda port, d: f"http_port 127.0.0.1:{port}\nhttp_access allow all\ncache deny all\n"
                                 f"access_log none\ncache_log {d}/cache.log\n"
                                 f"pid_filename {d}/squid.pid\ncoredump_dir {d}\n",
                 lambda conf: ["squid", "-N", "-f", str(conf)], 200, kill=True)


def through(proxy, name, url, seconds, extra=()):
    """herd's command line for paired_cpu: 50 connections to `url`, through `proxy` when the
    tool is `name`, direct otherwise (the proxy must not catch the direct runs)."""
    def argv(tool, j):
        a = argv_for("herd", url, 50, seconds, j)
        a = [*a[:-1], *extra, a[-1]]
        if tool == name:
            a = [*a[:-1], "--proxy", proxy.url, a[-1]]
        return a, "herd"
    return argv


def bench_proxy(nginx, rounds, seconds):
    if not shutil.which("tinyproxy"):
        sys.exit("bench: proxy needs tinyproxy: apt-get install -y tinyproxy")
    proxy = start_tinyproxy()
    try:
        https = through(proxy, "tunnel", nginx.tls_url, seconds)
        med_s, paired_s = paired_cpu(["direct", "tunnel"], https, rounds,
                                     "https keep-alive, direct and through a CONNECT tunnel")
        http = through(proxy, "proxied", nginx.url, seconds, ["--calls-per-conn", "1"])
        med_p, paired_p = paired_cpu(["direct", "proxied"], http, rounds,
                                     "http, one request per connection, direct and through the proxy")
    finally:
        proxy.stop()
    tunnel = paired_s["tunnel"]
    figures = {"https_cpu_us_per_req": med_s, "tunnel_vs_direct": tunnel,
               "http_cpu_us_per_req": med_p, "proxied_vs_direct": paired_p["proxied"]}
    if shutil.which("squid"):
        # The same tunnel through a proxy that relays from one event loop: what is left of
        # tinyproxy's ratio there is the way it relays, not the tunnel.
        squid = start_squid()
        try:
            through_squid = through(squid, "squid", nginx.tls_url, seconds)
            med_q, paired_q = paired_cpu(["direct", "squid"], through_squid, rounds,
                                         "https keep-alive, direct and through squid's CONNECT tunnel")
        finally:
            squid.stop()
        figures["squid_tunnel_vs_direct"] = paired_q["squid"]
        print(f"  tunnel through tinyproxy / direct = {tunnel:.2f}; through squid / direct = "
              f"{paired_q['squid']:.2f}")
        tunnel = min(tunnel, paired_q["squid"])
    else:
        log("bench: no squid (apt-get install -y squid): the tunnel measured through tinyproxy only")
    print(f"  tunnel / direct = {tunnel:.2f}  (bar: <= 1.05) -> {'PASS' if tunnel <= 1.05 else 'FAIL'}")
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", choices=["cpu", "rss", "rate", "https", "rsstls", "workload", "open", "replay", "shard",
                                               "h3", "lua", "proxy", "pipeline", "outputs", "reqlog",
                                                 "h2cpu", "h2rate", "h2rss", "corpus", "server", "wscpu", "wsrss", "ssecpu", []],
                    help="benchmarks to run (default: all)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--baseline", metavar="HERD", help="cpu: an older herd binary, measured in the same rounds")
    ap.add_argument("--path", default="/", help="cpu: the path asked for (default `/`, nginx's `return 200`; "
                    "/static/index.html is its static file with its usual headers)")
    ap.add_argument("--responses", nargs="+", metavar="NAME",
                    help="corpus: only these responses (static, headers, 4k, 64k, chunked); "
                    "`static` alone spends the rounds on the bars' row")
    a = ap.parse_args()
    global BASELINE
    BASELINE = a.baseline and Path(a.baseline).resolve()
    a.which = a.which or ["cpu", "rss", "rate", "https", "rsstls", "workload", "open", "replay", "shard",
                          "h3", "lua", "proxy", "pipeline", "outputs", "reqlog",
                          "h2cpu", "h2rate", "h2rss"]
    ensure_tools()
    build_herd()
    raise_nofile(40_000)
    nginx = Nginx()
    figures = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cpus, {os.uname().release}"}
    try:
        if "cpu" in a.which:
            figures["cpu"] = bench_cpu(nginx, a.rounds, a.seconds, a.path)
        if "rss" in a.which:
            figures["rss"] = bench_rss(nginx, max(1, a.rounds // 2), a.seconds)
        if "rate" in a.which:
            figures["rate"] = bench_rate(nginx, max(1, a.rounds // 2))
        if "https" in a.which:
            figures["https"] = bench_https(nginx, a.rounds, a.seconds)
        if "rsstls" in a.which:
            figures["rsstls"] = bench_rss_tls(nginx, max(1, a.rounds // 2), a.seconds)
        if "workload" in a.which:
            figures["workload"] = bench_workload(nginx, a.rounds, a.seconds)
        if "open" in a.which:
            figures["open"] = bench_open(nginx, max(1, a.rounds // 2))
        if "replay" in a.which:
            figures["replay"] = bench_replay(nginx, max(1, a.rounds // 2), a.seconds)
        if "shard" in a.which:
            figures["shard"] = bench_shard(nginx, max(1, a.rounds // 2), a.seconds)
        if "h3" in a.which:
            figures["h3"] = bench_h3(a.rounds, a.seconds)
        if "pipeline" in a.which:
            figures["pipeline"] = bench_pipeline(nginx, a.rounds, a.seconds)
        if "lua" in a.which:
            figures["lua"] = bench_lua(nginx, a.rounds, a.seconds)
        if "proxy" in a.which:
            figures["proxy"] = bench_proxy(nginx, a.rounds, a.seconds)
        if "outputs" in a.which:
            figures["outputs"] = bench_outputs(nginx, a.rounds, a.seconds)
        if "reqlog" in a.which:
            figures["reqlog"] = bench_reqlog(nginx, a.rounds, a.seconds)
        import bench_h2  # HTTP/2's bars, beside this file
        this = sys.modules[__name__]
        if "h2cpu" in a.which:
            figures["h2cpu"] = bench_h2.cpu(this, nginx, a.rounds, a.seconds)
        if "h2rate" in a.which:
            figures["h2rate"] = bench_h2.rate(this, nginx, max(1, a.rounds // 2))
        if "h2rss" in a.which:
            figures["h2rss"] = bench_h2.rss(this, nginx, max(1, a.rounds // 2), a.seconds)
        if "ssecpu" in a.which:
            import bench_sse  # the event streams' cost bar (issue 29), against a Go server built here
            figures["ssecpu"] = bench_sse.cpu(this, nginx, a.rounds, a.seconds)
        import bench_ws  # WebSocket's bars (issue 29), against a Go echo server built here
        if "wscpu" in a.which:
            figures["wscpu"] = bench_ws.cpu(this, nginx, a.rounds, a.seconds)
        if "wsrss" in a.which:
            figures["wsrss"] = bench_ws.rss(this, nginx, max(1, a.rounds // 2), a.seconds)
        if "corpus" in a.which:
            import corpus
            figures["corpus"] = corpus.run(this, nginx, a.rounds, a.seconds, responses=a.responses)
        if "server" in a.which:
            import server_view
            figures["server"] = server_view.run(this, nginx, a.rounds, a.seconds)
    finally:
        nginx.stop()
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
