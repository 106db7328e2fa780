// pi 1.5.2's own SessionManager on an imported session: the context it builds when it opens
// the file (what `pi --session FILE` continues from), and its leaf, tree size and name.
// Usage: node pi-context.mjs SHIM FILE  (SHIM: printed by ../../shared/reference/setup-pi-current.sh)
// Opens a temporary copy (pi may rewrite a file it opens).
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, basename } from "node:path";

const [shim, file] = process.argv.slice(2);
const { SessionManager } = await import(shim);
const copy = join(mkdtempSync(join(tmpdir(), "pi-ctx-")), basename(file));
copyFileSync(file, copy);
const sm = SessionManager.open(copy);
const ctx = sm.buildSessionContext();
const out = {
	leaf: sm.getLeafId() ?? null,
	entries: sm.getEntries().length,
	sessionName: sm.getSessionName() ?? null,
	parentSession: sm.getHeader()?.parentSession ?? null,
	context: ctx,
};
process.stdout.write(JSON.stringify(out) + "\n");
