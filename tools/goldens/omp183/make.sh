#!/usr/bin/env bash
# Regenerates goldens/omp183/: omp 18.3.4's answers where they differ in kind from 18.2.3's,
# from the oracle setup.sh builds (omp 18.2.3 with 18.3.4's session-context and session-listing
# changes; see setup.sh for what is taken from where). Needs omp 18.2.3 under /tmp/peers/omp.
#   context/NAME.context.json, NAME.llm.json: buildSessionContext / convertToLlm for every entry
#     of every goldens/omp-context/NAME.jsonl (same keys as goldens/omp-context/)
#   list.json: SessionManager.list of goldens/omp/list/ plus list-extra/ (mtimes from each
#     directory's mtimes.json); empty.json: those of them isEmptySession calls empty
# The test suite only reads the results (crates/arbor-core/tests/omp_context_goldens.rs,
# crates/arbor-store/tests/omp_goldens.rs).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUN=${BUN:-/tmp/peers/omp/node_modules/.bin/bun}
OMP_PKG=${OMP_PKG:-$(tools/goldens/omp183/setup.sh | tail -1)}
export OMP_PKG
OUT=goldens/omp183
rm -rf "$OUT/context" "$OUT/list.json"
mkdir -p "$OUT/context"
node tools/goldens/omp183/list-inputs.mjs "$OUT/list-extra"
export PI_CODING_AGENT_DIR="$PWD/goldens/omp-context/agent" TZ=UTC LC_ALL=C
HOME=$(mktemp -d)
export HOME
for f in goldens/omp-context/*.jsonl; do
	name=$(basename "${f%.jsonl}")
	"$BUN" tools/goldens/omp-context.ts expect "$f" "$OUT/context/$name.context.json"
	"$BUN" tools/goldens/omp-context-llm.ts "$f" "$OUT/context/$name.llm.json"
done
find goldens/omp-context/agent -mindepth 1 -maxdepth 1 ! -name blobs -exec rm -rf {} +
LIST=$(mktemp -d)
for src in goldens/omp/list "$OUT/list-extra"; do
	node -e '
		const fs = require("fs"), path = require("path");
		const [src, dst] = process.argv.slice(1);
		const mt = JSON.parse(fs.readFileSync(path.join(src, "mtimes.json"), "utf8"));
		for (const [name, iso] of Object.entries(mt)) {
			fs.copyFileSync(path.join(src, name), path.join(dst, name));
			const t = new Date(iso);
			fs.utimesSync(path.join(dst, name), t, t);
		}' "$src" "$LIST"
done
"$BUN" tools/goldens/omp-oracle.ts list "$LIST" "$OUT/list.json"
# isEmptySession of each listed session (what omp 18.3.4's picker and --continue skip).
cat > "$LIST/.empty.ts" <<'TS'
const root = process.env.OMP_PKG;
const { SessionManager } = await import(`${root}/session-manager.ts`);
const { isEmptySession } = await import(`${root}/session-listing.ts`);
const [dir, out] = process.argv.slice(2);
const infos = await SessionManager.list("/unused", dir);
const empty = infos.filter((i: any) => isEmptySession(i)).map((i: any) => i.path.slice(dir.length + 1));
await Bun.write(out, JSON.stringify(empty, null, 1) + "\n");
TS
"$BUN" "$LIST/.empty.ts" "$LIST" "$PWD/$OUT/empty.json"
rm -rf "$LIST"
du -sh "$OUT"
