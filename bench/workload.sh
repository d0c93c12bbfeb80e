#!/usr/bin/env bash
# CPU per request of a workload file against `herd run URL` on the same nginx, same request
# count, alternating runs, pinned (nginx on CPU 0, herd on CPU 1): what the workload layer costs.
#
#   bench/workload.sh [REQUESTS] [ROUNDS]      (default 200000 requests, 5 rounds)
#
# Prints the median and the minimum CPU microseconds per request of each variant (the minimum is
# the run least disturbed by anything else on the machine) and their ratios to the plain run. Variants: a static step (cookie jar on, the default), a static step with cookies
# off, a templated step (Zipf id in the path), and templating plus a regex extraction.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
ROUNDS=${2:-5}
CONNS=${CONNS:-50}
HERD=target/release/herd
[ -x "$HERD" ] || cargo build --release -p herd-cli
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path $dir/body;
  server {
    listen 127.0.0.1:$port backlog=4096;
    location ~ ^/items/(\d+)$ { default_type text/html; return 200 '<a href="/items/1\$1">next</a>'; }
    location / { default_type text/plain; return 200 "hello from nginx\n"; }
  }
}
CONF
taskset -c 0 "$NGINX" -c "$dir/nginx.conf" -p "$dir"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
URL="http://127.0.0.1:$port/"

workload() { # name, defaults, steps
  cat > "$dir/$1.yaml" <<YAML
target: http://127.0.0.1:$port
defaults: { $2 }
load: { model: closed, users: $CONNS, iterations: $N, threads: 1 }
data: { item: { zipf: { n: 1000, s: 1.1 } } }
scenarios:
  - name: s
    steps:
$3
YAML
}
workload static "timeout: 10s" "      - get: /"
workload static-nocookies "cookies: false" "      - get: /"
workload templated "cookies: false" "      - get: /items/{{item}}"
workload extracting "cookies: false" "      - get: /items/{{item}}
        extract: { next: { regex: 'href=\"(/items/\\d+)\"' } }"

# CPU microseconds per completed request of one herd process (pinned to CPU 1): perf's
# task-clock when perf works here, else user+sys from /usr/bin/time (10 ms resolution).
cpu() {
  local secs done
  if perf stat -x, -e task-clock -o "$dir/perf" true 2>/dev/null; then
    perf stat -x, -e task-clock -o "$dir/perf" taskset -c 1 "$HERD" run -q "$@" --json "$dir/r.json" >/dev/null
    secs=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$dir/perf")
  else
    /usr/bin/time -f "%U %S" -o "$dir/time" taskset -c 1 "$HERD" run -q "$@" --json "$dir/r.json" >/dev/null
    secs=$(awk '{ print $1 + $2 }' "$dir/time")
  fi
  done=$(python3 -c "import json; r=json.load(open('$dir/r.json')); print(r['totals']['completed'])")
  awk -v s="$secs" -v n="$done" 'BEGIN { printf "%.3f\n", s * 1e6 / n }'
}

variants=(${VARIANTS:-plain static static-nocookies plain-items templated extracting})
declare -A samples
for round in $(seq "$ROUNDS"); do
  for v in "${variants[@]}"; do
    if [ "$v" = plain ]; then
      us=$(cpu -n "$N" -c "$CONNS" -t 1 "$URL")
    elif [ "$v" = plain-items ]; then
      us=$(cpu -n "$N" -c "$CONNS" -t 1 "${URL}items/1")
    else
      us=$(cpu "$dir/$v.yaml")
    fi
    samples[$v]="${samples[$v]:-} $us"
    echo "round $round  $v: $us us/request" >&2
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minimum() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
baseline() { case $1 in plain-items|templated|extracting) echo plain-items ;; *) echo plain ;; esac; }
printf '%-18s %16s %14s %8s %12s\n' variant "median us/req" "min us/req" ratio "vs"
for v in "${variants[@]}"; do
  b=$(baseline "$v")
  m=$(echo "${samples[$v]}" | median)
  lo=$(echo "${samples[$v]}" | minimum)
  bm=$(echo "${samples[$b]:-$m}" | median)
  printf '%-18s %16.3f %14.3f %8.3f %12s\n' "$v" "$m" "$lo" "$(awk -v a="$m" -v b="$bm" 'BEGIN { print a / b }')" "$b"
done
