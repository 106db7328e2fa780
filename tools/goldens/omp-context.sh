#!/usr/bin/env bash
# Regenerates goldens/omp-context/: omp sessions exercising everything omp 18.2.3's
# buildSessionContext reacts to, and omp's own answers for every entry of each
# (see tools/goldens/omp-context.ts). Needs the omp package and bun under /tmp/peers
# (tools/goldens/make-goldens.sh or ../shared/reference/setup-peers.sh installs them).
# The test suite (crates/arbor-core/tests/omp_context_goldens.rs) only reads the results.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUN=${BUN:-/tmp/peers/omp/node_modules/.bin/bun}
OUT=goldens/omp-context
rm -rf "$OUT"
mkdir -p "$OUT/agent"
export PI_CODING_AGENT_DIR="$PWD/$OUT/agent" TZ=UTC LC_ALL=C
HOME=$(mktemp -d)
export HOME
run() { "$BUN" tools/goldens/omp-context.ts "$@"; }
# Seeds and sizes: every op kind occurs in each (the first 37 ops are one of each kind).
for spec in 1:40 2:60 3:80 4:100 5:120 6:150; do
	seed=${spec%%:*} n=${spec##*:}
	run gen "$OUT/gen-seed$seed-n$n.jsonl" "$seed" "$n"
done
run raw "$OUT/raw-odd-values.jsonl" odd-values
run raw "$OUT/raw-compactions.jsonl" compactions
for f in "$OUT"/*.jsonl; do
	run expect "$f" "${f%.jsonl}.context.json"
done
# omp writes a .png sidecar next to each blob; only the hash-named files are read.
find "$OUT/agent" -type f ! -path "*/blobs/*" -delete
find "$OUT/agent/blobs" -name "*.*" -delete
find "$OUT/agent" -type d -empty -delete
du -sh "$OUT"
