#!/usr/bin/env bash
# Readback goldens (goldens/readback/): sessions written ONLY through `arbor new` / `arbor append` (argv and stdin
# `-` mode) from tools/readback/ops.json, opened by the real pi 0.73.1 (and, for `arbor new --omp`, omp 18.2.3);
# the same op sequence through pi's / omp's own SessionManager gives the *-writer.jsonl files to compare against.
# Fails when a peer rewrites an arbor-written file on open, or when compare.py finds any difference.
# Needs node, bun and the peers under /tmp/peers (tools/goldens/make-goldens.sh installs them).
set -euo pipefail
export TZ=UTC LC_ALL=C
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R=$ROOT/tools/readback
OUT=$ROOT/goldens/readback
ARBOR=$ROOT/target/release/arbor
BUN=${BUN:-/tmp/peers/omp/node_modules/.bin/bun}
(cd "$ROOT" && cargo build --release -q -p arbor-cli)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export HOME=$T/home PI_CODING_AGENT_DIR=$T/agent
mkdir -p "$HOME" "$OUT" "$T"/{pa,pp,oa,op}
rm -f "$OUT"/*

# pi dialect
cp "$R/ops.json" "$OUT/ops.json"
a=$(python3 "$R/make.py" "$ARBOR" "$OUT/ops.json" "$T/pa")
p=$(node "$R/pi-write.mjs" "$OUT/ops.json" "$T/pp")
cp "$a" "$OUT/pi-arbor.jsonl"; cp "$p" "$OUT/pi-writer.jsonl"
node "$ROOT/tools/goldens/pi-oracle.mjs" expect "$OUT/pi-arbor.jsonl" "$OUT/pi-arbor"

# omp dialect
python3 "$R/omp-ops.py" "$OUT/ops.json" > "$OUT/omp-ops.json"
a=$(python3 "$R/make.py" "$ARBOR" "$OUT/omp-ops.json" "$T/oa" --omp)
p=$("$BUN" "$R/omp-write.ts" "$OUT/omp-ops.json" "$T/op")
cp "$a" "$OUT/omp-arbor.jsonl"; cp "$p" "$OUT/omp-writer.jsonl"
"$BUN" "$ROOT/tools/goldens/omp-oracle.ts" expect "$OUT/omp-arbor.jsonl" "$OUT/omp-arbor"

for n in pi-arbor omp-arbor; do
	if [ -e "$OUT/$n.open.jsonl" ] || [ -e "$OUT/$n.error.txt" ]; then echo "$n: the peer rewrote or refused the file" >&2; exit 1; fi
done
python3 "$R/compare.py" "$ARBOR" "$OUT/pi-arbor.jsonl" "$OUT/pi-writer.jsonl" "$OUT/pi-arbor" --pi
python3 "$R/compare.py" "$ARBOR" "$OUT/omp-arbor.jsonl" "$OUT/omp-writer.jsonl" "$OUT/omp-arbor" --omp
du -sh "$OUT"
