#!/usr/bin/env bash
# `arbor mcp` through a real client (the official MCP Python SDK over stdio, bench/mcp-client.py),
# against issue 25's targets, in one run:
#   - search_sessions over 10,000 sessions, warm: under 50 ms per call;
#   - get_messages and get_context, first page of a 1 GB session: under 300 ms each, and the
#     server's peak RSS under 1.5x what `arbor context` takes on the same file;
#   - server start to first answer (spawn, initialize, one search_sessions) with an up-to-date
#     catalog: under 200 ms.
#
#   bench/mcp.sh                                   # 10,000 sessions (10 GB) and a 1 GB session
#   ARBOR_BENCH_DIR=/work/bench-data bench/mcp.sh  # reuse listing.sh's sessions there
#   N=1000 TOTAL_MB=1000 BIG=200MB RUNS=5 bench/mcp.sh   # quicker, smaller
#
# Builds arbor in release mode, installs the pinned clients (tools/mcp-clients.sh), generates
# what is missing under $ARBOR_BENCH_DIR (default /tmp/arbor-bench) with arbor-gen: the N
# sessions as bench/listing.sh makes them (listing-N-TOTAL_MBMB/, shared with it, only read
# here) and the big session (mcp-big/), indexes them into catalogs of its own, and prints each
# figure as the median of RUNS (wall and the server's CPU time, user+system of all its
# threads), the load average, and one PASS/FAIL line per target. KEEP_BIG=0 deletes the big
# session at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
N=${N:-10000}
TOTAL_MB=${TOTAL_MB:-10000}
BIG=${BIG:-1GB}
RUNS=${RUNS:-11}
KEEP_BIG=${KEEP_BIG:-1}
mkdir -p "$SCRATCH"
say() { printf '%s\n' "$*" >&2; }
[[ -x /usr/bin/time ]] || { apt-get install -y -qq time >/dev/null || { say "mcp.sh: GNU time is needed (apt-get install time)"; exit 1; }; }

say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
ARBOR="$BIN/arbor"
CLIENTS=$("$ROOT/tools/mcp-clients.sh")
PY="$CLIENTS/bin/python"
CLIENT="$ROOT/bench/mcp-client.py"

# --- the 10,000 sessions (bench/listing.sh's set), and a catalog of their own -------------
DIR="$SCRATCH/listing-$N-${TOTAL_MB}MB/sessions/--home-dev-projects-arbor--"
if [[ ! -f $DIR/../.generated ]]; then
	rm -rf "$DIR" && mkdir -p "$DIR"
	say "generating $N sessions, about $TOTAL_MB MB, in $DIR"
	"$ROOT/bench/gen-sessions.sh" "$DIR" "$N" "$TOTAL_MB" "$BIN"
	touch "$DIR/../.generated"
fi
AGENT=$(cd "$DIR/../.." && pwd)
CAT="$SCRATCH/mcp-catalog-$N.db"
say "indexing $AGENT into $CAT (nothing to do when it is up to date)"
t=$(date +%s)
PI_CODING_AGENT_DIR=$AGENT "$ARBOR" index --catalog "$CAT" >/dev/null
say "  $(($(date +%s) - t)) s"
SESSIONS=$(find "$DIR" -name '*.jsonl' | wc -l)

# --- the big session, alone in an agent directory of its own ------------------------------
BIG_AGENT="$SCRATCH/mcp-big"
BIG_DIR="$BIG_AGENT/sessions/--home-dev-big--"
SBIG="$BIG_DIR/2025-11-20T23-33-01-550Z_019aa39d-37c8-70ac-a5bf-6dda1d5af56b.jsonl"
if [[ ! -f $SBIG || ! -f $BIG_DIR/.gen-$BIG ]]; then
	rm -rf "$BIG_DIR" && mkdir -p "$BIG_DIR"
	say "generating a $BIG session in $SBIG"
	"$BIN/arbor-gen" --size "$BIG" --seed 1 "$SBIG"
	touch "$BIG_DIR/.gen-$BIG"
fi
BIG_CAT="$SCRATCH/mcp-catalog-big.db"
PI_CODING_AGENT_DIR=$BIG_AGENT "$ARBOR" index --catalog "$BIG_CAT" >/dev/null
cat "$SBIG" >/dev/null # the page cache holds it for both
BIG_BYTES=$(stat -c %s "$SBIG")

# --- measurements ------------------------------------------------------------------------------
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
OUT="$SCRATCH/.mcp-bench.jsonl"
: >"$OUT"
say "server start to first answer ($RUNS fresh servers, $SESSIONS sessions)"
ARBOR_CATALOG=$CAT PI_CODING_AGENT_DIR=$AGENT "$PY" "$CLIENT" start "$RUNS" xylophone -- "$ARBOR" mcp --all >>"$OUT"
say "search_sessions, warm (2 warm-ups, $RUNS calls per query)"
ARBOR_CATALOG=$CAT PI_CODING_AGENT_DIR=$AGENT "$PY" "$CLIENT" search "$RUNS" 2 \
	xylophone 'refactor lock' '"session manager"' 'Ωmeg*' -- "$ARBOR" mcp --all >>"$OUT"
FRUNS=$(((RUNS + 1) / 2))
say "get_messages and get_context, first page of $BIG_BYTES bytes ($FRUNS fresh servers each)"
ARBOR_CATALOG=$BIG_CAT PI_CODING_AGENT_DIR=$BIG_AGENT "$PY" "$CLIENT" first "$FRUNS" "$SBIG" -- "$ARBOR" mcp --all >>"$OUT"
say "arbor context on the same file (peak RSS, 3 runs)"
CTX_KB=0
CTX_S=()
for _ in 1 2 3; do
	/usr/bin/time -f '%M %e %U %S' -o "$SCRATCH/.time" "$ARBOR" context "$SBIG" >/dev/null
	read -r kb e u s <"$SCRATCH/.time"
	((kb > CTX_KB)) && CTX_KB=$kb
	CTX_S+=("$e/$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')")
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
[[ $KEEP_BIG == 1 ]] || rm -rf "$BIG_AGENT" "$BIG_CAT" "$BIG_CAT"-*

# --- report ---------------------------------------------------------------------------------
"$PY" - "$OUT" "$CTX_KB" "$BIG_BYTES" "$SESSIONS" "$LOAD0" "$LOAD1" "${CTX_S[*]}" <<'PYEOF'
import json, statistics, sys
out, ctx_kb, big_bytes, sessions, load0, load1, ctx_s = sys.argv[1:]
ctx_kb, big_bytes = int(ctx_kb), int(big_bytes)
rows = [json.loads(l) for l in open(out)]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"arbor mcp through the MCP Python SDK over stdio; {sessions} sessions; "
      f"a {big_bytes / 1e9:.2f} GB session; load average {load0} before, {load1} after")
print(f"{'measurement':<58} {'wall median':>12} {'CPU median':>12}  runs")
by = {}
for r in rows:
    by[r["what"]] = r
    if "wall_ms" in r:
        print(f"{r['what']:<58} {med(r['wall_ms']):>9.1f} ms {med(r['cpu_ms']):>9.1f} ms  {len(r['wall_ms'])}"
              + (f"  ({r['chars']} chars)" if "chars" in r else "")
              + (f"  ({r['matches']} matches)" if r.get("matches") is not None else ""))
rss = max(by["server peak RSS after both"]["rss_kb"])
print(f"{'server peak RSS (get_messages or get_context, 1 GB)':<58} {rss / 1024:>9.0f} MB")
print(f"{'arbor context peak RSS, same file':<58} {ctx_kb / 1024:>9.0f} MB  (wall/CPU s: {ctx_s})")
verdict = lambda ok: "PASS" if ok else "FAIL"
searches = [r for w, r in by.items() if w.startswith("search_sessions ")]
# A search that finds nothing where words are known to be said measured nothing.
empty = [r["what"] for r in searches if "xylophone" not in r["what"] and not r.get("matches")]
if empty:
    print(f"FAIL the searches found nothing (the server serves no sessions?): {empty}")
worst = max(med(r["wall_ms"]) for r in searches)
print(f"{verdict(worst < 50)} search_sessions over {sessions} sessions, warm, under 50 ms per call "
      f"(slowest query's median {worst:.1f} ms)")
for tool in ("get_messages", "get_context"):
    m = med(by[f"{tool} first page"]["wall_ms"])
    print(f"{verdict(m < 300)} {tool} first page of a {big_bytes / 1e9:.1f} GB session under 300 ms ({m:.1f} ms)")
print(f"{verdict(rss < 1.5 * ctx_kb)} server RSS on the 1 GB session under 1.5x arbor context's "
      f"({rss / ctx_kb:.2f}x: {rss / 1024:.0f} MB against {ctx_kb / 1024:.0f} MB)")
s = med(by["start to first answer (search_sessions xylophone)"]["wall_ms"])
print(f"{verdict(s < 200)} server start to first answer under 200 ms ({s:.1f} ms)")
PYEOF
