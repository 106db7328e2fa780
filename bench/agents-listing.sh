#!/usr/bin/env bash
# Issue 26 item 5: cold indexing of about 1 GB of Claude Code sessions against 1 GB of pi
# sessions, both through `arbor ls --all` with no catalog (every source read: for pi its
# listing; for Claude Code the reader, the listing row, the search texts and the spends), and
# pi's cold full indexing (`arbor index`: listing and text index, what Claude Code's read also
# does). Prints the medians of RUNS runs (wall, user+sys CPU, peak RSS) and MB/s, and the ratios.
#
#   bench/agents-listing.sh                 # 1,000 files of each, about 1 GB each; 3 runs
#   N=200 TOTAL_MB=200 RUNS=5 bench/agents-listing.sh
#
# Data under $ARBOR_BENCH_DIR (default /tmp/arbor-bench-agents), kept for the next run:
# pi's made by bench/gen-sessions.sh (arbor-gen), Claude Code's by bench/gen-claude.py
# (TOTAL_MB/N MB each, seeds 1..N).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench-agents}
N=${N:-1000}
TOTAL_MB=${TOTAL_MB:-1000}
RUNS=${RUNS:-3}
[[ -x /usr/bin/time ]] || { echo "agents-listing.sh: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
[[ ${SKIP_BUILD:-0} == 1 ]] || (cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"
PI_HOME="$SCRATCH/pi" CL_HOME="$SCRATCH/claude"
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
# One timed run: prints "wall cpu rss_kb".
run() { # HOME CATALOG ARGS...
	local home=$1 cat=$2; shift 2
	rm -f "$cat" "$cat-wal" "$cat-shm" "$cat.stamp"
	HOME=$home ARBOR_CATALOG=$cat XDG_DATA_HOME=$home/.local/share \
		/usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time.txt" \
		nice "$BIN/arbor" "$@" >/dev/null 2>"$SCRATCH/stderr.txt" || { cat "$SCRATCH/stderr.txt" >&2; exit 1; }
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
	local mbs
	mbs=$(awk -v b="$bytes" -v w="$w" 'BEGIN{printf "%.0f", b/1e6/w}')
	printf '%-44s wall %6.2f s  cpu %6.2f s  peak %5d MB  %5s MB/s (wall)  runs: %s\n' \
		"$label" "$w" "$c" "$((m / 1024))" "$mbs" "${walls[*]}" >&2
	echo "$mbs"
}
PI_BYTES=$(du -sb "$PI_DIR" | cut -f1)
CL_BYTES=$(du -sb "$CL_DIR" | cut -f1)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $N files each; pi $((PI_BYTES / 1000000)) MB, Claude Code $((CL_BYTES / 1000000)) MB; medians of $RUNS" >&2
pi_ls=$(measure "pi: arbor ls --all, no catalog" "$PI_BYTES" "$PI_HOME" ls --all)
pi_ix=$(measure "pi: arbor index, no catalog (listing + texts)" "$PI_BYTES" "$PI_HOME" index)
cl_ls=$(measure "claude: arbor ls --all, no catalog" "$CL_BYTES" "$CL_HOME" ls --all)
awk -v a="$pi_ls" -v b="$cl_ls" -v c="$pi_ix" 'BEGIN{
	printf "ratio pi ls / claude ls (MB/s): %.2f; pi index / claude ls: %.2f; target: at most 1.5 -> %s\n", a/b, c/b, (a/b <= 1.5 ? "PASS" : "FAIL")
}' >&2
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
