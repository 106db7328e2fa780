#!/usr/bin/env node
// pi oracle: drives the REAL pi SessionManager (npm @mariozechner/pi-coding-agent 0.73.1, installed under /tmp/peers
// by make-goldens.sh) to produce golden files for arbor. Only regeneration needs node; arbor's tests only read files.
//
//   node pi-oracle.mjs gen OUTDIR SEED N [--images] [--no-tools]  -> prints the new session file path
//   node pi-oracle.mjs expect FILE OUTPREFIX [--sample K] [--head H] [--timeout S] [--no-llm] [--no-entries] [--llm-max-bytes N]
//        writes OUTPREFIX.{context,llm,tree,entries,meta}.json, OUTPREFIX.open.jsonl and, when something failed,
//        OUTPREFIX.error.txt. FILE itself is never opened by pi: a temp copy is.
//   node pi-oracle.mjs list DIR OUT.json
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { treeJson } from "./tree-json.mjs";
import { bashMessage, customRoleMessage, assistantMessage, makeOps, pick, toolResultMessage, userMessage } from "./ops.mjs";

// PI_PKG: the module to import (default: 0.73.1's index.js; tools/goldens/pi15/make.sh points it at pi 1.5.2's shim).
const PKG = process.env.PI_PKG ?? "/tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js";
const SELF = fileURLToPath(import.meta.url);
const pi = () => import(PKG);

function flag(args, name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}

function applyOps(sm, ops) {
	for (const op of ops) {
		const entries = sm.getEntries();
		const path = sm.getBranch();
		switch (op.op) {
			case "user": sm.appendMessage(userMessage(op)); break;
			case "assistant": sm.appendMessage(assistantMessage(op)); break;
			case "toolResult": sm.appendMessage(toolResultMessage(op)); break;
			case "bash": sm.appendMessage(bashMessage(op)); break;
			case "customRole": sm.appendMessage(customRoleMessage(op)); break;
			case "thinking": sm.appendThinkingLevelChange(op.level); break;
			case "model": sm.appendModelChange(op.provider, op.modelId); break;
			case "compaction": {
				const target = op.offPath ? pick(entries, op.keep) : pick(path, op.keep);
				if (!target) break;
				sm.appendCompaction(op.summary, target.id, op.tokensBefore, op.details, op.fromHook);
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
			case "name": sm.appendSessionInfo(op.name); break;
			default: break; // omp-only ops (ttsr, sessionInit, mode, serviceTier, title): pi has no API for them
		}
	}
}

// Context keys: every entry with a string id, or an even sample of K plus the last one; plus the first H entries.
function sampled(entries, k, head) {
	const withId = entries.filter((e) => e && typeof e === "object" && typeof e.id === "string");
	let out;
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
function writeOpenBytes(copy, prefix, orig) {
	const after = readFileSync(copy);
	if (orig && existsSync(orig) && after.equals(readFileSync(orig))) return;
	writeFileSync(`${prefix}.open.jsonl`, after);
}

// OUTPREFIX.entries.json is written only when getEntries() differs from "every non-empty line of the opened file,
// JSON-parsed, minus the omp title slot (line 1, type "title") and minus the first header line".
function entriesAreFileLines(entries, text) {
	try {
		const lines = text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
		if (lines.length && lines[0] && lines[0].type === "title") lines.shift();
		lines.shift();
		return JSON.stringify(entries) === JSON.stringify(lines);
	} catch {
		return false;
	}
}

async function expectInner(copy, prefix, args) {
	const status = flag(args, "--status");
	const skip = new Set((flag(args, "--skip", "") || "").split(",").filter(Boolean));
	const stage = (s) => writeFileSync(status, s);
	const { SessionManager, buildSessionContext, convertToLlm } = await pi();
	stage("open");
	let sm;
	try {
		sm = SessionManager.open(copy);
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
	const ctx = {};
	const llm = {};
	const wantLlm = !args.includes("--no-llm");
	const keys = sampled(entries, Number(flag(args, "--sample", 60)), Number(flag(args, "--head", 0)));
	for (const e of keys) {
		if (skip.has(e.id)) continue;
		stage(`context ${e.id}`);
		ctx[e.id] = buildSessionContext(entries, e.id);
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
	stage("done");
}

// Runs expect-inner in a child with a timeout and a small heap, retrying without the context keys that
// hang/crash (pi's parent walks have no cycle guard), and records every failure in OUTPREFIX.error.txt.
function expectOuter(file, prefix, args) {
	for (const ext of ["context.json", "llm.json", "tree.json", "entries.json", "meta.json", "open.jsonl", "error.txt"]) rmSync(`${prefix}.${ext}`, { force: true });
	const timeout = Number(flag(args, "--timeout", 20));
	const errors = [];
	const skip = [];
	for (let attempt = 0; attempt < 8; attempt++) {
		const dir = mkdtempSync(join(tmpdir(), "pi-oracle-"));
		const copy = join(dir, "s.jsonl");
		copyFileSync(file, copy);
		chmodSync(copy, 0o644);
		const status = join(dir, "status");
		const t0 = Date.now();
		const res = spawnSync(process.execPath, ["--max-old-space-size=512", "--stack-size=984", SELF, "expect-inner", copy, prefix,
			"--status", status, "--orig", file, "--skip", skip.join(","), ...args], { cwd: "/", timeout: timeout * 1000, killSignal: "SIGKILL", encoding: "utf8", maxBuffer: 1 << 26 });
		const secs = ((Date.now() - t0) / 1000).toFixed(1);
		if (res.stderr) res.stderr = res.stderr.split(copy).join("<copy of input>").split(dir).join("<tmpdir>");
		const st = existsSync(status) ? readFileSync(status, "utf8") : "start";
		rmSync(dir, { recursive: true, force: true });
		if (res.status === 0 && st === "done") break;
		const kind = res.error?.code === "ETIMEDOUT" || (res.signal === "SIGKILL" && Number(secs) >= timeout - 0.5)
			? `hang: no result within ${timeout}s (killed)`
			: res.signal ? `crash: killed by ${res.signal} after ${secs}s` : `throw: exit code ${res.status}`;
		const tail = (res.stderr || "").split("\n").filter((l) => l.trim() && !/^\s+at /.test(l) && !l.startsWith("Node.js v")).slice(-4).join("\n    ");
		const what = st.startsWith("context ") || st.startsWith("llm ")
			? `${st.split(" ")[0] === "llm" ? "convertToLlm(buildSessionContext" : "buildSessionContext"}(entries, ${st.split(" ")[1] === "__open__" ? "sm.getLeafId() via sm.buildSessionContext()" : JSON.stringify(st.split(" ")[1])})`
			: st === "open" ? "SessionManager.open(copy)" : st === "tree" ? "sm.getTree()" : st;
		errors.push(`${what}: ${kind}${tail ? `\n    stderr: ${tail}` : ""}`);
		if (st.startsWith("context ") || st.startsWith("llm ")) { skip.push(st.split(" ")[1]); continue; }
		break; // open/tree failures: nothing further can be produced
	}
	if (errors.length) {
		writeFileSync(`${prefix}.error.txt`, `pi ${process.env.PI_LABEL ?? "0.73.1"} on ${basename(file)}\n` + errors.join("\n") + "\n" +
			(skip.length ? `context keys left out of context.json/llm.json: ${skip.join(", ")}\n` : ""));
	}
}

function isoOrNull(d) {
	return d instanceof Date ? (Number.isNaN(d.getTime()) ? null : d.toISOString()) : d;
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "gen") {
	const { SessionManager } = await pi();
	const [outDir, seed, n] = args;
	const sm = SessionManager.create("/work/project", outDir);
	applyOps(sm, makeOps(Number(seed), Number(n), { images: args.includes("--images"), noTools: args.includes("--no-tools") }));
	console.log(sm.getSessionFile());
} else if (cmd === "expect") {
	expectOuter(resolve(args[0]), resolve(args[1]), args.slice(2));
} else if (cmd === "expect-inner") {
	await expectInner(args[0], args[1], args.slice(2));
} else if (cmd === "list") {
	const { SessionManager } = await pi();
	const dir = resolve(args[0]);
	const infos = await SessionManager.list("/unused", dir);
	const out = infos.map((i) => {
		const o = {};
		for (const [k, v] of Object.entries(i)) o[k] = isoOrNull(v);
		o.path = i.path.startsWith(dir + "/") ? i.path.slice(dir.length + 1) : i.path; // relative to DIR
		return o;
	});
	writeFileSync(args[1], JSON.stringify(out, null, 1) + "\n");
} else {
	console.error("usage: pi-oracle.mjs gen|expect|list ...");
	process.exit(2);
}
