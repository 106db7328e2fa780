// Golden maker for omp's convertToLlm on the sessions of goldens/omp-context/: for every key of
// NAME.context.json, the REAL oh-my-pi 18.2.3's `convertToLlm(context.messages)`
// (src/session/messages.ts) under bun, written to NAME.llm.json with the same keys.
// Run by tools/goldens/omp-context-llm.sh (after omp-context.sh, which makes the sessions).
//
//   bun omp-context-llm.ts FILE OUT     OUT = {"<id>": convertToLlm(buildSessionContext(entries, id).messages),
//                                       "store:<id>": the same with the blob store attached (only where the
//                                       context differs), "__open__": of sm.buildSessionContext(),
//                                       "__null__": of buildSessionContext(entries, null)}; where
//                                       convertToLlm throws, {"throws": "<error>"} instead
//
// PI_CODING_AGENT_DIR must point at the agent dir whose blobs/ the goldens ship with.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
const { buildSessionContext } = await import(`${ROOT}/session-context.ts`);
const { convertToLlm } = await import(`${ROOT}/messages.ts`);
const { BlobStore, lazyImageDataSync } = await import(`${ROOT}/blob-store.ts`);
const { getBlobsDir } = await import(`${ROOT}/../../../pi-utils/src/index.ts`);

const [file, out] = process.argv.slice(2);
if (!file || !out) {
	console.error("usage: omp-context-llm.ts FILE OUT");
	process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "omp-ctx-llm-"));
const copy = join(dir, "s.jsonl");
copyFileSync(file, copy);
const sm = await SessionManager.open(copy);
const entries = sm.getEntries();
const blobs = new BlobStore(getBlobsDir());
const resolveFrameData = (data: string) => lazyImageDataSync(blobs, data);
// Each conversion gets a fresh copy of the messages: convertToLlm memoizes by identity.
// Where omp throws (messages that are not objects), the answer is {"throws": "<error>"}.
const llm = (ctx: { messages: unknown[] }) => {
	try {
		return convertToLlm(structuredClone(ctx.messages));
	} catch (err) {
		return { throws: String(err) };
	}
};
const res: Record<string, unknown> = {};
for (const e of entries) {
	if (typeof e.id !== "string") continue;
	const bare = buildSessionContext(entries, e.id);
	res[e.id] = llm(bare);
	const store = buildSessionContext(entries, e.id, undefined, { resolveFrameData });
	if (JSON.stringify(store) !== JSON.stringify(bare)) res[`store:${e.id}`] = llm(store);
}
res.__open__ = llm(sm.buildSessionContext());
res.__null__ = llm(buildSessionContext(entries, null));
await sm.close?.();
if (readFileSync(copy, "utf8") !== readFileSync(file, "utf8")) throw new Error(`omp rewrote ${file} on open`);
writeFileSync(out, JSON.stringify(res));
process.exit(0);
