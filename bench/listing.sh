#!/usr/bin/env bash
# Listing, search and indexing: arbor's session catalog against the real pi, on the same
# directory, in one run.
#
#   bench/listing.sh                      # 1,000 sessions, about 1 GB; medians of 7 runs (pi: 1 run)
#   N=200 TOTAL_MB=200 RUNS=5 bench/listing.sh     # quicker
#   N=10000 TOTAL_MB=10000 SKIP_PI=1 ARBOR_BENCH_DIR=/work/bench-data bench/listing.sh
#                                         # issue 21's scale, without pi (node would take minutes)
#
# Installs what it needs when missing (node and npm, GNU time: apt; the real pi: npm, into a
# scratch directory), builds arbor in release mode, generates the sessions with arbor-gen
# (deterministic: sizes 0.25x to 1.75x the mean, seeds 1..N), and prints pi's
# SessionManager.list time and peak memory (node as pi runs it; PI_NODE_FLAGS adds flags),
# arbor's cold listing (no catalog: every file read for pi's fields, the tree, labels,
# models), the full indexing (no catalog: listing and full-text index in one pass, what the
# first search does), warm listing, warm searches, the refresh after one turn is appended to
# 10 and to 100 sessions, peak memory, the ratios, and one PASS/FAIL line per target of
# issue 4 and of issue 21, item 15 (warm search and `ls --all`, without and with a live
# `arbor index --watch`). Everything goes under $ARBOR_BENCH_DIR (default /tmp/arbor-bench); the
# sessions are kept for the next run (appended turns are cut off again at the end).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
PI_VERSION=${PI_VERSION:-0.73.1}
N=${N:-1000}
TOTAL_MB=${TOTAL_MB:-1000}
RUNS=${RUNS:-7}
PI_RUNS=${PI_RUNS:-1}
mkdir -p "$SCRATCH"
say() { printf '%s\n' "$*" >&2; }

APT_UPDATED=0
apt_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		say "listing.sh: missing $*, and no apt-get to install it"
		exit 1
	fi
	local sudo=""
	[[ $(id -u) -eq 0 ]] || sudo="sudo"
	if [[ $APT_UPDATED -eq 0 ]]; then
		$sudo apt-get update -qq >/dev/null
		APT_UPDATED=1
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
SKIP_PI=${SKIP_PI:-0}
if [[ $SKIP_PI != 1 ]]; then
	command -v node >/dev/null 2>&1 || apt_install nodejs
	command -v npm >/dev/null 2>&1 || apt_install npm
fi
[[ -x /usr/bin/time ]] || apt_install time
command -v cargo >/dev/null 2>&1 || { say "listing.sh: cargo is needed"; exit 1; }

# --- the real pi, from npm, into the scratch directory --------------------------------
PI_DIR="$SCRATCH/pi-$PI_VERSION"
PI_JS="$PI_DIR/node_modules/@mariozechner/pi-coding-agent/dist/index.js"
if [[ $SKIP_PI != 1 && ! -f $PI_JS ]]; then
	say "installing @mariozechner/pi-coding-agent@$PI_VERSION into $PI_DIR"
	mkdir -p "$PI_DIR"
	(cd "$PI_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
		npm install --no-fund --no-audit --loglevel=error "@mariozechner/pi-coding-agent@$PI_VERSION" >/dev/null)
fi
PI_GOT=skipped
[[ $SKIP_PI == 1 ]] || PI_GOT=$(node -e 'console.log(require(process.argv[1]).version)' "$PI_DIR/node_modules/@mariozechner/pi-coding-agent/package.json")

# --- arbor ------------------------------------------------------------------------------
say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
ARBOR="$BIN/arbor"
TIMEIT="$BIN/arbor-timeit"

# --- the sessions: N files in one project directory -----------------------------------
DIR="$SCRATCH/listing-$N-${TOTAL_MB}MB/sessions/--home-dev-projects-arbor--"
STAMP="$DIR/../.generated"
if [[ ! -f $STAMP ]]; then
	rm -rf "$DIR" && mkdir -p "$DIR"
	say "generating $N sessions, about $TOTAL_MB MB, in $DIR"
	"$ROOT/bench/gen-sessions.sh" "$DIR" "$N" "$TOTAL_MB" "$BIN"
	touch "$STAMP"
fi
FILES=("$DIR"/*.jsonl)
BYTES=$(cat "${FILES[@]}" | wc -c)
cat "${FILES[@]}" >/dev/null # the page cache holds them for both tools
CAT="$SCRATCH/listing-catalog.db"

# --- helpers ------------------------------------------------------------------------------
field() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" <<<"$1"; }
timeit() { # LABEL RUNS WARMUP CMD... (exit status 1 is no failure: `arbor search` with no match)
	local label=$1 runs=$2 warmup=$3
	shift 3
	"$TIMEIT" -n "$runs" --warmup "$warmup" --label "$label" --ok-status 1 -- "$@"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.4f", b-a}'; }

# One turn (a user message and an assistant reply) appended to a session, as pi writes it.
append_turn() { # FILE K
	local f=$1 k=$2 leaf u a ts
	leaf=$(tail -n 1 "$f" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
	ts=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
	u=$(printf 'b%07x' "$k")
	a=$(printf 'c%07x' "$k")
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"user","content":[{"type":"text","text":"benchmark turn %s: please re-run the flaky zebra test"}],"timestamp":%s000}}\n{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"Re-ran it: the zebra test passes now (turn %s)."}],"api":"openai-responses","provider":"openai","model":"gpt-5.1-codex","usage":{"input":1200,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":1240,"cost":{"input":0.0015,"output":0.0004,"cacheRead":0,"cacheWrite":0,"total":0.0019}},"stopReason":"stop","timestamp":%s000}}\n' \
		"$u" "$leaf" "$ts" "$k" "$(date +%s)" "$a" "$u" "$ts" "$k" "$(date +%s)" >>"$f"
}
declare -A ORIG_SIZE
for f in "${FILES[@]:0:100}"; do ORIG_SIZE[$f]=$(stat -c %s "$f"); done
restore() { for f in "${!ORIG_SIZE[@]}"; do truncate -s "${ORIG_SIZE[$f]}" "$f"; done; }
trap restore EXIT

# --- pi ---------------------------------------------------------------------------------
say "pi $PI_GOT: SessionManager.list on $N sessions, $BYTES bytes ($PI_RUNS runs)"
PI_MS=(0)
PI_KB=0
PI_N=skipped
[[ $SKIP_PI == 1 ]] && PI_RUNS=0
for ((k = 0; k < PI_RUNS; k++)); do
	# shellcheck disable=SC2086
	out=$(/usr/bin/time -f '%M' -o "$SCRATCH/.time" node ${PI_NODE_FLAGS:-} "$ROOT/bench/pi-list.mjs" "$PI_JS" "$DIR")
	PI_MS+=("$(sed -n 's/.*"listMs":\([0-9.]*\).*/\1/p' <<<"$out")")
	PI_N=$(sed -n 's/.*"sessions":\([0-9]*\).*/\1/p' <<<"$out")
	kb=$(cat "$SCRATCH/.time")
	((kb > PI_KB)) && PI_KB=$kb
done
PI_S=$(awk -v ms="$(median "${PI_MS[@]}")" 'BEGIN{printf "%.3f", ms/1000}')

# --- arbor --------------------------------------------------------------------------------
say "arbor: cold listing (no catalog), $RUNS runs"
COLD=$(timeit cold "$RUNS" 0 sh -c "rm -f '$CAT' '$CAT-wal' '$CAT-shm' '$CAT-verified'; exec '$ARBOR' ls --catalog '$CAT' --json --dir '$DIR'")
AR_N=$("$ARBOR" ls --catalog "$CAT" --json --dir "$DIR" | grep -o '"firstMessage"' | wc -l)
IRUNS=$(((RUNS + 1) / 2))
say "arbor: full indexing (no catalog: listing and full-text index), $IRUNS runs"
INDEX=$(timeit index "$IRUNS" 0 sh -c "rm -f '$CAT' '$CAT-wal' '$CAT-shm' '$CAT-verified'; exec '$ARBOR' search --catalog '$CAT' xylophone --dir '$DIR' --json")
say "arbor: warm listing and searches"
WARM=$(timeit warm "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --json --dir "$DIR")
WARM_TABLE=$(timeit warm_table "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --dir "$DIR")
S_PHRASE=$(timeit search_phrase "$RUNS" 2 "$ARBOR" search --catalog "$CAT" '"session manager"' --dir "$DIR" --json)
S_WORDS=$(timeit search_words "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'refactor lock' --dir "$DIR" --json)
S_PREFIX=$(timeit search_prefix "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'Ωmeg*' --dir "$DIR" --json)
S_RARE=$(timeit search_none "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'xylophone' --dir "$DIR" --json)
CAT_MB=$(awk -v b="$(stat -c %s "$CAT")" 'BEGIN{printf "%.0f", b/1e6}')
# `ls --all` and the searches again, over the agent directory (its one project), without and
# then with a live watcher (`arbor index --watch`, which commands ask instead of a stat per
# file).
AGENT="$DIR/../.."
export PI_CODING_AGENT_DIR=$AGENT
LS_ALL=$(timeit ls_all "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --all --json)
say "arbor: with a live watcher (arbor index --watch)"
"$ARBOR" index --catalog "$CAT" --watch 2>"$SCRATCH/.watch.log" >/dev/null &
WATCHER=$!
until grep -q watching "$SCRATCH/.watch.log"; do
	kill -0 "$WATCHER" 2>/dev/null || { cat "$SCRATCH/.watch.log" >&2; exit 1; }
	sleep 0.1
done
W_LS_ALL=$(timeit w_ls_all "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --all --json)
W_LS_TABLE=$(timeit w_ls_table "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --all)
W_WARM=$(timeit w_warm "$RUNS" 2 "$ARBOR" ls --catalog "$CAT" --json --dir "$DIR")
W_PHRASE=$(timeit w_search_phrase "$RUNS" 2 "$ARBOR" search --catalog "$CAT" '"session manager"' --dir "$DIR" --json)
W_WORDS=$(timeit w_search_words "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'refactor lock' --dir "$DIR" --json)
W_PREFIX=$(timeit w_search_prefix "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'Ωmeg*' --dir "$DIR" --json)
W_RARE=$(timeit w_search_none "$RUNS" 2 "$ARBOR" search --catalog "$CAT" 'xylophone' --dir "$DIR" --json)
kill "$WATCHER"
wait "$WATCHER" 2>/dev/null || true
unset PI_CODING_AGENT_DIR

say "arbor: refresh after one turn appended to 10 and to 100 sessions ($RUNS rounds each)"
R0=() R10=() R100=() A10=0 A100=0
K=0
for ((r = 0; r < RUNS; r++)); do
	t=$(now); "$ARBOR" ls --catalog "$CAT" --json --dir "$DIR" >/dev/null; R0+=("$(since "$t")")
	before=$(cat "${FILES[@]:0:10}" | wc -c)
	for f in "${FILES[@]:0:10}"; do K=$((K + 1)); append_turn "$f" "$K"; done
	A10=$(($(cat "${FILES[@]:0:10}" | wc -c) - before))
	t=$(now); "$ARBOR" ls --catalog "$CAT" --json --dir "$DIR" >/dev/null; R10+=("$(since "$t")")
	before=$(cat "${FILES[@]:0:100}" | wc -c)
	for f in "${FILES[@]:0:100}"; do K=$((K + 1)); append_turn "$f" "$K"; done
	A100=$(($(cat "${FILES[@]:0:100}" | wc -c) - before))
	t=$(now); "$ARBOR" ls --catalog "$CAT" --json --dir "$DIR" >/dev/null; R100+=("$(since "$t")")
done
HITS=$("$ARBOR" search --catalog "$CAT" zebra --dir "$DIR" --json | grep -o '"entryId"' | wc -l)
restore
trap - EXIT

# --- report -------------------------------------------------------------------------------
f3() { awk -v x="$1" 'BEGIN{printf "%.3f", x}'; }
ms() { awk -v x="$1" 'BEGIN{printf "%.1f ms", x*1000}'; }
MB() { awk -v k="$1" 'BEGIN{printf "%.0f MB", k*1024/1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == 0) print "inf"; else printf "%.1f", a/b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN{ exit !(a <= b) }'; }
verdict() { if "$@"; then echo PASS; else echo FAIL; fi; }

COLD_S=$(field "$COLD" median_s)
WARM_S=$(field "$WARM" median_s)
R0_S=$(median "${R0[@]}")
R10_S=$(median "${R10[@]}")
R100_S=$(median "${R100[@]}")
LS_MBS=$(awk -v b="$BYTES" -v s="$COLD_S" 'BEGIN{printf "%.0f", b/1e6/s}')
INDEX_S=$(field "$INDEX" median_s)
MBS=$(awk -v b="$BYTES" -v s="$INDEX_S" 'BEGIN{printf "%.0f", b/1e6/s}')
SPEEDUP=$(ratio "$PI_S" "$COLD_S")
D10=$(awk -v a="$R10_S" -v b="$R0_S" 'BEGIN{printf "%.4f", a-b}')
D100=$(awk -v a="$R100_S" -v b="$R0_S" 'BEGIN{printf "%.4f", a-b}')

echo
echo "arbor catalog vs pi $PI_GOT — $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "$N sessions, $BYTES bytes (arbor-gen, seeds 1..$N); pi lists $PI_N, arbor $AR_N; catalog $CAT_MB MB"
echo
printf '%-58s %12s %10s\n' "measurement (median)" "time" "peak RSS"
printf '%-58s %12s %10s\n' "pi SessionManager.list (node, in-process time)" "$(f3 "$PI_S") s" "$(MB "$PI_KB")"
printf '%-58s %12s %10s\n' "arbor ls --json, cold (no catalog: reads every file)" "$(f3 "$COLD_S") s" "$(MB "$(field "$COLD" rss_kb)")"
printf '%-58s %12s %10s\n' "arbor full indexing, cold (listing + full-text index)" "$(f3 "$INDEX_S") s" "$(MB "$(field "$INDEX" rss_kb)")"
printf '%-58s %12s %10s\n' "arbor ls --json, warm (catalog up to date)" "$(ms "$WARM_S")" "$(MB "$(field "$WARM" rss_kb)")"
printf '%-58s %12s %10s\n' "arbor ls (table), warm" "$(ms "$(field "$WARM_TABLE" median_s)")" ""
printf '%-58s %12s %10s\n' "arbor search '\"session manager\"' (phrase), warm" "$(ms "$(field "$S_PHRASE" median_s)")" "$(MB "$(field "$S_PHRASE" rss_kb)")"
printf '%-58s %12s\n' "arbor search 'refactor lock' (two words), warm" "$(ms "$(field "$S_WORDS" median_s)")"
printf '%-58s %12s\n' "arbor search 'Ωmeg*' (prefix), warm" "$(ms "$(field "$S_PREFIX" median_s)")"
printf '%-58s %12s\n' "arbor search 'xylophone' (no match), warm" "$(ms "$(field "$S_RARE" median_s)")"
wallcpu() { printf '%s (%s CPU)' "$(ms "$(field "$1" median_s)")" "$(ms "$(field "$1" cpu_s)")"; }
printf '%-58s %24s\n' "arbor ls --all --json, warm (wall, CPU)" "$(wallcpu "$LS_ALL")"
printf '%-58s %24s\n' "arbor search 'xylophone' (no match), warm (wall, CPU)" "$(wallcpu "$S_RARE")"
printf '%-58s %24s\n' "with a live watcher: arbor ls --all --json" "$(wallcpu "$W_LS_ALL")"
printf '%-58s %24s\n' "with a live watcher: arbor ls --all (table)" "$(wallcpu "$W_LS_TABLE")"
printf '%-58s %24s\n' "with a live watcher: arbor ls --json --dir" "$(wallcpu "$W_WARM")"
printf '%-58s %24s\n' "with a live watcher: search phrase" "$(wallcpu "$W_PHRASE")"
printf '%-58s %24s\n' "with a live watcher: search words" "$(wallcpu "$W_WORDS")"
printf '%-58s %24s\n' "with a live watcher: search prefix" "$(wallcpu "$W_PREFIX")"
printf '%-58s %24s\n' "with a live watcher: search, no match" "$(wallcpu "$W_RARE")"
printf '%-58s %12s\n' "cold listing throughput (session bytes / time)" "$LS_MBS MB/s"
printf '%-58s %12s\n' "indexing throughput (session bytes / full indexing)" "$MBS MB/s"
printf '%-58s %12s\n' "ls with nothing changed (refresh rounds)" "$(ms "$R0_S")"
printf '%-58s %12s\n' "ls after one turn appended to 10 sessions ($A10 B)" "$(ms "$R10_S")"
printf '%-58s %12s\n' "ls after one turn appended to 100 sessions ($A100 B)" "$(ms "$R100_S")"
printf '%-58s %12s\n' "  refresh cost above no change: 10 / 100 sessions" "$(ms "$D10") / $(ms "$D100")"
echo "  (the appended turns are found: search zebra -> $HITS hits)"
echo
echo "ratios: cold listing ${SPEEDUP}x faster than pi, full indexing $(ratio "$PI_S" "$INDEX_S")x; peak RSS pi $(MB "$PI_KB"), arbor cold listing $(MB "$(field "$COLD" rss_kb)")"
echo
if [[ $SKIP_PI == 1 ]]; then
	echo "SKIP cold listing at least 20x faster than pi's SessionManager.list (SKIP_PI=1)"
else
	echo "$(verdict le 20 "$SPEEDUP") cold listing at least 20x faster than pi's SessionManager.list (${SPEEDUP}x)"
fi
echo "$(verdict le "$WARM_S" 0.1) warm listing under 100 ms ($(ms "$WARM_S"))"
WS=$(printf '%s\n' "$(field "$S_PHRASE" median_s)" "$(field "$S_WORDS" median_s)" "$(field "$S_PREFIX" median_s)" "$(field "$S_RARE" median_s)" | sort -g | tail -1)
echo "$(verdict le "$WS" 0.05) warm search under 50 ms (slowest of four: $(ms "$WS"))"
WWS=$(printf '%s\n' "$(field "$W_PHRASE" median_s)" "$(field "$W_WORDS" median_s)" "$(field "$W_PREFIX" median_s)" "$(field "$W_RARE" median_s)" | sort -g | tail -1)
echo "$(verdict le "$WWS" 0.02) warm search with a live watcher under 20 ms (slowest of four: $(ms "$WWS"))"
echo "$(verdict le "$(field "$W_LS_ALL" median_s)" 0.02) ls --all with a live watcher under 20 ms ($(ms "$(field "$W_LS_ALL" median_s)"))"
echo "$(verdict le "$(field "$W_LS_TABLE" median_s)" 0.02) ls --all (the table) with a live watcher under 20 ms ($(ms "$(field "$W_LS_TABLE" median_s)"))"
echo "$(verdict le 200 "$MBS") indexing at least 200 MB/s of session bytes ($MBS MB/s)"
PROP=$(awk -v a="$D100" -v b="$D10" 'BEGIN{ if (b <= 0) print "inf"; else printf "%.1f", a/b }')
echo "$(verdict awk -v p="$PROP" -v d="$D100" 'BEGIN{exit !(d < 0.5 && (p == "inf" || p <= 15))}') refresh grows with the appended bytes, not the store (100 vs 10 sessions: ${PROP}x the cost, $(ms "$D100") for 100)"
COLD_KB=$(field "$COLD" rss_kb)
INDEX_KB=$(field "$INDEX" rss_kb)
echo "$(verdict le "$INDEX_KB" 262144) peak memory bounded: full indexing of $BYTES bytes in $(MB "$INDEX_KB"), cold listing $(MB "$COLD_KB") (no whole file in memory)"
