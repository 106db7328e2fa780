#!/usr/bin/env bash
# Regenerates goldens/pi15/branched/: pi 1.5.2's createBranchedSession(LEAF) of input.jsonl
# (labels on the path left out and re-created with their own times, the path re-chained, a
# compaction's firstKeptEntryId that named a label moved on). Needs pi 1.5.2's session code:
#   PI_PKG=$(bash ../shared/reference/setup-pi-current.sh | tail -1) tools/goldens/pi15/branched.sh
# The test (crates/arbor-cli/tests/fork_goldens.rs) only reads the result.
set -euo pipefail
cd "$(dirname "$0")/../../.."
G=goldens/pi15/branched
for leaf in a3 b1 a2; do
	node tools/goldens/pi15/branched.mjs "$G/input.jsonl" "$leaf" > "$G/at-$leaf.jsonl"
done
