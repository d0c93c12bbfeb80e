#!/usr/bin/env python3
"""Does herd's memory stay flat over a long run? Runs herd against nginx (pinned as bench.py pins
them) for N seconds, samples its RSS every second, and prints the slope in MB per minute after
the first minute (issue 13, item 6: it was +1.55 MB/min at --rate 3000).

    python3 bench/rss_slope.py                       # --rate 3000 for 120 s, release build
    python3 bench/rss_slope.py --seconds 90 --herd target/debug/herd
    python3 bench/rss_slope.py --workload            # a two-step workload at 1,500 iterations/s
    python3 bench/rss_slope.py --urls 3000           # -f with 3,000 distinct URLs
    python3 bench/rss_slope.py --seconds 3600 --all-outputs   # issue 19: every live output on

The slope is a least-squares fit over the samples after the first minute (after the first third
when the run is shorter than 90 s). Needs nginx and taskset; see bench.py.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the harness's nginx and tool checks)


def rss_mb(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def slope_per_min(samples):
    n = len(samples)
    if n < 2:
        return float("nan")
    mt = sum(t for t, _ in samples) / n
    mr = sum(r for _, r in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    cov = sum((t - mt) * (r - mr) for t, r in samples)
    return 60 * cov / var if var else float("nan")


def workload_file(url, rate, seconds, d):
    p = Path(d) / "two-steps.yaml"
    p.write_text(f"""target: {url.rstrip('/')}
load: {{ model: open, rate: {rate}, duration: {seconds}s }}
scenarios:
  - name: two
    steps:
      - get: /a
        name: first
      - get: /b
        name: second
""")
    return p


def urls_file(url, n, d):
    p = Path(d) / "urls.txt"
    p.write_text("".join(f"{url}page/{i}\n" for i in range(n)))
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--rate", type=float, default=3000)
    ap.add_argument("--herd", default=str(bench.HERD), help="herd binary (default: release build)")
    ap.add_argument("--workload", action="store_true", help="a two-step workload file at --rate/2 iterations/s")
    ap.add_argument("--urls", type=int, default=0, help="-f with this many distinct URLs, -c 50")
    ap.add_argument("--all-outputs", action="store_true",
                    help="--json, --csv, --hlog, --record, --dashboard and --metrics-listen all on")
    a = ap.parse_args()
    herd = Path(a.herd)
    if herd == bench.HERD and not herd.exists():
        bench.build_herd()
    nginx = bench.Nginx()
    tmp = tempfile.mkdtemp(prefix="herd-rss-")
    try:
        if a.workload:
            what = f"workload, two steps at {a.rate / 2:g} iterations/s"
            argv = [str(herd), "run", "-q", str(workload_file(nginx.url, a.rate / 2, a.seconds, tmp))]
        elif a.urls:
            what = f"-f with {a.urls} URLs, -c 50"
            argv = [str(herd), "run", "-q", "-c", "50", "-d", f"{a.seconds}s", "-f", str(urls_file(nginx.url, a.urls, tmp))]
        else:
            what = f"--rate {a.rate:g}"
            argv = [str(herd), "run", "-q", "--rate", f"{a.rate:g}", "-d", f"{a.seconds}s", nginx.url]
        if a.all_outputs:
            what += ", every output on"
            argv += ["--json", f"{tmp}/r.json", "--csv", f"{tmp}/r.csv", "--hlog", f"{tmp}/r.hlog",
                     "--record", f"{tmp}/rec.ndjson", "--dashboard=127.0.0.1:0",
                     "--metrics-listen", "127.0.0.1:0"]
        bench.log(f"rss_slope: {what} for {a.seconds} s: {' '.join(argv)}")
        # Output to files, not pipes: a summary with thousands of names would fill a pipe and
        # stall herd while this loop is still sampling.
        out_file = open(Path(tmp) / "out.txt", "w+")
        err_file = open(Path(tmp) / "err.txt", "w+")
        proc = subprocess.Popen(["taskset", "-c", bench.CLIENT_CPU, *argv], stdout=out_file, stderr=err_file,
                                text=True)
        start = time.monotonic()
        samples = []
        while proc.poll() is None and time.monotonic() - start < a.seconds + 60:
            r = rss_mb(proc.pid)
            t = time.monotonic() - start
            # The last seconds are the end of the run (results being built), not steady state.
            if r is not None and t <= a.seconds - 2:
                samples.append((t, r))
            time.sleep(1.0)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
        if proc.returncode not in (0, 4):
            sys.exit(f"rss_slope: herd exited {proc.returncode}: {err.strip()}")
        cut = 60 if a.seconds >= 90 else a.seconds / 3
        steady = [(t, r) for t, r in samples if t >= cut]
        for t, r in samples:
            if int(t) % 10 == 0:
                print(f"  t={t:5.0f} s  rss {r:7.1f} MB")
        first = samples[0][1] if samples else float("nan")
        at_cut = steady[0][1] if steady else float("nan")
        last = samples[-1][1] if samples else float("nan")
        print(f"herd {what}, {a.seconds} s: RSS {first:.1f} MB at start, {at_cut:.1f} MB at {cut:.0f} s, "
              f"{last:.1f} MB at the end; slope after {cut:.0f} s: {slope_per_min(steady):+.3f} MB/min")
        summary = [line for line in out.splitlines() if line.strip().startswith(("requests", "throughput"))]
        print("\n".join(summary))
    finally:
        nginx.stop()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
