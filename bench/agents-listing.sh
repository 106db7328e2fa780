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
# One timed run: prints "wall cpu rss_kb".
run() { # HOME CATALOG ARGS...
	local home=$1 cat=$2; shift 2
	rm -f "$cat" "$cat-wal" "$cat-shm" "$cat.stamp"
	HOME=$home ARBOR_CATALOG=$cat XDG_DATA_HOME=$home/.local/share \
		/usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time.txt" \
		nice -n "$NICE" "$BIN/arbor" "$@" >/dev/null 2>"$SCRATCH/stderr.txt" || { cat "$SCRATCH/stderr.txt" >&2; exit 1; }
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
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
