#!/usr/bin/env bash
# The round trip of issue 16, by hand, with today's pi: a session created by pi 1.5.2 on
# agent directory A, pushed to PostgreSQL, pulled on agent directory B (another project
# path: --map-cwd), appended to there by pi 1.5.2, pushed, pulled back to A; then pi 1.5.2
# opens A's file and the context it builds is compared with B's file's and with arbor's.
#
#   tools/sync/pi-roundtrip.sh [WORKDIR]
#
# Needs node, the pi 1.5.2 session code (../shared/reference/setup-pi-current.sh installs
# it) and PostgreSQL's server programs (apt-get install postgresql). Starts its own server
# in WORKDIR (Unix socket only; as the user postgres when run as root) and stops it at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REF=${REF:-$ROOT/../shared/reference}
W=${1:-$(mktemp -d /tmp/arbor-roundtrip.XXXXXX)}
PI15=${PI15:-/tmp/peers/pi15}
SHIM=$(bash "$REF/setup-pi-current.sh" "$PI15" | tail -1)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
(cd "$ROOT" && cargo build --release -q -p arbor-cli)
ARBOR="$ROOT/target/release/arbor"
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

mkdir -p "$W/pg" "$W/a" "$W/b"
[[ $(id -u) -eq 0 ]] && chown postgres "$W/pg"
as_pg "$PGBIN/initdb" -D "$W/pg/data" -A trust -U arbor >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$W/pg/data" -o "-k $W/pg -c listen_addresses=''" -l "$W/pg/log" -w start >/dev/null
trap 'as_pg "$PGBIN/pg_ctl" -D "$W/pg/data" -m fast stop >/dev/null' EXIT
URL="postgres:///postgres?host=$W/pg&user=arbor"

step() { printf '\n== %s\n' "$*"; }
step "pi 1.5.2 creates a session on A"
mkdir -p "$W/a/sessions/--work-project--"
FILE_A=$(PI_PKG=$SHIM node "$REF/pi.mjs" gen "$W/a/sessions/--work-project--" 16 30)
echo "$FILE_A ($(wc -l <"$FILE_A") lines)"

step "A pushes to PostgreSQL"
PI_CODING_AGENT_DIR=$W/a "$ARBOR" sync push --to "$URL" --color never

step "B pulls (the project lives at /srv/project there)"
PI_CODING_AGENT_DIR=$W/b "$ARBOR" sync pull --from "$URL" --map-cwd /work/project=/srv/project --color never
FILE_B=$(ls "$W"/b/sessions/*/*.jsonl)
cmp "$FILE_A" "$FILE_B" && echo "B's file is byte-identical to A's"

step "pi 1.5.2 appends a turn on B"
PI_PKG=$SHIM node --input-type=module -e "
const { SessionManager } = await import(process.env.PI_PKG);
const sm = SessionManager.open(process.argv[1]);
sm.appendMessage({ role: 'user', content: [{ type: 'text', text: 'continued on machine B' }], timestamp: Date.now() });
sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'picked up where A left off' }],
  api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'stop', timestamp: Date.now(),
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } });
" "$FILE_B"
echo "$(wc -l <"$FILE_B") lines on B"

step "B pushes; A pulls"
PI_CODING_AGENT_DIR=$W/b "$ARBOR" sync push --to "$URL" --color never
PI_CODING_AGENT_DIR=$W/a "$ARBOR" sync pull --from "$URL" --color never
cmp "$FILE_A" "$FILE_B" && echo "A's file is byte-identical to B's ($(wc -l <"$FILE_A") lines)"
PI_CODING_AGENT_DIR=$W/a "$ARBOR" sync status --from "$URL" --color never

step "pi 1.5.2 opens A's file"
PI_PKG=$SHIM node "$REF/pi.mjs" contexts "$FILE_A" --llm >"$W/pi-context.json"
"$ARBOR" context "$FILE_A" --llm --color never >"$W/arbor-context.json"
python3 - "$W/pi-context.json" "$W/arbor-context.json" <<'PY'
import json, sys
pi = json.load(open(sys.argv[1]))["__open__"]
ar = json.load(open(sys.argv[2]))
msgs = pi["messages"]
last = msgs[-1]["content"][0]["text"] if msgs else None
print(f"pi's context: {len(msgs)} messages, the last: {last!r}")
assert last == "picked up where A left off", last
# arbor prints omp's fields too (models, mode, ...); pi's are compared.
same = {k: ar.get(k) for k in pi} == pi
assert same, "arbor's context differs from pi's"
print(f"arbor context of the same file: pi's fields ({', '.join(pi)}) identical to pi's")
PY
