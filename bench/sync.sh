#!/usr/bin/env bash
# Sync and PostgreSQL: arbor's sessions in a real PostgreSQL server, in one run.
#
#   bench/sync.sh                          # 1,000 sessions, about 1 GB, and one 100 MB session
#   N=200 TOTAL_MB=200 BIG=20MB RUNS=3 bench/sync.sh     # quicker
#
# Builds arbor in release mode, generates the sessions with arbor-gen (deterministic, the
# same sizes as bench/listing.sh: 0.25x to 1.75x the mean, seeds 1..N, in one project
# directory as pi lays them out) and one large session, then runs arbor-syncbench, which
# starts a throwaway PostgreSQL (arbor-testkit: temporary directory, Unix socket; apt
# package postgresql) with fsync and synchronous_commit on, and prints:
#   - full `arbor sync push` of the N sessions into an empty database (median of RUNS, MB/s);
#   - `arbor sync push` after one turn is appended to one session;
#   - `arbor sync pull` of everything into an empty agent directory (median of RUNS, each into
#     a new directory), compared byte for byte;
# each with the CPU time (user + system) of arbor beside the wall time (the machine is shared);
#   - one append through SessionManager on the PostgreSQL store (median and p95 of 300);
#   - opening the large session from PostgreSQL against opening its file (median of RUNS);
# with one PASS/FAIL line per target of issue 16. Everything goes under $ARBOR_BENCH_DIR
# (default /tmp/arbor-bench); the generated sessions are kept for the next run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${ARBOR_BENCH_DIR:-/tmp/arbor-bench}
N=${N:-1000}
TOTAL_MB=${TOTAL_MB:-1000}
BIG=${BIG:-100MB}
RUNS=${RUNS:-5}
mkdir -p "$SCRATCH"
say() { printf '%s\n' "$*" >&2; }
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || {
	say "sync.sh: PostgreSQL's server programs are needed: apt-get install postgresql"
	exit 1
}

say "building arbor (release)"
(cd "$ROOT" && cargo build --release -q -p arbor-cli -p arbor-bench)
BIN="$ROOT/target/release"

AGENT="$SCRATCH/sync-$N-${TOTAL_MB}MB"
DIR="$AGENT/sessions/--home-dev-projects-arbor--"
STAMP="$AGENT/.generated"
if [[ ! -f $STAMP ]]; then
	rm -rf "$AGENT" && mkdir -p "$DIR"
	say "generating $N sessions, about $TOTAL_MB MB, in $DIR"
	"$ROOT/bench/gen-sessions.sh" "$DIR" "$N" "$TOTAL_MB" "$BIN"
	touch "$STAMP"
fi

BIGFILE="$SCRATCH/sync-big-$BIG.jsonl"
if [[ ! -f $BIGFILE ]]; then
	say "generating the $BIG session"
	"$BIN/arbor-gen" --size "$BIG" --seed 7 "$BIGFILE.tmp" && mv "$BIGFILE.tmp" "$BIGFILE"
fi
cat "$DIR"/*.jsonl "$BIGFILE" >/dev/null # the page cache holds them

echo "machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%dT%H:%MZ)"
# ARBOR=/path/to/another/arbor times that binary (e.g. one built from an earlier commit).
"$BIN/arbor-syncbench" --agent "$AGENT" --big "$BIGFILE" --arbor "${ARBOR:-$BIN/arbor}" --runs "$RUNS"
