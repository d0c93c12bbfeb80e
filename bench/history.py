#!/usr/bin/env python3
"""`herd history ls` on a store of 10,000 runs: the bar is under 1 s (issue 31).

One real run is stored with `herd store add`; the store is then grown to N runs by copying
that run's rows in SQL (new start times, digests and commit labels), which is what 10,000
`herd store add`s would leave. Prints the median wall time of `herd history ls` (all runs, and
one label's runs) over a few rounds, and the store's size per run against the run's JSON.

    python3 bench/history.py [--runs 10000] [--rounds 5] [--herd target/release/herd]
"""
import argparse, json, os, sqlite3, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--herd", default=os.path.join(ROOT, "target/release/herd"))
    ap.add_argument("--result", default=os.path.join(ROOT, "crates/store/tests/fixtures/run-mock.json"))
    a = ap.parse_args()
    if not os.path.exists(a.herd):
        subprocess.run(["cargo", "build", "--release", "-p", "herd-cli"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "runs.db")
        subprocess.run([a.herd, "store", "add", "--store", db, a.result], check=True, stdout=subprocess.DEVNULL)
        c = sqlite3.connect(db)
        cols = [r[1] for r in c.execute("PRAGMA table_info(runs)") if r[1] != "id"]
        run = dict(zip(cols, c.execute(f"SELECT {', '.join(cols)} FROM runs").fetchone()))
        labels = c.execute("SELECT key, value FROM labels").fetchall()
        figures = c.execute("SELECT name, metric, value, noise FROM figures").fetchall()
        for i in range(1, a.runs):
            row = dict(run, started_unix=run["started_unix"] + 3600 * i, digest=f"{run['digest']}-{i}")
            cur = c.execute(
                f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [row[k] for k in cols],
            )
            rid = cur.lastrowid
            c.executemany("INSERT INTO labels VALUES (?, ?, ?)", [(rid, k, v) for k, v in labels] + [(rid, "commit", f"c{i:05}")])
            c.executemany("INSERT INTO figures VALUES (?, ?, ?, ?, ?)", [(rid,) + f for f in figures])
        c.commit()
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        size = os.path.getsize(db)
        json_size = os.path.getsize(a.result)

        def timed(args):
            t = []
            for _ in range(a.rounds):
                s = time.perf_counter()
                subprocess.run([a.herd, "history", "ls", "--store", db] + args, check=True, stdout=subprocess.DEVNULL)
                t.append(time.perf_counter() - s)
            return statistics.median(t)

        every = timed([])
        one = timed(["--label", "commit=c05000"])
        print(f"history ls, {a.runs} runs: {every:.3f} s (bar < 1 s); one label's run: {one:.3f} s")
        print(f"store: {size / a.runs:.0f} bytes a run; the run's JSON: {json_size} bytes")
        sys.exit(0 if every < 1.0 else 1)


if __name__ == "__main__":
    main()
