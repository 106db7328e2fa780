#!/usr/bin/env bash
# The whole benchmark suite in one run, compared with the previous run of the suite.
#
#   bench/suite.sh                        # context/tree/ls/append vs pi (100 MB), listing and
#                                         # search (1,000 sessions, 1 GB), sync push/pull (PG)
#   QUICK=1 bench/suite.sh                # smaller: 200 sessions, 200 MB, 20 MB big session
#                                         # (and for arbor mcp: 1,000 sessions, a 200 MB session)
#   SUMMARY_OF=DIR bench/suite.sh         # only compare the run kept in DIR with the one before
#
# Runs bench/compare.sh (arbor against the real pi on a 100 MB session: context, tree, show,
# ls, append with each durability, the live context), bench/listing.sh (listing, indexing,
# searches, with and without a live watcher), bench/sync.sh (push and pull through a real
# PostgreSQL) and bench/mcp.sh (`arbor mcp` through the MCP Python SDK: search_sessions over
# 10,000 sessions, the first page of a 1 GB session, start to first answer). Each script installs what it needs and prints its own table and one PASS/FAIL
# line per target; this one keeps every script's whole output under
# $ARBOR_BENCH_DIR/suite/<UTC time>/ and prints, target by target, this run's verdict and
# figure beside the previous run's, so that a regression shows as a changed line. The
# machine is shared and noisy: read a slower figure against the load average printed with it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
RUNS=${RUNS:-5}
OUT="$SCRATCH/suite/$(date -u +%Y%m%dT%H%M%SZ)"
PREV=$(ls -d "$SCRATCH"/suite/*/ 2>/dev/null | sort | tail -n 1 || true)

if [[ ${QUICK:-0} == 1 ]]; then
	LIST_ENV=(N=200 TOTAL_MB=200)
	SYNC_ENV=(N=200 TOTAL_MB=200 BIG=20MB)
	MCP_ENV=(N=1000 TOTAL_MB=1000 BIG=200MB)
else
	LIST_ENV=(N=1000 TOTAL_MB=1000)
	SYNC_ENV=(N=1000 TOTAL_MB=200)
	MCP_ENV=(N=10000 TOTAL_MB=10000 BIG=1GB)
fi

run() {
	local name=$1
	shift
	echo "== $name: $* (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	local start=$SECONDS
	if env "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"; then
		echo "   done in $((SECONDS - start)) s" >&2
	else
		echo "   FAILED after $((SECONDS - start)) s (exit $?): see $OUT/$name.err" >&2
		echo "FAIL $name did not finish (see $OUT/$name.err)" >>"$OUT/$name.txt"
	fi
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/$name.txt"
}

if [[ -n ${SUMMARY_OF:-} ]]; then
	# Only the comparison, of a run already made (SUMMARY_OF=its directory) with the one before it.
	OUT=${SUMMARY_OF%/}
	PREV=$(ls -d "$SCRATCH"/suite/*/ | sort | awk -v o="$OUT/" '$0 < o' | tail -n 1)
else
	mkdir -p "$OUT"
	run compare RUNS="$RUNS" PI_RUNS=3 BIG=0 ARBOR_BENCH_DIR="$SCRATCH" "$ROOT/bench/compare.sh"
	run listing RUNS="$RUNS" "${LIST_ENV[@]}" ARBOR_BENCH_DIR="$SCRATCH" "$ROOT/bench/listing.sh"
	run sync RUNS="$RUNS" "${SYNC_ENV[@]}" ARBOR_BENCH_DIR="$SCRATCH" "$ROOT/bench/sync.sh"
	run mcp RUNS="$RUNS" "${MCP_ENV[@]}" ARBOR_BENCH_DIR="$SCRATCH" "$ROOT/bench/mcp.sh"
fi

# One line per target: "VERDICT target text (figure)" (arbor-syncbench: "... [VERDICT ...]"). The key is the text without figures.
verdicts() { grep -hE '^(PASS|FAIL|SKIP) |\[(PASS|FAIL)' "$1"/compare.txt "$1"/listing.txt "$1"/sync.txt "$1"/mcp.txt 2>/dev/null || true; }
key() { sed -E 's/\([^)]*\)//g; s/[0-9]+(\.[0-9]+)?//g; s/ +/ /g'; }

echo
echo "bench/suite.sh — $(nproc) cores, $(git -C "$ROOT" rev-parse --short HEAD), outputs in $OUT"
[[ -n $PREV ]] && echo "previous run: $PREV"
echo
fails=0
while IFS= read -r line; do
	[[ $line == FAIL* || $line == *"[FAIL"* ]] && fails=$((fails + 1))
	before=""
	if [[ -n $PREV ]]; then
		k=$(key <<<"$line")
		before=$(verdicts "$PREV" | while IFS= read -r p; do if [[ $(key <<<"$p") == "$k" ]]; then echo "$p"; fi; done | head -n 1 || true)
	fi
	echo "now:    $line"
	[[ -n $before ]] && echo "before: $before"
done < <(verdicts "$OUT")
echo
echo "$fails target(s) FAIL; whole outputs: $OUT/{compare,listing,sync,mcp}.txt"
