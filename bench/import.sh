#!/usr/bin/env bash
# Import speed (issue 26: a 100 MB Claude Code session in under 2 s, release build).
#
#   bench/import.sh                 # 100 MB, medians of 5 runs
#   SIZE_MB=20 RUNS=3 bench/import.sh
#
# Generates one Claude Code session (bench/gen-claude.py, deterministic), builds arbor in release
# mode (without PostgreSQL), and times `arbor import claude FILE` into a fresh private HOME each
# run (the first import: reading, converting and writing the whole pi session). Prints wall and
# CPU (user+sys) medians, the load average, peak memory, and PASS/FAIL against 2 s.
# Everything goes under $ARBOR_BENCH_DIR (default /tmp/arbor-bench-import), removed at the end
# unless KEEP=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench-import}
SIZE_MB=${SIZE_MB:-100}
RUNS=${RUNS:-5}
mkdir -p "$SCRATCH"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$SCRATCH"' EXIT
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
(cd "$ROOT" && cargo build --release -q -p arbor-cli --no-default-features)
ARBOR=$ROOT/target/release/arbor
src=$SCRATCH/claude/projects/-work-bench/bench-session.jsonl
mkdir -p "$(dirname "$src")"
[[ -f $src ]] || python3 "$ROOT/bench/gen-claude.py" "$src" "$SIZE_MB" 1 >/dev/null
bytes=$(stat -c %s "$src")
echo "source: $src ($((bytes / 1048576)) MB, $(wc -l <"$src") lines)"
walls=() cpus=()
for i in $(seq "$RUNS"); do
	home=$SCRATCH/home-$i
	rm -rf "$home" && mkdir -p "$home"
	/usr/bin/time -f '%e %U %S %M' -o "$SCRATCH/t" env HOME="$home" "$ARBOR" import claude "$src" >"$SCRATCH/out" 2>"$SCRATCH/err"
	read -r wall user sys rss <"$SCRATCH/t"
	walls+=("$wall") cpus+=("$(echo "$user + $sys" | bc)")
	echo "run $i: wall ${wall}s, cpu $(echo "$user + $sys" | bc)s, peak ${rss} KB; $(cat "$SCRATCH/out")"
	rm -rf "$home"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mw=$(median "${walls[@]}") mc=$(median "${cpus[@]}")
echo "median: wall ${mw}s, cpu ${mc}s (user+sys); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if (($(echo "$mw < 2" | bc))); then echo "PASS import of $SIZE_MB MB < 2 s"; else echo "FAIL import of $SIZE_MB MB >= 2 s"; fi
