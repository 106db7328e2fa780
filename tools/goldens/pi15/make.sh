#!/usr/bin/env bash
# Regenerates goldens/pi15/: sessions using what pi 1.5 added (written by the real pi 1.5.2,
# tools/goldens/pi15/gen.mjs), hand-made edge files (tools/goldens/pi15/edges/), and pi
# 1.5.2's answers for every entry of each (context, convertToLlm, tree, meta) through the same
# oracle as goldens/pi (tools/goldens/pi-oracle.mjs with PI_PKG pointing at pi 1.5.2).
# Needs node >= 20 and the registry; arbor's tests never run this.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
G=$ROOT/goldens/pi15
export TZ=UTC LC_ALL=C
SHIM=$(bash "${SETUP:-$ROOT/../shared/reference/setup-pi-current.sh}" | tail -1)
export PI15_SHIM=$SHIM PI_PKG=$SHIM PI_LABEL=1.5.2
rm -rf "$G" && mkdir -p "$G"
node "$ROOT/tools/goldens/pi15/gen.mjs" "$G"
cp "$ROOT"/tools/goldens/pi15/edges/*.jsonl "$G/"
node "$ROOT/tools/goldens/pi15/exact.mjs" "$G"   # issue 22's hand-made inputs (exact-*)
for f in "$G"/*.jsonl; do
	node "$ROOT/tools/goldens/pi-oracle.mjs" expect "$f" "${f%.jsonl}" --sample 1000
done
echo "goldens/pi15: $(ls "$G"/*.jsonl | wc -l) sessions"
# node's own sort and date parser (issue 22: classes 1 and 2).
node "$ROOT/tools/goldens/v8sort/make.mjs" "$ROOT/goldens/v8sort.json"
node "$ROOT/tools/goldens/v8date/make.mjs" "$ROOT/goldens/v8date.json"
