#!/usr/bin/env bash
# herd logs on a ~1 GB Combined log, one core (taskset -c 1), against GoAccess on the same
# file. Prints MB/s, RSS and the ratio; the figures go to bench/RESULTS.md by hand.
#   bench/logs.sh [SIZE_MB]       (default 1024; the log is kept in $LOG_DIR, default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1024}
dir=${LOG_DIR:-/tmp}
log="$dir/herd-bench-combined-${size}m.log"
herd=target/release/herd
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo build --release -p herd-cli 2>&1 | tail -1
[ -s "$log" ] || { echo "writing $log ($size MB)..."; python3 bench/logs_gen.py "$log" "$size"; }
bytes=$(stat -c %s "$log")
cat "$log" > /dev/null   # both tools read from the page cache

measure() {   # runs, name, command...: wall seconds and max RSS (kB) of the best run
    local runs=$1 name=$2; shift 2
    local best_s=999999 best_rss=0
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %M" -o $scratch/time taskset -c 1 "$@" >/dev/null 2>&1 || true
        read -r s rss < $scratch/time
        if awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; best_rss=$rss; fi
    done
    awk -v n="$name" -v s="$best_s" -v r="$best_rss" -v b="$bytes" \
        'BEGIN{printf "%-10s %7.2f s  %7.1f MB/s  RSS %6.1f MB\n", n, s, b/1e6/s, r/1024}'
    echo "$best_s" > "$scratch/$name"
}

echo "log: $log, $(awk -v b="$bytes" 'BEGIN{printf "%.0f MB", b/1e6}'), $(wc -l < "$log") lines"
measure 3 herd "$herd" logs "$log"
if command -v goaccess >/dev/null; then
    # one run: GoAccess takes minutes on this file
    measure "${GOACCESS_RUNS:-1}" goaccess goaccess "$log" --log-format=COMBINED -o $scratch/goaccess.json
    awk -v h="$(cat $scratch/herd)" -v g="$(cat $scratch/goaccess)" \
        'BEGIN{printf "herd is %.1fx faster than GoAccess\n", g/h}'
else
    echo "goaccess is not installed (apt-get install goaccess): no comparison"
fi
