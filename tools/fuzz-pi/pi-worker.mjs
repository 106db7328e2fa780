// pi side of the differential fuzzer: a long-lived worker that answers one request per stdin
// line, {"file": PATH, "leaves": [ids]}, with one stdout line:
// {"ok":true,"tree":…,"ctx":{key:…},"llm":{key:…}} or {"ok":false,"stage":…,"error":…}.
// It opens a COPY of the file (pi may rewrite it). The driver kills it when it hangs (pi's
// parent walks have no cycle guard) and starts another.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { treeJson } from "../goldens/tree-json.mjs";

const { SessionManager, buildSessionContext, convertToLlm } = await import(process.env.PI_PKG ?? "/tmp/peers/pi15/shim.mjs");

const dir = mkdtempSync(join(tmpdir(), "fuzz-pi-worker-"));
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
	const req = JSON.parse(line);
	const copy = join(dir, "s.jsonl");
	let stage = "open";
	const out = { ok: true, ctx: {}, llm: {}, thrown: {} };
	try {
		copyFileSync(req.file, copy);
		const sm = SessionManager.open(copy);
		stage = "tree";
		out.tree = treeJson(sm, 200000);
		const entries = sm.getEntries();
		for (const key of req.leaves) {
			stage = `context ${key}`;
			try {
				const ctx = key === "__open__" ? sm.buildSessionContext() : buildSessionContext(entries, key);
				out.ctx[key] = ctx;
				out.llm[key] = { ...ctx, messages: convertToLlm(ctx.messages) };
			} catch (e) {
				out.thrown[key] = String(e?.message ?? e);
			}
		}
	} catch (e) {
		Object.assign(out, { ok: false, stage, error: String(e?.message ?? e) });
	}
	rmSync(copy, { force: true });
	process.stdout.write(JSON.stringify(out) + "\n");
}
rmSync(dir, { recursive: true, force: true });
