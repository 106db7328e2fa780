// omp oracle: drives the REAL oh-my-pi SessionManager (npm @oh-my-pi/pi-coding-agent 18.2.3, under the bun 1.4.4
// from npm, both installed under /tmp/peers by make-goldens.sh). Only regeneration needs bun.
// Set PI_CODING_AGENT_DIR: omp externalizes images (>= 1024 base64 chars) into <agentDir>/blobs/<sha256>.
//
//   bun omp-oracle.ts gen OUTDIR SEED N [--images] [--no-tools]  -> prints the new session file path
//   bun omp-oracle.ts expect FILE OUTPREFIX [--sample K] [--head H] [--timeout S] [--no-llm] [--no-entries] [--llm-max-bytes N] [--store]
//        writes OUTPREFIX.{context,llm,tree,entries,meta}.json, OUTPREFIX.open.jsonl, OUTPREFIX.error.txt on failure.
//   bun omp-oracle.ts list DIR OUT.json
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { treeJson } from "./tree-json.mjs";
import { assistantMessage, bashMessage, customRoleMessage, makeOps, pick, toolResultMessage, userMessage } from "./ops.mjs";

const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const SELF = import.meta.path;

function flag(args: string[], name: string, def?: any) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}

async function applyOps(sm: any, ops: any[]) {
	for (const op of ops) {
		const entries = sm.getEntries();
		const path = sm.getBranch();
		switch (op.op) {
			case "user": sm.appendMessage(userMessage(op)); break;
			case "assistant": sm.appendMessage(assistantMessage(op)); break;
			case "toolResult": sm.appendMessage(toolResultMessage(op)); break;
			case "bash": sm.appendMessage(bashMessage(op)); break;
			case "customRole": sm.appendMessage(customRoleMessage(op)); break;
			case "thinking": sm.appendThinkingLevelChange(op.level, op.configured); break;
			case "model": sm.appendModelChange(`${op.provider}/${op.modelId}`, op.role); break;
			case "compaction": {
				const target = op.offPath ? pick(entries, op.keep) : pick(path, op.keep);
				if (!target) break;
				sm.appendCompaction(op.summary, op.shortSummary, target.id, op.tokensBefore,
					{ details: op.details, fromExtension: op.fromHook, preserveData: op.preserveData });
				break;
			}
			case "branch": { const e = pick(entries, op.pick); if (e) sm.branch(e.id); break; }
			case "branchSummary": {
				if (op.pick === null) { sm.branchWithSummary(null, op.summary, op.details, op.fromHook); break; }
				const e = pick(entries, op.pick);
				if (e) sm.branchWithSummary(e.id, op.summary, op.details, op.fromHook);
				break;
			}
			case "reset": sm.resetLeaf(); break;
			case "label": { const e = pick(entries, op.pick); if (e) sm.appendLabelChange(e.id, op.label || undefined); break; }
			case "custom": sm.appendCustomEntry(op.customType, op.data); break;
			case "customMessage": sm.appendCustomMessageEntry(op.customType, op.content, op.display, op.details); break;
			case "name": break; // pi's session_info; omp names sessions with setSessionName (the "title" op)
			case "ttsr": sm.appendTtsrInjection(op.rules); break;
			case "sessionInit": sm.appendSessionInit({ systemPrompt: op.systemPrompt, task: op.task, tools: op.tools }); break;
			case "mode": sm.appendModeChange(op.mode, op.data); break;
			case "serviceTier": sm.appendServiceTierChange(op.tier); break;
			case "title": await sm.setSessionName(op.title, op.source); break;
		}
	}
}

function sampled(entries: any[], k: number, head: number) {
	const withId = entries.filter((e) => e && typeof e === "object" && typeof e.id === "string");
	let out: any[];
	if (k <= 0) out = [];
	else if (withId.length <= k) out = withId;
	else {
		out = [];
		for (let i = 0; i < k; i++) out.push(withId[Math.floor((i * withId.length) / k)]);
		out.push(withId[withId.length - 1]);
	}
	if (head) out = [...withId.slice(0, head), ...out];
	const seen = new Set();
	return out.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
}

// OUTPREFIX.open.jsonl is written only when opening changed the file's bytes (migration rewrite, truncation, ...);
// when it is absent the opened file was byte-identical to the input. This keeps goldens/ small.
function writeOpenBytes(copy: string, prefix: string, orig?: string) {
	const after = readFileSync(copy);
	if (orig && existsSync(orig) && after.equals(readFileSync(orig))) return;
	writeFileSync(`${prefix}.open.jsonl`, after);
}

// OUTPREFIX.entries.json is written only when getEntries() differs from "every non-empty line of the opened file,
// JSON-parsed, minus the omp title slot (line 1, type "title") and minus the first header line".
function entriesAreFileLines(entries: any[], text: string) {
	try {
		const lines = text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
		if (lines.length && lines[0] && lines[0].type === "title") lines.shift();
		lines.shift();
		return JSON.stringify(entries) === JSON.stringify(lines);
	} catch {
		return false;
	}
}

async function expectInner(copy: string, prefix: string, args: string[]) {
	const status = flag(args, "--status");
	const skip = new Set(String(flag(args, "--skip", "")).split(",").filter(Boolean));
	const stage = (s: string) => writeFileSync(status, s);
	const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
	const { buildSessionContext } = await import(`${ROOT}/session-context.ts`);
	// --store: every context with the blob store attached (snapcompact frames kept as blob
	// references resolved), as sm.buildSessionContext() and `arbor context` have it.
	let options: any;
	if (args.includes("--store")) {
		const { BlobStore, lazyImageDataSync } = await import(`${ROOT}/blob-store.ts`);
		const { getBlobsDir } = await import(`${ROOT}/../../../pi-utils/src/index.ts`);
		const blobs = new BlobStore(getBlobsDir());
		options = { resolveFrameData: (data: string) => lazyImageDataSync(blobs, data) };
	}
	let convertToLlm: any;
	try { ({ convertToLlm } = await import(`${ROOT}/messages.ts`)); } catch { convertToLlm = undefined; }
	stage("open");
	let sm: any;
	try {
		sm = await SessionManager.open(copy, undefined, undefined, { suppressBreadcrumb: true });
	} finally {
		writeOpenBytes(copy, prefix, flag(args, "--orig"));
	}
	const entries = sm.getEntries();
	stage("entries");
	if (!args.includes("--no-entries") && !entriesAreFileLines(entries, readFileSync(copy, "utf8"))) {
		writeFileSync(`${prefix}.entries.json`, JSON.stringify(entries));
	}
	stage("meta");
	writeFileSync(`${prefix}.meta.json`, JSON.stringify({ header: sm.getHeader() ?? null, sessionName: sm.getSessionName() ?? null, leaf: sm.getLeafId() ?? null }));
	stage("tree");
	writeFileSync(`${prefix}.tree.json`, JSON.stringify(treeJson(sm)));
	const ctx: Record<string, any> = {};
	const llm: Record<string, any> = {};
	const wantLlm = !args.includes("--no-llm") && typeof convertToLlm === "function";
	for (const e of sampled(entries, Number(flag(args, "--sample", 60)), Number(flag(args, "--head", 0)))) {
		if (skip.has(e.id)) continue;
		stage(`context ${e.id}`);
		ctx[e.id] = buildSessionContext(entries, e.id, undefined, options);
		if (wantLlm) { stage(`llm ${e.id}`); llm[e.id] = { ...ctx[e.id], messages: convertToLlm(ctx[e.id].messages) }; }
	}
	if (!skip.has("__open__")) {
		stage("context __open__");
		ctx.__open__ = sm.buildSessionContext();
		if (wantLlm) { stage("llm __open__"); llm.__open__ = { ...ctx.__open__, messages: convertToLlm(ctx.__open__.messages) }; }
	}
	writeFileSync(`${prefix}.context.json`, JSON.stringify(ctx));
	if (wantLlm) {
		// --llm-max-bytes N: keep only the keys whose converted context serializes to at most N bytes.
		const max = Number(flag(args, "--llm-max-bytes", 0));
		if (max) for (const k of Object.keys(llm)) if (JSON.stringify(llm[k]).length > max) delete llm[k];
		writeFileSync(`${prefix}.llm.json`, JSON.stringify(llm));
	}
	await sm.close?.();
	stage("done");
}

function expectOuter(file: string, prefix: string, args: string[]) {
	for (const ext of ["context.json", "llm.json", "tree.json", "entries.json", "meta.json", "open.jsonl", "error.txt"]) rmSync(`${prefix}.${ext}`, { force: true });
	const timeout = Number(flag(args, "--timeout", 20));
	const errors: string[] = [];
	const skip: string[] = [];
	for (let attempt = 0; attempt < 8; attempt++) {
		const dir = mkdtempSync(join(tmpdir(), "omp-oracle-"));
		const copy = join(dir, "s.jsonl");
		copyFileSync(file, copy);
		chmodSync(copy, 0o644);
		const status = join(dir, "status");
		const t0 = Date.now();
		const res = spawnSync(process.execPath, [SELF, "expect-inner", copy, prefix, "--status", status, "--orig", file, "--skip", skip.join(","), ...args],
			{ cwd: "/", timeout: timeout * 1000, killSignal: "SIGKILL", encoding: "utf8", maxBuffer: 1 << 26 });
		const secs = ((Date.now() - t0) / 1000).toFixed(1);
		if (res.stderr) res.stderr = res.stderr.split(copy).join("<copy of input>").split(dir).join("<tmpdir>");
		const st = existsSync(status) ? readFileSync(status, "utf8") : "start";
		rmSync(dir, { recursive: true, force: true });
		if (res.status === 0 && st === "done") break;
		const kind = (res.error as any)?.code === "ETIMEDOUT" || (res.signal === "SIGKILL" && Number(secs) >= timeout - 0.5)
			? `hang: no result within ${timeout}s (killed)`
			: res.signal ? `crash: killed by ${res.signal} after ${secs}s` : `throw: exit code ${res.status}`;
		const errLines = (res.stderr || "").split("\n").filter((l) => l.trim() && !l.startsWith("    at ") && !/^\s*\d+ \|/.test(l));
		const tail = errLines.slice(-4).join("\n    ");
		const [what0, id] = st.split(" ");
		const what = what0 === "context" || what0 === "llm"
			? `${what0 === "llm" ? "convertToLlm(buildSessionContext" : "buildSessionContext"}(entries, ${id === "__open__" ? "leaf via sm.buildSessionContext()" : JSON.stringify(id)})`
			: st === "open" ? "SessionManager.open(copy)" : st === "tree" ? "sm.getTree()" : st;
		errors.push(`${what}: ${kind}${tail ? `\n    stderr: ${tail}` : ""}`);
		if (what0 === "context" || what0 === "llm") { skip.push(id); continue; }
		break;
	}
	if (errors.length) {
		writeFileSync(`${prefix}.error.txt`, `omp 18.2.3 on ${basename(file)}\n` + errors.join("\n") + "\n" +
			(skip.length ? `context keys left out of context.json/llm.json: ${skip.join(", ")}\n` : ""));
	}
}

function plain(v: any): any {
	if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
	return v;
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "gen") {
	const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
	const [outDir, seed, n] = args;
	const sm = SessionManager.create("/work/project", outDir);
	await applyOps(sm, makeOps(Number(seed), Number(n), { images: args.includes("--images"), noTools: args.includes("--no-tools") }));
	await sm.flush();
	await sm.close?.();
	console.log(sm.getSessionFile());
} else if (cmd === "expect") {
	expectOuter(resolve(args[0]), resolve(args[1]), args.slice(2));
} else if (cmd === "expect-inner") {
	await expectInner(args[0], args[1], args.slice(2));
} else if (cmd === "list") {
	const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
	const dir = resolve(args[0]);
	const infos = await SessionManager.list("/unused", dir);
	const out = infos.map((i: any) => {
		const o: any = {};
		for (const [k, v] of Object.entries(i)) o[k] = plain(v);
		o.path = i.path.startsWith(dir + "/") ? i.path.slice(dir.length + 1) : i.path;
		return o;
	});
	writeFileSync(args[1], JSON.stringify(out, null, 1) + "\n");
} else {
	console.error("usage: omp-oracle.ts gen|expect|list ...");
	process.exit(2);
}
process.exit(0);
