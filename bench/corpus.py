"""Real responses (issue 28, items 20-21), run by bench.py (`bench.py corpus`): `return 200` flatters
a client that pays per response header, so every protocol is measured against its peer on what
users point herd at, served by the same nginx (bench.py's, one worker on CPU 0):

- static:  nginx's own static file (its welcome page, 615 bytes) with its usual headers (Server,
           Date, Content-Type, Content-Length, Last-Modified, ETag, Accept-Ranges);
- headers: the same file with ten more of a real site's headers (Cache-Control, Vary,
           Strict-Transport-Security, Content-Security-Policy, X-Content-Type-Options,
           X-Frame-Options, Referrer-Policy, Set-Cookie, X-Request-Id, Permissions-Policy);
- 4k, 64k: static files of 4 KB and 64 KB;
- chunked: the 4 KB file gzipped on the fly (`Transfer-Encoding: chunked`; every tool asks
           `Accept-Encoding: gzip`).

Each protocol against its peer, every tool sending the same request: plain HTTP/1.1 and https
(herd vs wrk, 50 connections, wrk's request), pipelining 16 deep (herd --pipeline 16 vs wrk's
pipelining script, 50 connections), HTTP/2 h2c 10 connections x 10 streams (herd --http2 vs
h2load -m 10). The headline of each protocol is its worst ratio. Bars on the static file: h2c
<= 0.80 x h2load, pipelining <= 0.95 x wrk, plain and https <= 0.90 x wrk.
"""

import shutil
import tempfile
from pathlib import Path

# nginx's welcome page, as Debian's nginx installs it: the static file a fresh server serves.
WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""

TEN_HEADERS = [
    ("Cache-Control", "public, max-age=3600"),
    ("Vary", "Accept-Encoding"),
    ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; script-src 'self'"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("Referrer-Policy", "strict-origin-when-cross-origin"),
    ("Set-Cookie", "sid=3f9a1c; Path=/; HttpOnly; Secure; SameSite=Lax"),
    ("X-Request-Id", "b7e4c2a0d1"),
    ("Permissions-Policy", "geolocation=()"),
]

# (name, path, extra request headers every tool sends)
RESPONSES = [
    ("static", "/static/index.html", []),
    ("headers", "/headers/index.html", []),
    ("4k", "/static/4k.html", []),
    ("64k", "/static/64k.html", []),
    ("chunked", "/gzip/4k.html", ["Accept-Encoding: gzip"]),
]

BARS = {"plain": 0.90, "https": 0.90, "pipeline": 0.95, "h2c": 0.80}


def write_files(root):
    """The files nginx serves (text that compresses as a page does: gzip's chunks are real)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text(WELCOME)
    words = ("herd measures what a server does under load, one request at a time; " * 1200).encode()
    (root / "4k.html").write_bytes(words[:4096])
    (root / "64k.html").write_bytes(words[:65536])


def locations(root):
    """nginx locations for the corpus, for each of bench.py's servers."""
    extra = "".join(f'add_header {k} "{v}"; ' for k, v in TEN_HEADERS)
    html = "types { text/html html; }"
    return f"""
        location /static/ {{ alias {root}/; {html} }}
        location /headers/ {{ alias {root}/; {html} {extra}}}
        location /gzip/ {{ alias {root}/; {html} gzip on; gzip_min_length 0; gzip_types *; gzip_comp_level 1; }}
"""


def lua_pipeline(path, headers):
    hs = ", ".join(f'["{h.split(":")[0]}"] = "{h.split(":", 1)[1].strip()}"' for h in headers)
    return f"""
init = function(args)
   local r = {{}}
   for i = 1, 16 do r[i] = wrk.format(nil, "{path}", {{{hs}}}) end
   req = table.concat(r)
end
request = function()
   return req
end
"""


def protocol_argv(b, proto, tool, base, path, headers, seconds, j, scripts):
    """(argv, kind) of `tool` ("herd" or its peer) for `proto` on `base + path`."""
    hflags = [x for h in headers for x in ("-H", h)]
    if proto == "h2c":
        if tool == "herd":
            return [str(b.HERD), "run", "--http2", "-t", "1", "-c", "10", "--streams", "10", "-d", f"{seconds}s",
                    "-q", "--timeout", "30s", "-H", "User-Agent:", "-H", "Accept:", *hflags, "--json", j,
                    base + path], "herd"
        return ["h2load", "-t", "1", "-c", "10", "-m", "10", "-D", str(seconds), *hflags, base + path], "h2load"
    kind = "herd" if tool == "herd" else "wrk"
    a = b.argv_for(kind, base + path, 50, seconds, j)
    a = [*a[:-1], *hflags, a[-1]]
    if proto == "pipeline":
        if tool == "herd":
            a = [*a[:-1], "--pipeline", "16", a[-1]]
        else:
            script = scripts / f"pipeline-{abs(hash((path, tuple(headers))))}.lua"
            script.write_text(lua_pipeline(path, headers))
            a = [*a[:-1], "-s", str(script), a[-1]]
    return a, kind


def run(b, nginx, rounds, seconds, only=None, responses=None):
    """Every response x protocol, herd against its peer; prints the table and the headlines.
    `only` keeps some protocols, `responses` some responses by name (`static`: the bars' row)."""
    scripts = Path(tempfile.mkdtemp(prefix="herd-bench-corpus-"))
    bases = {"plain": nginx.url.rstrip("/"), "https": nginx.tls_url.rstrip("/"),
             "pipeline": nginx.url.rstrip("/"), "h2c": nginx.h2_url.rstrip("/")}
    peers = {"plain": "wrk", "https": "wrk", "pipeline": "wrk", "h2c": "h2load"}
    table = {}
    kept = [r for r in RESPONSES if not responses or r[0] in responses]
    try:
        for name, path, headers in kept:
            for proto in [p for p in bases if not only or p in only]:
                def argv(tool, j, proto=proto, path=path, headers=headers):
                    return protocol_argv(b, proto, tool, bases[proto], path, headers, seconds, j, scripts)
                try:
                    _, paired = b.paired_cpu([peers[proto], "herd"], argv, rounds,
                                             f"{name} ({path}) over {proto}: herd vs {peers[proto]}")
                    table[(name, proto)] = paired["herd"]
                except RuntimeError as e:
                    # A run that fails (herd exits 6 when nothing answered) is a finding, not
                    # a reason to lose the rest of the table.
                    b.log(f"bench: {name} over {proto} failed: {e}")
                    table[(name, proto)] = None
    finally:
        shutil.rmtree(scripts, ignore_errors=True)
    protos = [p for p in bases if not only or p in only]
    print(f"\nCPU per request, herd / peer (median of {rounds} paired rounds, {seconds} s each)")
    print(f"  {'response':10s}" + "".join(f"{p:>10s}" for p in protos))
    cell = lambda r: f"{r:10.2f}" if r is not None else f"{'failed':>10s}"
    for name, _, _ in kept:
        print(f"  {name:10s}" + "".join(cell(table[(name, p)]) for p in protos))
    figures = {"ratios": {f"{n}/{p}": r for (n, p), r in table.items()}, "headline": {}}
    for p in protos:
        measured = [table[(n, p)] for n, _, _ in kept if table[(n, p)] is not None]
        failed = [n for n, _, _ in kept if table[(n, p)] is None]
        worst = max(measured) if measured else None
        static = table.get(("static", p))
        ok = static is not None and static <= BARS[p] and not failed
        print(f"  {p:8s} headline (worst) {cell(worst).strip()}; static file {cell(static).strip()} "
              f"(bar <= {BARS[p]:.2f}){'; failed: ' + ', '.join(failed) if failed else ''} -> "
              f"{'PASS' if ok else 'FAIL'}")
        figures["headline"][p] = worst
    return figures
