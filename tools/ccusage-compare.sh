#!/usr/bin/env bash
# Compares `arbor stats` with ccusage's pi report (`ccusage pi session`) on the same sessions:
# the README's "Usage and cost" section says where and why they differ.
#
#   tools/ccusage-compare.sh                 # demo/sessions, /work/shared/fixtures (when there),
#                                            # goldens/stats/sessions
#   tools/ccusage-compare.sh ROOT...         # pi sessions roots (each holds project directories,
#                                            # like ~/.pi/agent/sessions)
#
# ccusage: $CCUSAGE, else `ccusage` on the PATH, else ccusage 20.0.24 installed with npm under
# ${ARBOR_CCUSAGE_DIR:-$XDG_CACHE_HOME/arbor/ccusage}. arbor: $ARBOR, else target/release/arbor
# (built when missing). Needs node (ccusage's launcher and the JSON below). The test suite does
# not run this.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '%s\n' "$*" >&2; }

if [[ -n ${CCUSAGE:-} ]]; then
	CC=$CCUSAGE
elif command -v ccusage >/dev/null 2>&1; then
	CC=$(command -v ccusage)
else
	dir=${ARBOR_CCUSAGE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/arbor/ccusage}
	if [[ ! -x $dir/node_modules/.bin/ccusage ]]; then
		say "installing ccusage 20.0.24 into $dir"
		mkdir -p "$dir"
		npm install --silent --prefix "$dir" ccusage@20.0.24 >&2
	fi
	CC=$dir/node_modules/.bin/ccusage
fi
ARBOR=${ARBOR:-$ROOT/target/release/arbor}
if [[ ! -x $ARBOR ]]; then
	(cd "$ROOT" && cargo build --release -q -p arbor-cli)
fi
say "$("$CC" --version 2>/dev/null | tail -1), $("$ARBOR" --version)"

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# One sessions root: prints ccusage's totals, arbor's, and arbor's split.
compare() {
	local name=$1 sessions=$2 home=$SCRATCH/home-$3
	mkdir -p "$home/agent"
	ln -s "$sessions" "$home/agent/sessions"
	"$CC" pi session --json --offline --pi-path "$sessions" >"$home/cc.json"
	HOME=$home PI_CODING_AGENT_DIR=$home/agent ARBOR_CATALOG=$home/catalog.db \
		"$ARBOR" stats --all --json >"$home/arbor.json" 2>/dev/null
	node - "$name" "$home/cc.json" "$home/arbor.json" <<'EOF'
const fs = require('fs');
const [name, ccFile, arborFile] = process.argv.slice(2);
const cc = JSON.parse(fs.readFileSync(ccFile, 'utf8'));
const ar = JSON.parse(fs.readFileSync(arborFile, 'utf8'));
const t = cc.totals || {};
const c = {
  input: t.inputTokens || 0, output: t.outputTokens || 0, cacheRead: t.cacheReadTokens || 0,
  cacheWrite: t.cacheCreationTokens || 0, cost: t.totalCost || 0,
};
const parts = ['currentPath', 'otherBranches', 'summaries'];
const a = {};
for (const k of Object.keys(c)) a[k] = parts.reduce((s, p) => s + ar.total[p][k], 0);
const fmt = (o) => `input ${o.input}, output ${o.output}, cache read ${o.cacheRead}, cache write ${o.cacheWrite}, cost $${o.cost.toFixed(6)}`;
console.log(`== ${name}: ${(cc.sessions || []).length} sessions for ccusage, ${ar.sessions} for arbor`);
console.log(`ccusage pi: ${fmt(c)}`);
console.log(`arbor:      ${fmt(a)}`);
const d = {};
for (const k of Object.keys(c)) d[k] = a[k] - c[k];
console.log(`arbor - ccusage: ${fmt(d)}`);
const sum = ar.total.summaries, br = ar.total.otherBranches;
console.log(`arbor's split: branches left $${br.cost.toFixed(6)}, usage entries (summaries) ${sum.input} in / ${sum.output} out / $${sum.cost.toFixed(6)}, fork copies counted once: ${ar.forkCopiesSkipped}`);
EOF
}

n=0
if [[ $# -gt 0 ]]; then
	for r in "$@"; do
		n=$((n + 1))
		compare "$r" "$(cd "$r" && pwd)" "$n"
	done
	exit 0
fi
# The demo sessions (one project) and the shared fixtures (another).
demo=$SCRATCH/demo/sessions
mkdir -p "$demo/--work-project--"
cp "$ROOT"/demo/sessions/*.jsonl "$demo/--work-project--/"
compare "demo/sessions" "$demo" demo
if compgen -G "/work/shared/fixtures/*.jsonl" >/dev/null; then
	fx=$SCRATCH/fixtures/sessions
	mkdir -p "$fx/--fixtures--"
	cp /work/shared/fixtures/*.jsonl "$fx/--fixtures--/"
	compare "/work/shared/fixtures" "$fx" fixtures
fi
# The golden forks and branches, their parentSession pointed at where they are.
g=$SCRATCH/goldens/sessions
mkdir -p "$g/--work-demo--"
for f in "$ROOT"/goldens/stats/sessions/*.jsonl; do
	sed "s|@SESSIONS@|$g/--work-demo--|g" "$f" >"$g/--work-demo--/$(basename "$f")"
done
compare "goldens/stats/sessions" "$g" goldens
# Records ccusage leaves out: an assistant message without a timestamp, one whose token counts
# are all 0 (cost $4), and one with the same time, model, tokens and cost as another (a second
# entry id). arbor counts all four turns: $8, input 40; ccusage one: $1, input 10.
r=$SCRATCH/rules/sessions/--rules--
mkdir -p "$r"
turn() { # id parent timestamp-field input cost
	printf '{"type":"message","id":"%s","parentId":%s%s,"message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":%s,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%s,"cost":{"total":%s}},"stopReason":"stop","timestamp":0}}\n' "$1" "$2" "$3" "$4" "$4" "$5"
}
{
	printf '{"type":"session","version":3,"id":"rules","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/rules"}\n'
	turn e1 null ',"timestamp":"2026-03-02T09:00:05.000Z"' 10 1
	turn e2 '"e1"' '' 20 2
	turn e3 '"e2"' ',"timestamp":"2026-03-02T09:00:07.000Z"' 0 4
	turn e4 '"e3"' ',"timestamp":"2026-03-02T09:00:05.000Z"' 10 1
} >"$r/2026-03-02T09-00-00-000Z_rules.jsonl"
compare "records ccusage skips" "$SCRATCH/rules/sessions" rules
