#!/usr/bin/env bash
# Adds omp 18.2.3's convertToLlm answers (NAME.llm.json) to goldens/omp-context/, for the
# sessions tools/goldens/omp-context.sh made (see tools/goldens/omp-context-llm.ts). Needs the
# omp package and bun under /tmp/peers, like omp-context.sh. The test suite
# (crates/arbor-store/tests/omp_goldens.rs) only reads the results.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUN=${BUN:-/tmp/peers/omp/node_modules/.bin/bun}
OUT=goldens/omp-context
export PI_CODING_AGENT_DIR="$PWD/$OUT/agent" TZ=UTC LC_ALL=C
HOME=$(mktemp -d)
export HOME
for f in "$OUT"/*.jsonl; do
	"$BUN" tools/goldens/omp-context-llm.ts "$f" "${f%.jsonl}.llm.json"
done
# omp writes state next to the blobs (custom-session-files/ ...); only blobs/ belongs here.
find "$OUT/agent" -mindepth 1 -maxdepth 1 ! -name blobs -exec rm -rf {} +
du -sh "$OUT"
