#!/usr/bin/env bash
# Regenerates arbor's golden-file corpus under goldens/ by running the REAL pi and omp session managers.
#
# NOTE: arbor's test suite never needs node, bun or npm: it only reads the files under goldens/.
# Only regenerating the corpus (this script) needs them. Peers are installed under /tmp/peers:
#   pi:  npm @mariozechner/pi-coding-agent@0.73.1 (run with node >= 20)
#   omp: npm @oh-my-pi/pi-coding-agent@18.2.3 (run with bun 1.4.4 from npm)
#
# Usage: tools/goldens/make-goldens.sh [all|pi-gen|pi-edge|pi-exact|pi-fixture|pi-list|omp-gen|omp-edge|omp-list]...
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$ROOT/tools/goldens
G=$ROOT/goldens
FIXTURE=${FIXTURE:-$ROOT/../shared/fixtures/pi-real-v1-large-session.jsonl}
[[ -f $FIXTURE ]] || FIXTURE=/work/shared/fixtures/pi-real-v1-large-session.jsonl
BUN=/tmp/peers/omp/node_modules/.bin/bun
export TZ=UTC LC_ALL=C

ensure_peers() {
	if [[ -f /tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js &&
		-f /tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts && -x $BUN ]]; then
		return
	fi
	if [[ -f /work/shared/reference/setup-peers.sh ]]; then
		bash /work/shared/reference/setup-peers.sh
		return
	fi
	# Same steps as the team's shared/reference/setup-peers.sh.
	if [[ ! -f /tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js ]]; then
		mkdir -p /tmp/peers/pi && (cd /tmp/peers/pi && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
			npm install --no-fund --no-audit @mariozechner/pi-coding-agent@0.73.1 >/dev/null 2>&1)
	fi
	if [[ ! -f /tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts ]]; then
		mkdir -p /tmp/peers/omp && (cd /tmp/peers/omp && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
			npm install --no-fund --no-audit bun@1.4.4 >/dev/null 2>&1 &&
			npm install --no-fund --no-audit --omit=optional --legacy-peer-deps @oh-my-pi/pi-coding-agent@18.2.3 >/dev/null 2>&1 &&
			npm install --no-fund --no-audit --no-save --legacy-peer-deps @oh-my-pi/pi-natives-linux-x64@18.2.3 >/dev/null 2>&1)
	fi
}

pi() { node "$T/pi-oracle.mjs" "$@"; }
omp() { "$BUN" "$T/omp-oracle.ts" "$@"; }

# Scratch space; omp additionally gets a throwaway HOME and agent dir except where blobs must land in the repo.
SCRATCH=$(mktemp -d /tmp/arbor-goldens.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
export HOME=$SCRATCH/home
mkdir -p "$HOME"

# name seed nops [flags]
PI_GEN=(
	"gen-seed1-n5 1 5"
	"gen-seed2-n12 2 12"
	"gen-seed3-n25 3 25"
	"gen-seed4-n40 4 40"
	"gen-seed5-n60 5 60"
	"gen-seed6-n80-images 6 80 --images"
	"gen-seed7-n100 7 100"
	"gen-seed8-n150-notools 8 150 --no-tools"
	"gen-seed9-n200 9 200"
	"gen-seed10-n250-images 10 250 --images"
	"gen-seed11-n300 11 300"
	"gen-seed12-n400 12 400"
)
OMP_GEN=(
	"gen-seed1-n8 1 8"
	"gen-seed21-n40 21 40"
	"gen-seed22-n60-images 22 60 --images"
	"gen-seed23-n80 23 80"
	"gen-seed24-n120-notools 24 120 --no-tools"
	"gen-seed25-n150 25 150"
	"gen-seed26-n200-images 26 200 --images"
	"gen-seed27-n300 27 300"
)

pi_gen() {
	mkdir -p "$G/pi"
	for spec in "${PI_GEN[@]}"; do
		read -r name seed n flags <<<"$spec"
		local d=$SCRATCH/pi-gen-$name
		mkdir -p "$d"
		local f
		f=$(pi gen "$d" "$seed" "$n" $flags)
		mv "$f" "$G/pi/$name.jsonl"
		pi expect "$G/pi/$name.jsonl" "$G/pi/$name" --sample 30
		echo "pi $name"
	done
}

pi_edge() {
	node "$T/edge-cases.mjs" pi "$G/pi"
	for f in "$G"/pi/edge-*.jsonl; do
		case $f in *.open.jsonl) continue ;; esac
		local name
		name=$(basename "$f" .jsonl)
		pi expect "$f" "$G/pi/$name" --timeout 10
		echo "pi $name"
	done
}

pi_exact() {
	# Issue 22's hand-made inputs (tools/goldens/pi15/exact.mjs, the same bytes as goldens/pi15/exact-*)
	# answered by 0.73.1: where 0.73.1 differs from 1.5.2, pi_goldens.rs's DEVIATIONS name it.
	node "$T/pi15/exact.mjs" "$G/pi"
	for f in "$G"/pi/exact-*.jsonl; do
		local name
		name=$(basename "$f" .jsonl)
		pi expect "$f" "$G/pi/$name" --timeout 10
		echo "pi $name"
	done
}

pi_fixture() {
	# The 974 KB fixture itself is NOT copied; tests read it from ../shared/fixtures. Contexts of a linear 1000-entry
	# session are big (each is a prefix of the whole conversation: ~0.9 MB at the end), so context.json holds the
	# first 12 entries plus __open__, llm.json only the keys under 40 KB, and entries.json is left out (open.jsonl, pi's
	# migration rewrite, holds the same migrated entries one per line). See goldens/README.md.
	pi expect "$FIXTURE" "$G/pi/fixture-v1-large" --sample 0 --head 12 --no-entries --llm-max-bytes 40000
}

pi_list() {
	node "$T/edge-cases.mjs" pi-list "$G/pi/list"
	pi list "$G/pi/list" "$G/pi/list.json"
}

omp_gen() {
	mkdir -p "$G/omp/agent"
	rm -rf "$G/omp/agent/blobs"
	for spec in "${OMP_GEN[@]}"; do
		read -r name seed n flags <<<"$spec"
		local d=$SCRATCH/omp-gen-$name
		mkdir -p "$d"
		local f
		f=$(PI_CODING_AGENT_DIR=$G/omp/agent omp gen "$d" "$seed" "$n" $flags)
		mv "$f" "$G/omp/$name.jsonl"
		PI_CODING_AGENT_DIR=$G/omp/agent omp expect "$G/omp/$name.jsonl" "$G/omp/$name" --sample 20
		echo "omp $name"
	done
	# omp also creates history.db, sessions/, custom-session-files/ in the agent dir: keep only blobs/.
	find "$G/omp/agent" -mindepth 1 -maxdepth 1 ! -name blobs -exec rm -rf {} +
}

omp_edge() {
	node "$T/edge-cases.mjs" omp "$G/omp"
	for f in "$G"/omp/edge-*.jsonl; do
		case $f in *.open.jsonl) continue ;; esac
		local name
		name=$(basename "$f" .jsonl)
		PI_CODING_AGENT_DIR=$SCRATCH/omp-agent omp expect "$f" "$G/omp/$name" --timeout 10
		echo "omp $name"
	done
}

omp_list() {
	node "$T/edge-cases.mjs" omp-list "$G/omp/list"
	PI_CODING_AGENT_DIR=$SCRATCH/omp-agent omp list "$G/omp/list" "$G/omp/list.json"
}

ensure_peers
[[ $# -gt 0 ]] || set -- all
for part in "$@"; do
	case $part in
	all) pi_gen; pi_edge; pi_exact; pi_fixture; pi_list; omp_gen; omp_edge; omp_list ;;
	pi-gen) pi_gen ;; pi-edge) pi_edge ;; pi-exact) pi_exact ;; pi-fixture) pi_fixture ;; pi-list) pi_list ;;
	omp-gen) omp_gen ;; omp-edge) omp_edge ;; omp-list) omp_list ;;
	*) echo "unknown part: $part" >&2; exit 2 ;;
	esac
done
du -sh "$G"
