#!/usr/bin/env bash
# Issue 26 item 5: cold indexing of about 1 GB of Claude Code sessions against 1 GB of pi
# sessions, both through `arbor ls --all` with no catalog (every source read: for pi its
# listing; for Claude Code the reader, the listing row, the search texts and the spends), and
# pi's cold full indexing (`arbor index`: listing and text index, what Claude Code's read also
# does), and the same for about 1 GB of Codex rollouts (CODEX=0 leaves them out). Prints the
# medians of RUNS runs (wall, user+sys CPU, peak RSS), MB/s of wall and of CPU time, and the
# ratios (the target, issue 26 item 5: Claude Code within 1.5x of pi's MB/s; the comparison is
# with pi's `arbor index`, which also fills the text index, as a foreign read does).
#
#   bench/agents-listing.sh                 # 1,000 files of each, about 1 GB each; 3 runs
#   N=200 TOTAL_MB=200 RUNS=5 bench/agents-listing.sh
#   BASE=/work/main/target/release/arbor bench/agents-listing.sh   # and another build, side by side
#   SEARCH=1 bench/agents-listing.sh        # and a warm search over 10,000 pi + 3,000 others' sessions
#
# BASE: another arbor binary (e.g. main's release build) whose Claude Code and Codex listings
# are measured right after this build's, the same way.
# SEARCH=1: a catalog over one home holding 10,000 pi sessions (200 MB, gen-sessions.sh),
# 2,000 Claude Code files and 1,000 Codex rollouts (30 KB each), built once; then
# `arbor search --all --json fix` and `arbor search --agent claude --all --json "tree module"`
# timed warm (medians of SEARCH_RUNS, default 11; with BASE, both builds alternating).
#
# Data under $ARBOR_BENCH_DIR (default /tmp/arbor-bench-agents), kept for the next run:
# pi's made by bench/gen-sessions.sh (arbor-gen), Claude Code's by bench/gen-claude.py,
# Codex's by bench/gen-codex.py (TOTAL_MB/N MB each, seeds 1..N).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench-agents}
N=${N:-1000}
TOTAL_MB=${TOTAL_MB:-1000}
RUNS=${RUNS:-3}
CODEX=${CODEX:-1}
NICE=${NICE:-0} # e.g. -20 (root) when others compile on the machine
[[ -x /usr/bin/time ]] || { echo "agents-listing.sh: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
[[ ${SKIP_BUILD:-0} == 1 ]] || (cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
PI_HOME="$SCRATCH/pi" CL_HOME="$SCRATCH/claude" CX_HOME="$SCRATCH/codex"
CX_DIR="$CX_HOME/.codex/sessions/2026/09/01"
PI_DIR="$PI_HOME/.pi/agent/sessions/--work-bench--"
CL_DIR="$CL_HOME/.claude/projects/-work-bench"
if [[ ! -d $PI_DIR ]]; then
	bash "$ROOT/bench/gen-sessions.sh" "$PI_DIR" "$N" "$TOTAL_MB" "$BIN"
fi
if [[ ! -d $CL_DIR ]]; then
	mkdir -p "$CL_DIR.tmp"
	MB=$(awk -v t="$TOTAL_MB" -v n="$N" 'BEGIN{printf "%.3f", t/n}')
	seq 1 "$N" | xargs -P "$(nproc)" -I{} sh -c \
		"python3 '$ROOT/bench/gen-claude.py' '$CL_DIR.tmp/'\$(printf '%08d' {})-0000-4000-8000-000000000000.jsonl $MB {}"
	mv "$CL_DIR.tmp" "$CL_DIR"
fi
if [[ $CODEX == 1 && ! -d $CX_DIR ]]; then
	mkdir -p "$CX_DIR.tmp"
	MB=$(awk -v t="$TOTAL_MB" -v n="$N" 'BEGIN{printf "%.3f", t/n}')
	seq 1 "$N" | xargs -P "$(nproc)" -I{} sh -c \
		"python3 '$ROOT/bench/gen-codex.py' '$CX_DIR.tmp/'rollout-2026-09-01T00-00-00-\$(printf '%08d' {})-0000-7000-8000-000000000000.jsonl $MB {}"
	mv "$CX_DIR.tmp" "$CX_DIR"
fi
ARBOR=${ARBOR:-$BIN/arbor} # the binary measured (measure_with sets it for BASE)
# One timed run: prints "wall cpu rss_kb".
run() { # HOME CATALOG ARGS...
	local home=$1 cat=$2; shift 2
	rm -f "$cat" "$cat-wal" "$cat-shm" "$cat.stamp"
	HOME=$home ARBOR_CATALOG=$cat XDG_DATA_HOME=$home/.local/share \
		/usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time.txt" \
		nice -n "$NICE" "$ARBOR" "$@" >/dev/null 2>"$SCRATCH/stderr.txt" || { cat "$SCRATCH/stderr.txt" >&2; exit 1; }
	awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$SCRATCH/time.txt"
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
measure() { # LABEL BYTES HOME ARGS...
	local label=$1 bytes=$2 home=$3; shift 3
	local walls=() cpus=() rss=()
	for _ in $(seq 1 "$RUNS"); do
		read -r w c m < <(run "$home" "$SCRATCH/catalog.db" "$@")
		walls+=("$w") cpus+=("$c") rss+=("$m")
	done
	local w c m
	w=$(printf '%s\n' "${walls[@]}" | median)
	c=$(printf '%s\n' "${cpus[@]}" | median)
	m=$(printf '%s\n' "${rss[@]}" | median)
	local mbs mbc
	mbs=$(awk -v b="$bytes" -v w="$w" 'BEGIN{printf "%.0f", b/1e6/w}')
	mbc=$(awk -v b="$bytes" -v c="$c" 'BEGIN{printf "%.0f", b/1e6/c}')
	printf '%-46s wall %6.2f s  cpu %6.2f s  peak %5d MB  %5s MB/s (wall) %5s MB/s (cpu)  runs: %s / cpu %s\n' \
		"$label" "$w" "$c" "$((m / 1024))" "$mbs" "$mbc" "${walls[*]}" "${cpus[*]}" >&2
	echo "$mbs $mbc"
}
PI_BYTES=$(du -sb "$PI_DIR" | cut -f1)
CL_BYTES=$(du -sb "$CL_DIR" | cut -f1)
CX_BYTES=0
[[ $CODEX == 1 ]] && CX_BYTES=$(du -sb "$CX_DIR" | cut -f1)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $N files each; pi $((PI_BYTES / 1000000)) MB, Claude Code $((CL_BYTES / 1000000)) MB, Codex $((CX_BYTES / 1000000)) MB; medians of $RUNS" >&2
read -r pi_ls pi_ls_c < <(measure "pi: arbor ls --all, no catalog" "$PI_BYTES" "$PI_HOME" ls --all)
read -r pi_ix pi_ix_c < <(measure "pi: arbor index, no catalog (listing + texts)" "$PI_BYTES" "$PI_HOME" index)
read -r cl_ls cl_ls_c < <(measure "claude: arbor ls --all, no catalog" "$CL_BYTES" "$CL_HOME" ls --all)
verdict() { # NAME MBS_WALL MBS_CPU
	awk -v n="$1" -v w="$2" -v c="$3" -v a="$pi_ls" -v ac="$pi_ls_c" -v i="$pi_ix" -v ic="$pi_ix_c" 'BEGIN{
		printf "%s: pi index / %s ls (MB/s): wall %.2f, cpu %.2f (target: at most 1.5 -> %s); pi ls / %s ls: wall %.2f, cpu %.2f\n",
			n, n, i/w, ic/c, (i/w <= 1.5 ? "PASS" : "FAIL"), n, a/w, ac/c
	}' >&2
}
verdict claude "$cl_ls" "$cl_ls_c"
if [[ $CODEX == 1 ]]; then
	read -r cx_ls cx_ls_c < <(measure "codex: arbor ls --all, no catalog" "$CX_BYTES" "$CX_HOME" ls --all)
	verdict codex "$cx_ls" "$cx_ls_c"
fi
if [[ -n ${BASE:-} ]]; then
	ARBOR=$BASE measure "claude: arbor ls --all, BASE" "$CL_BYTES" "$CL_HOME" ls --all >/dev/null
	[[ $CODEX == 1 ]] && ARBOR=$BASE measure "codex: arbor ls --all, BASE" "$CX_BYTES" "$CX_HOME" ls --all >/dev/null
fi
if [[ ${SEARCH:-0} == 1 ]]; then
	SH="$SCRATCH/search"
	if [[ ! -d $SH/done ]]; then
		bash "$ROOT/bench/gen-sessions.sh" "$SH/.pi/agent/sessions/--work-bench--" 10000 200 "$BIN"
		mkdir -p "$SH/.claude/projects/-work-bench" "$SH/.codex/sessions/2026/09/01"
		seq 1 2000 | xargs -P "$(nproc)" -I{} sh -c \
			"python3 '$ROOT/bench/gen-claude.py' '$SH/.claude/projects/-work-bench/'\$(printf '%08d' {})-0000-4000-8000-000000000000.jsonl 0.03 {} >/dev/null"
		seq 1 1000 | xargs -P "$(nproc)" -I{} sh -c \
			"python3 '$ROOT/bench/gen-codex.py' '$SH/.codex/sessions/2026/09/01/'rollout-2026-09-01T00-00-00-\$(printf '%08d' {})-0000-7000-8000-000000000000.jsonl 0.03 {} >/dev/null"
		mkdir "$SH/done"
	fi
	rm -f "$SH/catalog.db"*
	HOME=$SH ARBOR_CATALOG=$SH/catalog.db XDG_DATA_HOME=$SH/.local/share "$BIN/arbor" index >/dev/null 2>&1
	HOME=$SH ARBOR_CATALOG=$SH/catalog.db XDG_DATA_HOME=$SH/.local/share "$BIN/arbor" ls --all >/dev/null 2>&1
	echo "search over 10,000 pi + 3,000 other agents' sessions, warm catalog, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	timed() { # BINARY LABEL ARGS...
		local b=$1 label=$2; shift 2
		HOME=$SH ARBOR_CATALOG=$SH/catalog.db XDG_DATA_HOME=$SH/.local/share \
			"$BIN/arbor-timeit" -n "${SEARCH_RUNS:-11}" --warmup 1 --ok-status 1 --label "$label" -- \
			nice -n "$NICE" "$b" "$@" >&2 2>/dev/null
	}
	for b in "$BIN/arbor" ${BASE:-}; do
		timed "$b" "$b search --all fix" search --all --json fix
		timed "$b" "$b search --agent claude --all 'tree module'" search --agent claude --all --json "tree module"
	done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
