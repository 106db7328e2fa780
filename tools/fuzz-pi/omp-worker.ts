// omp side of the differential fuzzer (fuzz.mjs --oracle omp), run by bun: a long-lived
// worker that speaks pi-worker.mjs's protocol. One request per stdin line,
// {"file": PATH, "leaves": [ids]}, one stdout line per request:
// {"ok":true,"tree":…,"ctx":{key:…},"llm":{key:…},"thrown":{key:…},"llmThrown":{key:…}} or
// {"ok":false,"stage":…,"error":…}; the first line it writes is {"ready":true}, once omp's
// modules are loaded (bun takes a while), so the driver times only the requests.
//
// omp 18.2.3's answers as the goldens record them (tools/goldens/omp-oracle.ts,
// omp-context.ts, omp-context-llm.ts): `await SessionManager.open(copy)` of a COPY (omp
// rewrites an empty file), the canonical tree (tools/goldens/tree-json.mjs),
// `sm.buildSessionContext()` for the leaf omp opens at and `buildSessionContext(entries, id,
// undefined, {resolveFrameData})` for the others (the blob store attached, as `arbor context`
// attaches it for omp files), and `convertToLlm` of a fresh copy of the messages (it memoizes by
// identity). PI_CODING_AGENT_DIR names the agent dir whose blobs/ both sides read.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { treeJson } from "../goldens/tree-json.mjs";

const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
const { buildSessionContext } = await import(`${ROOT}/session-context.ts`);
const { convertToLlm } = await import(`${ROOT}/messages.ts`);
const { BlobStore, lazyImageDataSync } = await import(`${ROOT}/blob-store.ts`);
const { getBlobsDir } = await import(`${ROOT}/../../../pi-utils/src/index.ts`);
const blobs = new BlobStore(getBlobsDir());
const resolveFrameData = (data: string) => lazyImageDataSync(blobs, data);

const dir = mkdtempSync(join(tmpdir(), "fuzz-omp-worker-"));
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
	const req = JSON.parse(line);
	const copy = join(dir, "s.jsonl");
	let stage = "open";
	const out: any = { ok: true, ctx: {}, llm: {}, thrown: {}, llmThrown: {} };
	let sm: any;
	try {
		copyFileSync(req.file, copy);
		sm = await SessionManager.open(copy, undefined, undefined, { suppressBreadcrumb: true });
		stage = "tree";
		out.tree = treeJson(sm, 200000);
		const entries = sm.getEntries();
		for (const key of req.leaves) {
			stage = `context ${key}`;
			let ctx: any;
			try {
				ctx = key === "__open__" ? sm.buildSessionContext() : buildSessionContext(entries, key, undefined, { resolveFrameData });
				out.ctx[key] = ctx;
			} catch (e: any) {
				out.thrown[key] = String(e?.message ?? e);
				continue;
			}
			try {
				out.llm[key] = { ...ctx, messages: convertToLlm(structuredClone(ctx.messages)) };
			} catch (e: any) {
				out.llmThrown[key] = String(e?.message ?? e);
			}
		}
	} catch (e: any) {
		Object.assign(out, { ok: false, stage, error: String(e?.message ?? e).split(copy).join("<copy>") });
	}
	try {
		await sm?.close?.();
	} catch {}
	rmSync(copy, { force: true });
	process.stdout.write(JSON.stringify(out) + "\n");
}
rmSync(dir, { recursive: true, force: true });
process.exit(0);
