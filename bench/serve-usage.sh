#!/usr/bin/env bash
# `arbor serve`'s usage page (issue 27's target: under 200 ms over 10,000 sessions, from the
# catalog's totals), in one run:
#   - GET /usage (every project: the totals, four charts, the heatmap), warm: first byte and
#     whole page;
#   - GET /usage/time.json (the day chart's numbers) and /usage?since=30d&by=week, warm;
#   - GET /usage the first time after the server started (the catalog's totals up to date).
#
#   bench/serve-usage.sh                                   # 10,000 sessions (10 GB)
#   ARBOR_BENCH_DIR=/work/bench-data bench/serve-usage.sh  # reuse listing.sh's sessions there
#   N=1000 TOTAL_MB=1000 RUNS=11 bench/serve-usage.sh      # quicker
#
# Builds arbor in release mode, generates what is missing under $ARBOR_BENCH_DIR (default
# /tmp/arbor-bench) as bench/listing.sh makes it (listing-N-TOTAL_MBMB/, only read here),
# brings a catalog of its own ($CATALOG, default $ARBOR_BENCH_DIR/serve-usage-catalog-N.db) up
# to date (the listing, and the spends `arbor stats` keeps: the first time reads every file),
# starts `arbor serve --all --no-watch` on a free loopback port with an empty HOME (no other
# agents' sessions), and prints each figure as the median of RUNS requests: wall (first byte
# and whole answer) and the server's CPU time (user+system of all its threads, from
# /proc/PID/task/*/schedstat), the load average, and one PASS/FAIL line for the target.
# Twice: without a watcher (each session file looked at: a `stat` each), then with a live
# `arbor index --watch` of the catalog vouching for it (the catalog's stat taken, no `stat`
# per file: what `arbor serve` has from its own watcher unless `--no-watch`). WATCH=0 or
# WATCH=1 runs one of the two only.
# The lead folds this into bench/serve.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
N=${N:-10000}
TOTAL_MB=${TOTAL_MB:-10000}
RUNS=${RUNS:-21}
CATALOG=${CATALOG:-$SCRATCH/serve-usage-catalog-$N.db}
mkdir -p "$SCRATCH"
say() { printf '%s\n' "$*" >&2; }

say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli)
BIN="$ROOT/target/release"
ARBOR="$BIN/arbor"

DIR="$SCRATCH/listing-$N-${TOTAL_MB}MB/sessions/--home-dev-projects-arbor--"
# Sessions already there are used as they are (never deleted: a set made by another script
# may lack the marker).
if [[ ! -f $DIR/../.generated && -z $(ls -A "$DIR" 2>/dev/null) ]]; then
	mkdir -p "$DIR"
	say "generating $N sessions, about $TOTAL_MB MB, in $DIR"
	(cd "$ROOT" && cargo build --release -q -p arbor-bench)
	"$ROOT/bench/gen-sessions.sh" "$DIR" "$N" "$TOTAL_MB" "$BIN"
	touch "$DIR/../.generated"
fi
AGENT=$(cd "$DIR/../.." && pwd)
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
export HOME=$HOME_DIR PI_CODING_AGENT_DIR=$AGENT ARBOR_CATALOG=$CATALOG
say "bringing $CATALOG up to date (the first time reads every file)"
t=$(date +%s)
"$ARBOR" index >/dev/null
"$ARBOR" stats --all --json >/dev/null
say "  $(($(date +%s) - t)) s"
SESSIONS=$(find "$DIR" -name '*.jsonl' | wc -l)

python3 - "$ARBOR" "$RUNS" "$SESSIONS" "${WATCH:-both}" <<'PYEOF'
import http.client, os, statistics, subprocess, sys, time

arbor, runs, sessions, watch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def cpu_ns(pid):
    """CPU time of every thread of pid so far (ns): the first field of each schedstat."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total

def start():
    p = subprocess.Popen([arbor, "serve", "--all", "--no-watch", "--addr", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    for line in p.stderr:
        if line.startswith("arbor serve: listening on "):
            url = line.split("listening on ", 1)[1].strip().rstrip("/")
            return p, url.removeprefix("http://")
    sys.exit("arbor serve did not say where it listens")

def get(pid, addr, path):
    c0 = cpu_ns(pid)
    t0 = time.perf_counter()
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.request("GET", path)
    r = conn.getresponse()
    first = time.perf_counter()
    body = r.read()
    t1 = time.perf_counter()
    conn.close()
    if r.status != 200:
        sys.exit(f"GET {path}: {r.status}: {body[:300]!r}")
    return ((first - t0) * 1e3, (t1 - t0) * 1e3, (cpu_ns(pid) - c0) / 1e6, len(body))

def watcher():
    """`arbor index --watch` of the catalog, once it says it watches (an event, not a delay)."""
    w = subprocess.Popen([arbor, "index", "--watch"], stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True)
    for line in w.stderr:
        if "watching" in line:
            return w
    sys.exit("arbor index --watch did not say it watches")

def measure(label):
    load0 = open("/proc/loadavg").read().split()[:3]
    p, addr = start()
    rows = []
    try:
        first = get(p.pid, addr, "/usage")
        rows.append(("GET /usage, first after start", [first]))
        for path in ["/usage", "/usage/time.json", "/usage?since=30d&by=week"]:
            get(p.pid, addr, path)  # warm-up
            rows.append((f"GET {path}, warm", [get(p.pid, addr, path) for _ in range(runs)]))
    finally:
        p.terminate()
        p.wait()
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"arbor serve's usage page over {sessions} sessions, {label}; load average {' '.join(load0)} before, {' '.join(load1)} after")
    print(f"{'request':<44} {'first byte':>11} {'whole':>10} {'CPU':>10} {'bytes':>9}  runs")
    med = statistics.median
    for what, xs in rows:
        print(f"{what:<44} {med(x[0] for x in xs):>8.1f} ms {med(x[1] for x in xs):>7.1f} ms"
              f" {med(x[2] for x in xs):>7.1f} ms {int(med(x[3] for x in xs)):>9}  {len(xs)}")
    page = med(x[1] for x in rows[1][1])
    print(f"{'PASS' if page < 200 else 'FAIL'}: the usage page over {sessions} sessions, {label}, warm, "
          f"{page:.1f} ms (target < 200 ms)")

if watch in ("both", "0"):
    measure("no watcher")
if watch in ("both", "1"):
    w = watcher()
    try:
        measure("a live watcher vouching")
    finally:
        w.terminate()
        w.wait()
PYEOF
