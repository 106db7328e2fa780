#!/usr/bin/env bash
# omp reads the prompt history arbor writes, and arbor reads what omp writes, with the REAL omp
# (npm @oh-my-pi/pi-coding-agent 18.2.3 under bun 1.4.4, installed into /tmp/peers if missing).
#
#   tools/history/check.sh            # compare both directions and an omp 13 database; exit 1 on a difference
#   tools/history/check.sh --goldens  # also (re)write goldens/history/ (read by crates/arbor-index/tests/history_goldens.rs)
#
# Direction A: `arbor history --add` records tools/history/prompts.jsonl; omp's HistoryStorage reads the
# database (getRecent, search); arbor's `history --json` must answer the same. Direction B: omp records the
# same prompts; arbor reads them. Direction C: an omp 13 database (no session_id, duplicate and padded
# prompts): arbor reads it without changing it, then `--add` upgrades it as omp 18 does, and omp reads it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T="$ROOT/tools/history"
BUN=/tmp/peers/omp/node_modules/.bin/bun
if [[ ! -x $BUN || ! -f /tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/history-storage.ts ]]; then
	mkdir -p /tmp/peers/omp && cd /tmp/peers/omp
	[[ -f package.json ]] || npm init -y >/dev/null
	npm install --no-fund --no-audit bun@1.4.4 >/dev/null 2>&1
	npm install --no-fund --no-audit --omit=optional --legacy-peer-deps @oh-my-pi/pi-coding-agent@18.2.3 >/dev/null 2>&1
	npm install --no-fund --no-audit --no-save --legacy-peer-deps @oh-my-pi/pi-natives-linux-x64@18.2.3 >/dev/null 2>&1
	cd "$ROOT"
fi
(cd "$ROOT" && cargo build -q -p arbor-cli)
ARBOR="$ROOT/target/debug/arbor"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
QUERIES=("git comm" "mit" "cafe" "CAFÉ" "résumé" "100%" "foo_bar" '"quoted"' "AND" "c++" "日本語" "🚀" "line two" "*" "hook other" "padded keep")

omp() { HOME="$W/home" "$BUN" "$T/omp-history.ts" "$@"; }
arbor_view() { # AGENT_DIR -> JSON in omp's shape
	local a=$1
	{
		printf '{"recent":'
		"$ARBOR" --agent-dir "$a" history --json --limit 1000
		printf ',"search":{'
		local first=1
		for q in "${QUERIES[@]}"; do
			[[ $first == 1 ]] || printf ','
			first=0
			printf '%s:' "$("$BUN" -e 'console.log(JSON.stringify(process.argv[1]))' "$q")"
			"$ARBOR" --agent-dir "$a" history "$q" --json --limit 100
		done
		printf '}}\n'
	} | tr -d '\n'
}
record_with_arbor() { # AGENT_DIR
	while IFS= read -r line; do
		[[ -n $line ]] || continue
		local p c s
		p=$("$BUN" -e 'console.log(JSON.parse(process.argv[1]).prompt)' "$line")
		c=$("$BUN" -e 'console.log(JSON.parse(process.argv[1]).cwd ?? "")' "$line")
		s=$("$BUN" -e 'console.log(JSON.parse(process.argv[1]).sessionId ?? "")' "$line")
		args=(--agent-dir "$1" history --add "$p" --cwd "$c")
		[[ -n $s ]] && args+=(--session "$s")
		"$ARBOR" "${args[@]}"
	done <"$T/prompts.jsonl"
}
fail=0
check() { # NAME AGENT_DIR
	arbor_view "$2" >"$W/$1.arbor.json"
	omp read "$2/history.db" "${QUERIES[@]}" >"$W/$1.omp.json"
	if omp compare "$W/$1.omp.json" "$W/$1.arbor.json"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi
}

mkdir -p "$W/a" "$W/b" "$W/c"
# Note: prompt texts print through `console.log`, which adds a newline that arbor trims like omp.
record_with_arbor "$W/a"
check "arbor-writes-omp-reads" "$W/a"

omp add "$W/b/history.db" <"$T/prompts.jsonl"
check "omp-writes-arbor-reads" "$W/b"

omp legacy "$W/c/history.db"
before=$(sha256sum "$W/c/history.db")
"$ARBOR" --agent-dir "$W/c" history --json >"$W/c.legacy.json"
[[ $(sha256sum "$W/c/history.db") == "$before" ]] && echo "PASS arbor reads an omp 13 database without changing it" || { echo "FAIL omp 13 database changed by a read"; fail=1; }
"$ARBOR" --agent-dir "$W/c" history --add "new prompt after the upgrade" --cwd /c
check "omp13-upgraded-by-arbor-omp-reads" "$W/c"

if [[ ${1:-} == --goldens ]]; then
	G="$ROOT/goldens/history"
	mkdir -p "$G"
	for pair in "arbor-written:a" "omp-written:b"; do
		name=${pair%%:*} dir=$W/${pair##*:}
		# Both writers checkpoint on close; the database file alone holds everything.
		[[ ! -s $dir/history.db-wal ]] || { echo "a WAL is left in $dir"; exit 1; }
		cp "$dir/history.db" "$G/$name.db"
	done
	cp "$W/arbor-writes-omp-reads.omp.json" "$G/arbor-written.omp.json"
	cp "$W/omp-writes-arbor-reads.omp.json" "$G/omp-written.omp.json"
	echo "wrote $G"
fi
exit $fail
