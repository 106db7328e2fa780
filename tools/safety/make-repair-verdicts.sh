#!/usr/bin/env bash
# Regenerates goldens/safety/repair-verdicts.json: for every damaged fixture of the golden corpus
# (goldens/pi/edge-*.jsonl), what `arbor check --repair` makes of it (exit status, sha256 of the result)
# and the REAL pi's verdict on the result (tools/safety/pi-verdict.mjs: opens, context builds, file
# left as it was, entry ids, leaf). crates/arbor-cli/tests/repair_goldens.rs replays the repairs and
# checks them against this file, so the test never needs node.
#
# Needs node >= 20 and pi 0.73.1 under /tmp/peers (../shared/reference/setup-peers.sh installs it).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
if [[ ! -f /tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js ]]; then
	bash "$ROOT/../shared/reference/setup-peers.sh"
fi
cargo build -q -p arbor-cli
ARBOR=$ROOT/target/debug/arbor
SCRATCH=$(mktemp -d /tmp/arbor-verdicts.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
export HOME=$SCRATCH/home TZ=UTC
mkdir -p "$HOME"
OUT=$ROOT/goldens/safety/repair-verdicts.json
mkdir -p "$(dirname "$OUT")"
{
	echo "{"
	first=1
	for f in goldens/pi/edge-*.jsonl; do
		case $f in *.open.jsonl) continue ;; esac
		name=$(basename "$f" .jsonl)
		d=$SCRATCH/$name
		mkdir -p "$d"
		cp "$f" "$d/s.jsonl"
		set +e
		"$ARBOR" check --repair --no-blobs "$d/s.jsonl" >/dev/null 2>&1
		code=$?
		set -e
		cp "$d/s.jsonl" "$d/pi.jsonl"
		verdict=$(cd "$d" && timeout 30 node "$ROOT/tools/safety/pi-verdict.mjs" "$d/pi.jsonl" || echo '{"opens":false,"error":"timeout or crash"}')
		in_sha=$(sha256sum "$f" | cut -d' ' -f1)
		out_sha=$(sha256sum "$d/s.jsonl" | cut -d' ' -f1)
		[[ $first == 1 ]] || echo ","
		first=0
		printf '  "%s": {"inputSha256": "%s", "arborExit": %s, "repairedSha256": "%s", "pi": %s}' "$name" "$in_sha" "$code" "$out_sha" "$verdict"
		echo "$name: arbor exit $code, pi $verdict" | cut -c1-160 >&2
	done
	echo
	echo "}"
} >"$OUT"
echo "wrote $OUT" >&2
