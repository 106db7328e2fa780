#!/usr/bin/env bash
# The browser's speed (issue 14's targets), measured without a terminal by
# `arbor browse --measure QUERY --measure-tree SESSION` (ratatui's test backend, 200x50):
#   - first frame of the picker from process start, over N sessions (default 10,000, about
#     TOTAL_MB = 10,000 MB), the catalog up to date;
#   - each keystroke of a query: the fuzzy filter alone, and with the full-text search (p95);
#   - opening the tree of a 100 MB session; a page of scrolling and a fold, in trees of about
#     100, 15,000 and 100,000 entries (p95);
#   - the memory the process holds (RssAnon) and its peak RSS (which counts the mapped session
#     and catalog pages).
#
#   bench/browse.sh                               # 10,000 sessions, ~10 GB (generated once)
#   N=1000 TOTAL_MB=1000 RUNS=3 bench/browse.sh   # quicker
#
# Sessions are made by arbor-gen (deterministic) under $ARBOR_BENCH_DIR (default
# /tmp/arbor-bench) and kept for the next run. Medians of RUNS runs; one PASS/FAIL line per
# target.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
N=${N:-10000}
TOTAL_MB=${TOTAL_MB:-10000}
RUNS=${RUNS:-5}
QUERY=${QUERY:-"refactor the parser"}
say() { printf '%s\n' "$*" >&2; }
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
AGENT="$SCRATCH/browse-$N-${TOTAL_MB}MB"
DIR="$AGENT/sessions/--home-dev-projects-arbor--"
if [[ ! -f $AGENT/.generated ]]; then
	rm -rf "$AGENT" && mkdir -p "$DIR"
	say "generating $N sessions, about $TOTAL_MB MB"
	"$ROOT/bench/gen-sessions.sh" "$DIR" "$N" "$TOTAL_MB" "$BIN"
	touch "$AGENT/.generated"
fi
TREES="$SCRATCH/browse-trees"
mkdir -p "$TREES"
[[ -f $TREES/small.jsonl ]] || "$BIN/arbor-gen" --size 40KB --seed 7 "$TREES/small.jsonl" >/dev/null
[[ -f $TREES/100mb.jsonl ]] || "$BIN/arbor-gen" --size 100MB --seed 8 "$TREES/100mb.jsonl" >/dev/null
[[ -f $TREES/large.jsonl ]] || "$BIN/arbor-gen" --size 660MB --seed 9 "$TREES/large.jsonl" >/dev/null
CAT="$SCRATCH/browse-catalog-$N.db"
say "bringing the catalog up to date ($(du -sh "$AGENT" | cut -f1))"
t0=$(date +%s.%N)
"$BIN/arbor" index --agent-dir "$AGENT" --catalog "$CAT" >/dev/null
say "  index: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
cat "$DIR"/*.jsonl "$TREES"/*.jsonl >/dev/null # page cache
measure() { "$BIN/arbor" browse --agent-dir "$AGENT" --catalog "$CAT" --measure "$QUERY" ${1:+--measure-tree "$1"}; }
field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
declare -A M
for tree in small 100mb large; do
	runs=()
	for ((r = 0; r < RUNS; r++)); do runs+=("$(measure "$TREES/$tree.jsonl")"); done
	for k in firstFrameMs p95FuzzyMs p95FullTextMs treeOpenMs p95PageMs p95FoldMs peakRssKb anonRssKb treeEntries sessions; do
		vals=()
		for j in "${runs[@]}"; do vals+=("$(field "$j" "$k")"); done
		M[$tree.$k]=$(median "${vals[@]}")
	done
done
echo "browser over ${M[100mb.sessions]} sessions ($(du -sh "$AGENT" | cut -f1)), query \"$QUERY\", medians of $RUNS runs"
printf '%-58s %10s\n' "first frame of the picker, from process start" "${M[100mb.firstFrameMs]} ms"
printf '%-58s %10s\n' "keystroke, fuzzy filter (p95)" "${M[100mb.p95FuzzyMs]} ms"
printf '%-58s %10s\n' "keystroke, fuzzy + full-text search (p95)" "${M[100mb.p95FullTextMs]} ms"
for tree in small 100mb large; do
	printf '%-58s %10s\n' "tree of ${M[$tree.treeEntries]} entries: open + first frame" "${M[$tree.treeOpenMs]} ms"
	printf '%-58s %10s\n' "  page down + frame (p95)" "${M[$tree.p95PageMs]} ms"
	printf '%-58s %10s\n' "  fold / unfold + frame (p95)" "${M[$tree.p95FoldMs]} ms"
	printf '%-58s %10s\n' "  memory held (RssAnon; peak RSS with mapped files)" "$((${M[$tree.anonRssKb]%.*} / 1024)) MB ($((${M[$tree.peakRssKb]%.*} / 1024)) MB)"
done
verdict() { awk -v v="$1" -v t="$2" 'BEGIN{ print (v+0 <= t+0) ? "PASS" : "FAIL" }'; }
echo "$(verdict "${M[100mb.firstFrameMs]}" 100) first frame under 100 ms"
echo "$(verdict "${M[100mb.p95FuzzyMs]}" 16) fuzzy results under 16 ms (p95)"
echo "$(verdict "${M[100mb.p95FullTextMs]}" 50) full-text results under 50 ms (p95)"
echo "$(verdict "${M[100mb.treeOpenMs]}" 150) tree of a 100 MB session under 150 ms"
echo "$(verdict "${M[large.p95PageMs]}" "$(awk -v s="${M[small.p95PageMs]}" 'BEGIN{print s*3+1}')") scrolling in the largest tree within 3x (+1 ms) of the smallest"
echo "$(verdict "${M[large.p95FoldMs]}" "$(awk -v s="${M[small.p95FoldMs]}" 'BEGIN{print s*3+1}')") folding in the largest tree within 3x (+1 ms) of the smallest"
