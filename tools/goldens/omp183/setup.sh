#!/usr/bin/env bash
# Builds an omp oracle for 18.3.4's session rules where omp 18.3.4 itself cannot run.
#
# omp 18.3.4 cannot be installed here: most of its 18.3.4 dependencies (@oh-my-pi/pi-agent-core,
# pi-tui, pi-ai 18.3.x) are missing from the registry. What changed in how a session file is read
# between 18.2.3 and 18.3.4 is in two of its own source files, which its published package holds:
#   - src/session/session-context.ts: the Anthropic-replay compaction hunks (the summary keeps the
#     compaction's time, `historyRewriteAt` carries the predated time; a `firstKeptEntryId` of ""
#     retains what follows `providerReplayThroughEntryId`);
#   - src/session/session-listing.ts: `assistantTurns`, `isEmptySession`.
# This script copies the working omp 18.2.3 install (/tmp/peers/omp), takes those hunks and that
# file from the 18.3.4 package (fetched with `npm pack`, never committed), and makes the one change
# in @oh-my-pi/pi-agent-core that 18.3.4's session-context.ts relies on and the registry cannot
# give (18.2.11 is its newest there): `createCompactionSummaryMessage` accepts `historyRewriteAt`
# and places it just before `timestamp`, and `convertMessageToLlm` prefers it for a compaction
# summary. That placement is taken from a public copy of pi-agent-core's compaction/messages.ts
# that has the option (version not printed in it); it is the one assumption in these goldens.
#
# Usage: tools/goldens/omp183/setup.sh   -> prints the OMP_PKG to export for omp-oracle.ts etc.
set -euo pipefail
SRC=${OMP_183_BASE:-/tmp/peers/omp}
DST=${OMP_183_DIR:-/tmp/peers/omp183}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$SRC/node_modules/.bin/bun" ] || { echo "need omp 18.2.3 under $SRC (../shared/reference/setup-peers.sh)" >&2; exit 1; }
(cd "$WORK" && npm pack -q @oh-my-pi/pi-coding-agent@18.3.4 >/dev/null && tar xzf oh-my-pi-pi-coding-agent-18.3.4.tgz)
NEW=$WORK/package/src/session
rm -rf "$DST"
cp -a "$SRC" "$DST"
PKG=$DST/node_modules/@oh-my-pi/pi-coding-agent/src/session
CORE=$DST/node_modules/@oh-my-pi/pi-agent-core/src/compaction/messages.ts
python3 "$(dirname "$0")/patch.py" "$PKG" "$NEW" "$CORE"
echo "$PKG"
