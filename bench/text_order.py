#!/usr/bin/env python3
"""Writes crates/cli/text-order.txt: the functions of herd a run executes, for lld's
--symbol-ordering-file (see crates/cli/build.rs for why).

    cargo build --release -p herd-cli && python3 bench/text_order.py && cargo build --release -p herd-cli

The runs are bench.py rss's (HTTP/1.1 keep-alive against nginx, --json) at 10 and 10,000
connections and an HTTP/2 one (h2c, 10 connections x 10 streams), each for 3 s under callgrind, which names every
function executed at least once. Names are the linker's (mangled); functions of other runs
(TLS, HTTP/3, Lua, reports) keep the compiler's order, as before.

The HTTP/1.1 runs' functions come first and the HTTP/2 run's others after them, so a plain run
touches none of the HTTP/2 code's pages (~150 kB of nghttp2 and herd's session).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

OUT = bench.ROOT / "crates" / "cli" / "text-order.txt"
CRT = ["_start", "_dl_relocate_static_pie", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux",
       "frame_dummy"]


def executed(cg_file, binary):
    """Names of the functions of `binary` in a callgrind file, in the order they first appear."""
    objects, names, order = {}, {}, []
    ob = cob = None
    for line in open(cg_file, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(ob|cob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                objects[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                ob, cob = objects.get(m.group(2)), None
            else:
                cob = objects.get(m.group(2))
            continue
        m = re.match(r"^(fn|cfn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            obj = ob if m.group(1) == "fn" else (cob or ob)
            if obj and os.path.realpath(obj) == os.path.realpath(binary):
                order.append(m.group(2))
            if m.group(1) == "fn":
                cob = None
    return [names.get(i, "").split("'")[0] for i in order]


def main():
    herd = str(bench.HERD)
    if not Path(herd).exists():
        sys.exit(f"{herd} not found: build it first (cargo build --release -p herd-cli)")
    bench.ensure_tools()
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found: apt-get install valgrind")
    bench.raise_nofile(11_000)
    nginx = bench.Nginx()
    runs = [(["-c", "10"], nginx.url), (["-c", "10000"], nginx.url),
            (["--http2", "-c", "10", "--streams", "10"], nginx.h2_url)]
    names = {}  # the first run (index) that executed each
    try:
        for i, (extra, url) in enumerate(runs):
            with tempfile.TemporaryDirectory() as d:
                cg = os.path.join(d, "cg.out")
                argv = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={cg}", herd, "run",
                        "-t", "1", *extra, "-d", "3s", "-q", "--timeout", "30s", "-k", "-H", "User-Agent:",
                        "-H", "Accept:", "--json", os.path.join(d, "r.json"), url]
                subprocess.run(argv, capture_output=True, timeout=300)
                got = executed(cg, herd)
                bench.log(f"  {' '.join(extra)}: {len(set(got))} functions")
                for n in got:
                    names.setdefault(n, i)
    finally:
        nginx.stop()
    # HTTP/1.1's functions, then HTTP/2's others; each part sorted, not in the order they ran:
    # within a part the pages are all touched anyway, and a sorted list changes by the
    # functions that changed, where callgrind's order moves with every run's timing.
    # The C runtime's start-up functions run too but have no names in callgrind's output;
    # left out, the linker puts them right after the list, in a page of HTTP/2's part.
    for n in CRT:
        names.setdefault(n, 0)
    http2 = len(runs) - 1
    order = sorted((names[n] == http2, n) for n in names if n and re.match(r"^[A-Za-z_][A-Za-z0-9_.$]*$", n))
    order = [n for _, n in order]
    OUT.write_text("".join(f"{n}\n" for n in order))
    print(f"{len(order)} functions -> {OUT.relative_to(bench.ROOT)}")


if __name__ == "__main__":
    main()
