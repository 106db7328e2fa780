#!/usr/bin/env bash
# arbor against the real pi, on the same generated sessions, in one run.
#
#   bench/compare.sh            # 100 MB and 1 GB sessions, medians of 7 runs (pi: 3)
#   RUNS=5 PI_RUNS=1 BIG=0 bench/compare.sh   # quicker: no 1 GB session
#
# Installs what it needs when missing (node and npm, GNU time: apt; the real pi: npm, into a
# scratch directory, no sudo needed for that), builds arbor in release mode, generates the
# sessions with arbor-gen (deterministic: same bytes on every machine), and prints times,
# peak memory, ratios and one PASS/FAIL line per target of issue 5. Everything it writes goes
# under $ARBOR_BENCH_DIR (default /tmp/arbor-bench); the sessions are kept for the next run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
PI_VERSION=${PI_VERSION:-1.5.2}
RUNS=${RUNS:-7}
PI_RUNS=${PI_RUNS:-3}
SIZE=${SIZE:-100MB}
BIG=${BIG:-1GB}
SEED=${SEED:-1}
mkdir -p "$SCRATCH"

say() { printf '%s\n' "$*" >&2; }

APT_UPDATED=0
apt_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		say "compare.sh: missing $*, and no apt-get to install it"
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

command -v node >/dev/null 2>&1 || apt_install nodejs
command -v npm >/dev/null 2>&1 || apt_install npm
[[ -x /usr/bin/time ]] || apt_install time
command -v cargo >/dev/null 2>&1 || { say "compare.sh: cargo is needed"; exit 1; }

# --- the real pi, from npm, into the scratch directory --------------------------------
# Today's pi (1.x, @earendil-works/pi-coding-agent) by default: its session code through the
# team's setup script (a plain npm install of it fails here, see that script); PI_VERSION=0.x
# times the last @mariozechner/pi-coding-agent instead.
PI_DIR="$SCRATCH/pi-$PI_VERSION"
if [[ $PI_VERSION == 0.* ]]; then
	PKG=@mariozechner/pi-coding-agent
	PI_JS="$PI_DIR/node_modules/$PKG/dist/index.js"
	if [[ ! -f $PI_JS ]]; then
		say "installing $PKG@$PI_VERSION into $PI_DIR"
		mkdir -p "$PI_DIR"
		(cd "$PI_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
			npm install --no-fund --no-audit --loglevel=error "$PKG@$PI_VERSION" >/dev/null)
	fi
else
	PKG=@earendil-works/pi-coding-agent
	SETUP=${PI_SETUP:-$ROOT/../shared/reference/setup-pi-current.sh}
	[[ -f $SETUP ]] || { say "compare.sh: $SETUP (installs pi $PI_VERSION's session code) is missing; set PI_SETUP or PI_VERSION=0.73.1"; exit 1; }
	say "installing $PKG@$PI_VERSION's session code into $PI_DIR"
	PI_JS=$(PI_VERSION=$PI_VERSION bash "$SETUP" "$PI_DIR" | tail -1)
fi
PI_GOT=$(node -e 'console.log(require(process.argv[1]).version)' "$PI_DIR/node_modules/$PKG/package.json")

# --- arbor ------------------------------------------------------------------------------
say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
ARBOR="$BIN/arbor"
TIMEIT="$BIN/arbor-timeit"

# --- sessions (each in its own directory, so `arbor ls --dir` lists just it) ------------
gen() { # NAME SIZE -> path
	local dir="$SCRATCH/sessions/$1" size=$2
	local f="$dir/2025-11-20T23-33-01-550Z_019aa39d-37c8-70ac-a5bf-6dda1d5af56b.jsonl"
	local stamp="$dir/.gen-$size-seed$SEED"
	if [[ ! -f $f || ! -f $stamp ]]; then
		rm -rf "$dir" && mkdir -p "$dir"
		say "generating $size session ($1)"
		"$BIN/arbor-gen" --size "$size" --seed "$SEED" "$f"
		touch "$stamp"
	fi
	echo "$f"
}
S100=$(gen main "$SIZE")
S1=$(gen small 1MB)
SBIG=""
[[ $BIG != 0 ]] && SBIG=$(gen big "$BIG")
bytes() { stat -c %s "$1"; }
# Every tool reads the sessions from the page cache, in the state the kernel caches a file
# that is read from disk: each file is dropped from the cache (`dd iflag=nocache`, no root
# needed) and read back. How the generator happened to write it otherwise decides the
# cache's folio sizes, which change how long mapping it in takes (arbor maps the file; pi
# and `wc -l` copy it with read(2)): 2-3 ms per 100 MB after a cold read, 5-7 ms when the
# cache holds the small folios of many small writes. CACHE=as-written skips this.
warm() {
	local f
	for f in "$@"; do
		if [[ ${CACHE:-reread} != as-written ]]; then
			dd if="$f" iflag=nocache count=0 status=none
		fi
		cat "$f" >/dev/null
	done
}
warm "$S100" "$S1"

# --- measurements -------------------------------------------------------------------------
field() { # LINE KEY -> value
	sed -n "s/.*$2=\([^ ]*\).*/\1/p" <<<"$1"
}
timeit() { # LABEL RUNS WARMUP CMD...
	local label=$1 runs=$2 warmup=$3
	shift 3
	"$TIMEIT" -n "$runs" --warmup "$warmup" --label "$label" -- "$@"
}
peak_kb() { # CMD... -> peak RSS in KB (GNU time), stdout discarded
	/usr/bin/time -f '%M' -o "$SCRATCH/.time" "$@" >/dev/null
	cat "$SCRATCH/.time"
}

say "timing wc -l, arbor and pi on $(bytes "$S100") bytes ($RUNS runs, pi $PI_RUNS)"
WC=$(timeit wc "$RUNS" 1 wc -l "$S100")
CTX=$(timeit arbor_context "$RUNS" 1 "$ARBOR" context "$S100")
TREE=$(timeit arbor_tree "$RUNS" 1 "$ARBOR" tree --json "$S100")
# The human views (what a person reads; output to /dev/null as timeit does): the folded tree,
# every entry, and the whole path of show, all without colour.
TREE_TXT=$(timeit arbor_tree_text "$RUNS" 1 "$ARBOR" tree --color=never "$S100")
TREE_FULL=$(timeit arbor_tree_full "$RUNS" 1 "$ARBOR" tree --full --color=never "$S100")
SHOW=$(timeit arbor_show "$RUNS" 1 "$ARBOR" show --color=never "$S100")
# `arbor ls` reads through a session catalog (SQLite): cold = a new catalog every run (the
# session is read and indexed), warm = the catalog is up to date.
CAT="$SCRATCH/catalog.db"
LS=$(timeit arbor_ls_cold "$RUNS" 1 sh -c 'rm -f "$1"; exec "$2" ls --json --dir "$3" --catalog "$1"' sh "$CAT" "$ARBOR" "$(dirname "$S100")")
LS_WARM=$(timeit arbor_ls_warm "$RUNS" 1 "$ARBOR" ls --json --dir "$(dirname "$S100")" --catalog "$CAT")
CTX_KB=$(peak_kb "$ARBOR" context "$S100")

PI_TOTAL=()
PI_WALL=()
for ((k = 0; k < PI_RUNS; k++)); do
	start=$(date +%s.%N)
	out=$(node "$ROOT/bench/pi-open.mjs" "$PI_JS" "$S100")
	end=$(date +%s.%N)
	PI_TOTAL+=("$(sed -n 's/.*"totalMs":\([0-9.]*\).*/\1/p' <<<"$out")")
	PI_WALL+=("$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", b-a}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
PI_S=$(awk -v ms="$(median "${PI_TOTAL[@]}")" 'BEGIN{printf "%.3f", ms/1000}')
PI_WALL_S=$(median "${PI_WALL[@]}")
PI_KB=$(peak_kb node "$ROOT/bench/pi-open.mjs" "$PI_JS" "$S100")

BIG_KB="" BIG_S="" PI_BIG=""
if [[ -n $SBIG ]]; then
	say "1 GB session: arbor context peak memory, and what pi does with it"
	warm "$SBIG"
	BIG_LINE=$(timeit arbor_context_big 3 0 "$ARBOR" context "$SBIG")
	BIG_S=$(field "$BIG_LINE" median_s)
	BIG_KB=$(peak_kb "$ARBOR" context "$SBIG")
	if timeout 300 node "$ROOT/bench/pi-open.mjs" "$PI_JS" "$SBIG" >"$SCRATCH/.pi-big" 2>&1; then
		PI_BIG="opens it: $(tail -1 "$SCRATCH/.pi-big")"
	else
		why=$(grep -o 'ERR_[A-Z_]*\|heap out of memory\|Invalid string length\|Cannot create a string[^.]*' "$SCRATCH/.pi-big" | head -1 || true)
		PI_BIG="cannot open it (${why:-exit status or timeout})"
	fi
fi

say "appends and the live context in a long-running SessionManager"
LIVE=$(ARBOR_SCRATCH="$SCRATCH" "$BIN/arbor-live" "$S100" "$S1")
lv() { sed -n "s/^$1=//p" <<<"$LIVE"; }

# --- report -------------------------------------------------------------------------------
S100_BYTES=$(bytes "$S100")
ENTRIES=$(($(wc -l <"$S100") - 1))
f3() { awk -v x="$1" 'BEGIN{printf "%.3f", x}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == 0) print "inf"; else printf "%.1f", a/b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN{ exit !(a <= b) }'; }
verdict() { if "$@"; then echo PASS; else echo FAIL; fi; }

WC_S=$(field "$WC" median_s)
CTX_S=$(field "$CTX" median_s)
TREE_S=$(field "$TREE" median_s)
LS_S=$(field "$LS" median_s)
MB() { awk -v k="$1" 'BEGIN{printf "%.0f MB", k*1024/1e6}'; }

echo
echo "arbor vs pi $PI_GOT — $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "session: $S100_BYTES bytes, $ENTRIES entries (arbor-gen --size $SIZE --seed $SEED); page cache: ${CACHE:-reread}"
echo
printf '%-52s %12s %12s\n' "measurement (median)" "time" "peak RSS"
printf '%-52s %12s %12s\n' "wc -l (the floor)" "$(f3 "$WC_S") s" "$(MB "$(field "$WC" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor context (open + context, JSON to stdout)" "$(f3 "$CTX_S") s" "$(MB "$CTX_KB")"
printf '%-52s %12s %12s\n' "pi SessionManager.open + buildSessionContext" "$(f3 "$PI_S") s" "$(MB "$PI_KB")"
printf '%-52s %12s %12s\n' "  (pi's whole node process)" "$(f3 "$PI_WALL_S") s" ""
printf '%-52s %12s %12s\n' "arbor tree --json" "$(f3 "$TREE_S") s" "$(MB "$(field "$TREE" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor tree (folded text)" "$(f3 "$(field "$TREE_TXT" median_s)") s" "$(MB "$(field "$TREE_TXT" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor tree --full" "$(f3 "$(field "$TREE_FULL" median_s)") s" "$(MB "$(field "$TREE_FULL" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor show (whole path, folded)" "$(f3 "$(field "$SHOW" median_s)") s" "$(MB "$(field "$SHOW" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor ls --json, new catalog (reads the session)" "$(f3 "$LS_S") s" "$(MB "$(field "$LS" rss_kb)")"
printf '%-52s %12s %12s\n' "arbor ls --json, catalog up to date" "$(f3 "$(field "$LS_WARM" median_s)") s" "$(MB "$(field "$LS_WARM" rss_kb)")"
if [[ -n $SBIG ]]; then
	printf '%-52s %12s %12s\n' "arbor context, $(bytes "$SBIG") bytes" "$(f3 "$BIG_S") s" "$(MB "$BIG_KB")"
	printf '%-52s %s\n' "pi on the same file" "$PI_BIG"
fi
printf '%-52s %12s\n' "append, durability none" "$(lv append_none_us) µs"
printf '%-52s %12s\n' "append, durability strict" "$(lv append_strict_us) µs"
printf '%-52s %12s\n' "bare write + fdatasync, same length" "$(lv bare_fdatasync_us) µs"
printf '%-52s %12s\n' "live context per turn, 100 MB session" "$(lv live_us) µs"
printf '%-52s %12s\n' "live context per turn, 1 MB session" "$(lv small_live_us) µs"
printf '%-52s %12s\n' "full rebuild per turn, 100 MB session" "$(lv full_us) µs"
echo
SPEEDUP=$(ratio "$PI_S" "$CTX_S")
VS_WC=$(ratio "$CTX_S" "$WC_S")
RSS_X=$(awk -v k="$CTX_KB" -v b="$S100_BYTES" 'BEGIN{printf "%.2f", k*1024/b}')
echo "ratios: arbor is ${SPEEDUP}x faster than pi, ${VS_WC}x wc -l; peak RSS ${RSS_X}x the file"
echo
echo "$(verdict le 50 "$SPEEDUP") open+context at least 50x faster than pi (${SPEEDUP}x)"
echo "$(verdict le "$VS_WC" 4) open+context within 4x of wc -l (${VS_WC}x)"
echo "$(verdict le "$RSS_X" 1.5) open+context peak RSS at most 1.5x the file (${RSS_X}x)"
if [[ -n $SBIG ]]; then
	BIG_X=$(awk -v k="$BIG_KB" -v b="$(bytes "$SBIG")" 'BEGIN{printf "%.2f", k*1024/b}')
	echo "$(verdict le "$BIG_X" 1.5) 1 GB session: open+context peak RSS at most 1.5x the file (${BIG_X}x; pi $PI_BIG)"
else
	echo "SKIP 1 GB session (BIG=0)"
fi
echo "$(verdict le "$(lv append_none_us)" 20) append with durability none at most 20 µs ($(lv append_none_us) µs)"
STRICT_X=$(ratio "$(lv append_strict_us)" "$(lv bare_fdatasync_us)")
STRICT_X2=$(awk -v a="$(lv append_strict_us)" -v b="$(lv bare_fdatasync_us)" 'BEGIN{printf "%.2f", a/b}')
echo "$(verdict le "$STRICT_X2" 1.2) append with durability strict within 1.2x of write+fdatasync (${STRICT_X2}x)"
GROWTH=$(awk -v a="$(lv live_us)" -v b="$(lv small_live_us)" 'BEGIN{printf "%.2f", a/b}')
SAVING=$(ratio "$(lv full_us)" "$(lv live_us)")
echo "$(verdict awk -v g="$GROWTH" -v s="$SAVING" 'BEGIN{exit !(g <= 3 && s >= 10)}') live context costs what changed: 100 MB vs 1 MB session ${GROWTH}x, ${SAVING}x cheaper than a rebuild"
echo "$(verdict le "$TREE_S" 0.2) arbor tree --json under 200 ms ($(f3 "$TREE_S") s)"
LSW_S=$(field "$LS_WARM" median_s)
echo "$(verdict le "$LSW_S" 0.2) arbor ls --json under 200 ms, catalog up to date ($(f3 "$LSW_S") s)"
echo "$(verdict le "$LS_S" 0.2) arbor ls --json under 200 ms, first listing into a new catalog ($(f3 "$LS_S") s; it also builds the full-text index)"
: "$STRICT_X"
