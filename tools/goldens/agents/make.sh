#!/usr/bin/env bash
# Regenerates goldens/agents/expected/ and goldens/agents/omp-compare.txt from the sources in
# goldens/agents/ (named in goldens/README.md):
#   1. opencode's generated sources (make-opencode.py);
#   2. each source set imported by arbor (`arbor import AGENT --all` in a throwaway HOME);
#   3. each imported session opened by pi 1.5.2's own SessionManager (pi-context.mjs):
#      expected/NAME.pi.json = {leaf, entries, sessionName, parentSession, context};
#      expected/NAME.pi.jsonl = the imported file, its header's id/timestamp/parentSession and the
#      marker's sourcePath made comparable;
#   4. for Claude Code and Codex, the same sources imported by omp 18.2.3's own importer
#      (../../shared/reference/omp-import.ts under bun), compared message by message with arbor's
#      import (compare-omp.py) into omp-compare.txt.
# Needs node (pi), bun (omp; the one installed with omp under /tmp/peers/omp), python3, sqlite3 and
# a built arbor (target/debug/arbor). The tests never run this: they read what it wrote.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
g=$root/goldens/agents
ref=${REF:-/work/shared/reference}
arbor=${ARBOR:-$root/target/debug/arbor}
bun=${BUN:-/tmp/peers/omp/node_modules/@oven/bun-linux-x64/bin/bun}
shim=$("$ref/setup-pi-current.sh")
export TZ=UTC LC_ALL=C
python3 "$here/make-opencode.py" "$g/opencode" >/dev/null
rm -rf "$g/expected" && mkdir -p "$g/expected"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# set  agent  where the set's files go in the throwaway HOME
sets=(
	"claude claude .claude/projects:projects"
	"claude-real claude .claude/projects:projects"
	"codex codex .codex/sessions:sessions"
	"codex-real codex .codex/sessions:sessions"
	"opencode opencode .local/share/opencode:."
	"opencode-real opencode .local/share/opencode:-"
)
for s in "${sets[@]}"; do
	read -r set agent map <<<"$s"
	dst=${map%%:*} src=${map##*:}
	home=$tmp/$set
	mkdir -p "$home/$dst"
	if [[ $src == - ]]; then
		# opencode-real: the database is made from the dump's excerpt.
		sqlite3 "$home/$dst/opencode.db" <"$g/$set/dump.sql"
	else
		cp -R "$g/$set/$src/." "$home/$dst/"
	fi
	HOME=$home XDG_DATA_HOME=$home/.local/share "$arbor" import "$agent" --all --json >"$tmp/$set.json" 2>"$tmp/$set.err" || true
	python3 - "$tmp/$set.json" "$set" "$home" "$g/expected" "$shim" "$here/pi-context.mjs" <<'PY'
import json, subprocess, sys, os, re
out, set_, home, exp, shim, pictx = sys.argv[1:]
def walk(items):
    for i in items:
        yield i
        yield from walk(i["children"])
for i in walk(json.load(open(out))):
    name = f'{set_}-{i["sourceId"]}'
    f = i["file"]
    ctx = subprocess.run(["node", pictx, shim, f], capture_output=True, text=True, check=True).stdout
    v = json.loads(ctx)
    if v["parentSession"]:
        v["parentSession"] = "PARENT"
    json.dump(v, open(os.path.join(exp, name + ".pi.json"), "w"), indent=1, sort_keys=True)
    lines = open(f).read().splitlines()
    h = json.loads(lines[0]); h["id"] = "ID"; h["timestamp"] = "TS"
    if "parentSession" in h: h["parentSession"] = "PARENT"
    norm = [json.dumps(h, separators=(",", ":"))]
    for l in lines[1:]:
        e = json.loads(l)
        if e.get("type") == "custom" and e.get("customType") == "arbor-import":
            e["data"]["sourcePath"] = os.path.relpath(e["data"]["sourcePath"], home)
            e["data"]["importedBy"] = "arbor"
            l = json.dumps(e, separators=(",", ":"), ensure_ascii=False)
        norm.append(l)
    open(os.path.join(exp, name + ".pi.jsonl"), "w").write("\n".join(norm) + "\n")
    print(name)
PY
done
# omp 18.2.3's importer on the same Claude Code and Codex sources, compared with arbor's.
: >"$g/omp-compare.txt"
for s in claude claude-real codex codex-real; do
	agent=${s%%-*}
	out=$tmp/omp-$s
	(cd "$ref" && "$bun" omp-import.ts import "$agent" "$g/$s" "$out") >/dev/null
	python3 "$here/compare-omp.py" "$s" "$g/expected" "$out" >>"$g/omp-compare.txt"
done
echo "wrote $g/expected and $g/omp-compare.txt"
