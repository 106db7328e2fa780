#!/usr/bin/env bash
# Issue 23's merge, by hand, with today's pi: a session created by pi 1.5.2 on agent
# directory A is pushed to a shared SQLite store and pulled on B; pi 1.5.2 appends a turn on
# each machine (the session branches); A pushes, B pulls (merge) and pushes, A pulls (merge).
# Then pi 1.5.2 opens each machine's file: every entry of both branches is there once, each
# entry's parent is known, and the leaf pi resumes at is that machine's own last turn (its
# next message's parentId is that entry). A second round of syncs changes no byte.
#
#   tools/sync/pi-merge.sh [WORKDIR]      # prints what it checked; exit 0 when all holds
#
# Needs node and the pi 1.5.2 session code (../shared/reference/setup-pi-current.sh installs
# it in /tmp/peers/pi15). Uses target/debug/arbor (built here) unless $ARBOR is set.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REF=${REF:-$ROOT/../shared/reference}
W=${1:-$(mktemp -d /tmp/arbor-pimerge.XXXXXX)}
PI15=${PI15:-/tmp/peers/pi15}
SHIM=$(bash "$REF/setup-pi-current.sh" "$PI15" | tail -1)
if [[ -z ${ARBOR:-} ]]; then
	(cd "$ROOT" && cargo build -q -p arbor-cli)
	ARBOR="$ROOT/target/debug/arbor"
fi
URL="sqlite:$W/shared.db"
a() { PI_CODING_AGENT_DIR=$W/a "$ARBOR" "$@" --color never; }
b() { PI_CODING_AGENT_DIR=$W/b "$ARBOR" "$@" --color never; }
step() { printf '\n== %s\n' "$*"; }
mkdir -p "$W/a/sessions/--work-project--" "$W/b"

step "pi 1.5.2 creates a session on A; A pushes, B pulls"
FILE_A=$(PI_PKG=$SHIM node "$REF/pi.mjs" gen "$W/a/sessions/--work-project--" 16 30)
a sync push --to "$URL" | tail -1
b sync pull --from "$URL" | tail -1
FILE_B=$(ls "$W"/b/sessions/*/*.jsonl)
echo "$(wc -l <"$FILE_A") lines on each"

turn() { # FILE MACHINE: pi 1.5.2 appends a user message and an answer at the file's leaf
	PI_PKG=$SHIM node --input-type=module -e "
const { SessionManager } = await import(process.env.PI_PKG);
const sm = SessionManager.open(process.argv[1]);
sm.appendMessage({ role: 'user', content: [{ type: 'text', text: 'asked on machine ' + process.argv[2] }], timestamp: 1767225600000 });
sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'answered on machine ' + process.argv[2] }],
  api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'stop', timestamp: 1767225600001,
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } });
" "$1" "$2"
}
step "pi 1.5.2 appends a turn on A and another on B (the session branches)"
turn "$FILE_A" A
turn "$FILE_B" B
b sync status --from "$URL" | head -1

step "A pushes; B pulls (merge) and pushes; A pulls (merge)"
a sync push --to "$URL" | head -1
b sync pull --from "$URL" | head -1
b sync push --to "$URL" | head -1
a sync pull --from "$URL" | head -1

step "a second round changes no byte"
cp "$FILE_A" "$W/a.before" && cp "$FILE_B" "$W/b.before"
for m in a b; do $m sync pull --from "$URL" | tail -1; $m sync push --to "$URL" | tail -1; done
cmp "$FILE_A" "$W/a.before" && cmp "$FILE_B" "$W/b.before" && echo "both files unchanged"

step "pi 1.5.2 opens both files"
PI_PKG=$SHIM node --input-type=module -e "
import { copyFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const { SessionManager } = await import(process.env.PI_PKG);
const [fa, fb] = process.argv.slice(1);
const open = (f) => { const d = mkdtempSync(join(tmpdir(), 'pimerge-')); const p = join(d, 'copy.jsonl'); copyFileSync(f, p); return SessionManager.open(p); };
const check = (ok, what) => { if (!ok) { console.log('FAIL: ' + what); process.exitCode = 1; } else console.log('ok: ' + what); };
const seen = {};
for (const [m, f] of [['A', fa], ['B', fb]]) {
  const sm = open(f);
  const entries = sm.getEntries();
  const ids = new Set(entries.map((e) => e.id));
  seen[m] = [...ids].sort().join(',');
  check(ids.size === entries.length, m + ': ' + entries.length + ' entries, each once');
  check(entries.every((e) => e.parentId === null || ids.has(e.parentId)), m + ': every parent is an entry of the file');
  const text = (e) => e?.message?.content?.[0]?.text;
  const leaf = sm.getLeafEntry();
  check(text(leaf) === 'answered on machine ' + m, m + ': pi resumes at ' + JSON.stringify(text(leaf)));
  const other = m === 'A' ? 'B' : 'A';
  check(entries.some((e) => text(e) === 'answered on machine ' + other), m + ': the other machine\'s turn is there too');
  const ctx = sm.buildSessionContext();
  check(!ctx.messages.some((x) => x.content?.[0]?.text?.includes('machine ' + other)), m + ': its context is its own branch (' + ctx.messages.length + ' messages)');
  const next = sm.appendMessage({ role: 'user', content: [{ type: 'text', text: 'next' }], timestamp: 1767225600002 });
  check(sm.getEntry(next).parentId === leaf.id, m + ': the next message is the child of ' + leaf.id);
}
check(seen.A === seen.B, 'A and B hold the same entries');
" "$FILE_A" "$FILE_B"

PI073=${PI073:-/tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js}
if [[ -f $PI073 ]]; then
	step "pi 0.73.1 opens both files"
	for m in A B; do
		f=$FILE_A
		[[ $m == B ]] && f=$FILE_B
		PI_PKG=$PI073 node --input-type=module -e "
import { copyFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const { SessionManager } = await import(process.env.PI_PKG);
const d = mkdtempSync(join(tmpdir(), 'pi073-')); const p = join(d, 'c.jsonl'); copyFileSync(process.argv[1], p);
const sm = SessionManager.open(p);
const text = sm.getLeafEntry()?.message?.content?.[0]?.text;
const ok = text === 'answered on machine ' + process.argv[2];
console.log((ok ? 'ok: ' : 'FAIL: ') + process.argv[2] + ': pi 0.73.1 resumes at ' + JSON.stringify(text) + ' (' + sm.getEntries().length + ' entries)');
if (!ok) process.exitCode = 1;
" "$f" "$m"
	done
fi
