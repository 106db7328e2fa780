#!/usr/bin/env bash
# `arbor serve` against issue 27's speed targets, over HTTP with curl, in one run:
#   - the sessions page over 10,000 sessions (`/?scope=all`), warm: first byte under 50 ms,
#     the full page under 150 ms;
#   - a search (`/?scope=all&q=...`), warm: under 60 ms (the full answer);
#   - then, as parts of the same run, the session page (bench/serve-session.sh: a 100 MB
#     session's first screen under 300 ms, a 1 GB session's RSS under its size) and the usage
#     page (bench/serve-usage.sh: under 200 ms over the same 10,000 sessions); PARTS=list
#     runs only the sessions page and search.
# each with the server's own watcher (the default: the catalog is vouched for, no
# file is looked at) and without it (`--no-watch`: every request `stat`s the session files).
#
#   ARBOR_BENCH_DIR=/work/bench-data bench/serve.sh     # reuse listing.sh's / mcp.sh's sessions
#   N=1000 TOTAL_MB=1000 RUNS=11 bench/serve.sh         # quicker, smaller
#
# Builds arbor in release mode, generates what is missing under $ARBOR_BENCH_DIR (default
# /tmp/arbor-bench) as bench/listing.sh makes it (listing-N-TOTAL_MBMB/, only read here),
# indexes it into the catalog bench/mcp.sh uses (mcp-catalog-N.db: the same files, the same
# kinds), starts `arbor serve --all` on a free loopback port under `nice -n -20`, and prints
# each figure as the median of RUNS warm requests (after WARM ones), wall (curl's
# time_starttransfer and time_total) beside the server's CPU time per request (user+system of
# all its threads over the RUNS requests, divided by RUNS: /proc's clock ticks are too coarse
# for one request), the load average, and one PASS/FAIL line per target.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
N=${N:-10000}
TOTAL_MB=${TOTAL_MB:-10000}
RUNS=${RUNS:-21}
WARM=${WARM:-3}
QUERY=${QUERY:-refactor lock}
say() { printf '%s\n' "$*" >&2; }

say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
ARBOR="$BIN/arbor"

# --- the sessions (bench/listing.sh's set) and the catalog (bench/mcp.sh's) ----------------
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
PI_CODING_AGENT_DIR=$AGENT "$ARBOR" index --catalog "$CAT" >/dev/null
SESSIONS=$(find "$DIR" -name '*.jsonl' | wc -l)

# --- the server ---------------------------------------------------------------------------
SERVER_PID=
URL=
ERR="$SCRATCH/.serve-bench.err"
stop_server() {
	if [[ -n $SERVER_PID ]]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
trap stop_server EXIT
# start_server FLAGS...: `arbor serve --all FLAGS` on a free port; waits for its listening
# line (and, with its own watcher, for the watcher's first word: a vouched answer).
start_server() {
	: >"$ERR"
	ARBOR_CATALOG=$CAT PI_CODING_AGENT_DIR=$AGENT HOME=$SCRATCH \
		nice -n -20 "$ARBOR" serve --all --addr 127.0.0.1:0 "$@" 2>"$ERR" &
	SERVER_PID=$!
	for _ in $(seq 600); do
		URL=$(sed -n 's/^arbor serve: listening on \(http[^ ]*\)\/$/\1/p' "$ERR")
		[[ -n $URL ]] && break
		sleep 0.1
	done
	[[ -n $URL ]] || { say "arbor serve did not start: $(cat "$ERR")"; exit 1; }
	# The watcher's first refresh is over once an answer no longer looks at the files:
	# ask until two answers in a row are fast, at most 60 s.
	for _ in $(seq 120); do
		t=$(curl -s -o /dev/null -w '%{time_total}' "$URL/?scope=all")
		awk -v t="$t" 'BEGIN{exit !(t < 0.5)}' && break
		sleep 0.5
	done
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
TICK=$(getconf CLK_TCK)
declare -A M
# measure_each KEY PATH...: each PATH requested once, in order (no warm-up); M[KEY.first],
# M[KEY.total] (ms, medians), M[KEY.cpu] (the server's ms per request), M[KEY.bytes] (the last
# answer's).
measure_each() {
	local key=$1 first=() total=() c0 c1 out n=0
	shift
	c0=$(cpu_ticks)
	for path in "$@"; do
		out=$(curl -s -o /dev/null -w '%{http_code} %{time_starttransfer} %{time_total} %{size_download}' "$URL$path")
		read -r code f t bytes <<<"$out"
		[[ $code == 200 ]] || { say "$path: HTTP $code"; exit 1; }
		first+=("$(awk -v x="$f" 'BEGIN{print x*1000}')")
		total+=("$(awk -v x="$t" 'BEGIN{print x*1000}')")
		n=$((n + 1))
	done
	c1=$(cpu_ticks)
	M[$key.first]=$(median "${first[@]}")
	M[$key.total]=$(median "${total[@]}")
	M[$key.cpu]=$(awk -v a="$c0" -v b="$c1" -v t="$TICK" -v n="$n" 'BEGIN{printf "%.1f", (b-a)*1000/t/n}')
	M[$key.bytes]=$bytes
}
# measure KEY PATH: WARM requests, then RUNS measured ones (measure_each of PATH RUNS times).
measure() {
	local key=$1 path=$2 paths=()
	for ((r = 0; r < WARM; r++)); do curl -s -o /dev/null "$URL$path"; done
	for ((r = 0; r < RUNS; r++)); do paths+=("$path"); done
	measure_each "$key" "${paths[@]}"
}

# --- one function per page ----------------------------------------------------------------
page_sessions() { measure "$1.list" "/?scope=all"; }
page_search() { measure "$1.search" "/?scope=all&q=$(printf '%s' "$QUERY" | sed 's/ /+/g')"; }
# Distinct queries, each asked once (the watcher keeps no earlier answer for them).
NEW_QUERIES=(refactor lock parser session manager cache error test config retry timeout
	index search merge branch fork label token model cost build)
page_search_new() {
	local paths=() q
	for q in "${NEW_QUERIES[@]}"; do paths+=("/?scope=all&q=$q"); done
	measure_each "$1.search_new" "${paths[@]}"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for mode in watch no-watch; do
	say "arbor serve --all ($mode) over $SESSIONS sessions"
	if [[ $mode == watch ]]; then start_server; else start_server --no-watch; fi
	page_sessions "$mode"
	page_search "$mode"
	page_search_new "$mode"
	stop_server
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ---------------------------------------------------------------------------------
echo "arbor serve over $SESSIONS sessions ($(du -sh "$AGENT" | cut -f1)); medians of $RUNS warm requests; load average $LOAD0 before, $LOAD1 after"
printf '%-52s %12s %12s %12s %10s\n' "request" "first byte" "full" "server CPU" "bytes"
row() { printf '%-52s %9s ms %9s ms %9s ms %10s\n' "$1" "${M[$2.first]}" "${M[$2.total]}" "${M[$2.cpu]}" "${M[$2.bytes]}"; }
for mode in watch no-watch; do
	row "sessions page, $mode" "$mode.list"
	row "search \"$QUERY\", $mode" "$mode.search"
	row "${#NEW_QUERIES[@]} new searches (each once), $mode" "$mode.search_new"
done
verdict() { awk -v v="$1" -v t="$2" 'BEGIN{ print (v+0 < t+0) ? "PASS" : "FAIL" }'; }
echo "$(verdict "${M[watch.list.first]}" 50) sessions page first byte under 50 ms (own watcher)"
echo "$(verdict "${M[watch.list.total]}" 150) sessions page in full under 150 ms (own watcher)"
echo "$(verdict "${M[watch.search.total]}" 60) a search under 60 ms (own watcher, the query repeated)"
echo "$(verdict "${M[watch.search_new.total]}" 60) a new search under 60 ms (own watcher, each query once)"
echo "     (--no-watch: first byte ${M[no-watch.list.first]} ms, full ${M[no-watch.list.total]} ms, search ${M[no-watch.search.total]} ms)"

# --- the session page and the usage page: their own scripts, parts of this run ---------------
if [[ ${PARTS:-all} == all ]]; then
	echo
	"$ROOT/bench/serve-session.sh"
	echo
	"$ROOT/bench/serve-usage.sh"
fi
