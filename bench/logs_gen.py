#!/usr/bin/env python3
"""Writes a synthetic Combined log of about SIZE megabytes (default 1024) to PATH, seeded:
a day of traffic with a daily profile, Zipf-popular item ids, searches, static files, a few
POSTs, real-looking user agents. Used by bench/logs.sh."""
import math, random, sys, time

path = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
rng = random.Random(12)
uas = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
]
refs = ["-", "https://www.example.com/", "https://www.google.com/", "https://shop.example.com/items/12"]
ids = [int(rng.paretovariate(0.9)) for _ in range(200000)]
words = ["shoes", "red", "hat", "blue", "socks", "coat", "bag", "scarf"]
t0 = 1763942400
limit = size * 1024 * 1024
written = 0
chunk = []
i = 0
secs_day = 86400
with open(path, "w") as f:
    while written < limit:
        # a day in time order, busier in the afternoon than at night
        f_ = min(written / limit, 1.0)
        t = t0 + int(secs_day * (f_ - 0.3 * math.sin(2 * math.pi * f_) / (2 * math.pi)))
        i += 1
        stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(t))
        r = rng.random()
        if r < 0.45:
            p = "/items/%d" % ids[i % len(ids)]
        elif r < 0.6:
            p = "/search?q=%s+%s&page=%d" % (rng.choice(words), rng.choice(words), rng.randint(1, 9))
        elif r < 0.75:
            p = "/static/%s" % rng.choice(["app.js", "site.css", "logo.png", "font.woff2"])
        elif r < 0.9:
            p = "/"
        elif r < 0.97:
            p = "/api/v1/users/%d/cart" % rng.randint(1, 50000)
        else:
            p = "/checkout"
        m = "POST" if p == "/checkout" else "GET"
        st = 200 if rng.random() < 0.95 else rng.choice([301, 304, 404, 500, 502])
        line = '10.%d.%d.%d - - [%s] "%s %s HTTP/1.1" %d %d "%s" "%s"\n' % (
            rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254), stamp, m, p, st,
            rng.randint(200, 90000), rng.choice(refs), rng.choice(uas))
        chunk.append(line)
        written += len(line)
        if len(chunk) >= 10000:
            f.write("".join(chunk))
            chunk = []
    f.write("".join(chunk))
