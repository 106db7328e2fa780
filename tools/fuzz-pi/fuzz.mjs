#!/usr/bin/env node
// Differential fuzzer: arbor against the real pi 1.5.2, or the real omp 18.2.3, on mutated
// sessions. One fuzzer, two oracles (`--oracle pi`, the default, or `--oracle omp`): the
// mutations, the comparison, the minimisation and the golden writing are shared; an oracle
// names its corpus, its worker, the keys arbor adds to its contexts, its known differences
// and its golden writer (the `ORACLE === …` branches below).
//
//   node tools/fuzz-pi/fuzz.mjs --arbor target/debug/arbor [--oracle pi|omp] [--minutes 30]
//        [--seed N] [--out goldens/fuzz-ORACLE] [--log /tmp/fuzz-ORACLE.log]
//
// pi:
// Takes the golden pi sessions (goldens/pi15/*.jsonl, goldens/pi/gen-*.jsonl and edge-*.jsonl),
// mutates each case 1-4 ways (lines dropped, duplicated, reordered; odd ids, parentIds, types,
// roles, labels, summaries, timestamps and headers; context edits and compactions pointing
// anywhere; JSON lines that are not objects), and asks both sides for the tree, the context at
// open and at two leaves, and their convertToLlm: pi 1.5.2 through a worker process
// (pi-worker.mjs, killed and restarted when it hangs), arbor through its binary (`arbor tree
// --json`, `arbor context [--leaf ID] [--llm]`). A disagreement is minimised (lines removed while
// the same kind of disagreement remains) and written to OUT as NAME.jsonl with pi's answers
// (pi-oracle.mjs expect, the same files goldens/pi15 holds); OUT/summary.json counts cases,
// disagreements by kind, pi hangs and throws, and arbor crashes. Known deliberate differences
// (docs/pi-versions.md: duplicate ids in the tree, parent cycles pi hangs on) are counted apart.
//
// omp: the omp sessions of goldens/omp (a title slot put before the edge cases that have
// none, which arbor would read as pi files) and goldens/omp-context, mutated the same ways and
// in omp's (title slot, omp entry types and roles, omp compaction fields, blob references);
// omp 18.2.3 answers through omp-worker.ts under bun, arbor with `--omp-version 18.2
// --lenient`; goldens written by tools/goldens/omp-oracle.ts expect --store, into
// goldens/fuzz-omp, with the blobs a case refers to.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const args = process.argv.slice(2);
const flag = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const ARBOR = resolve(flag("--arbor", join(ROOT, "target/debug/arbor")));
const ORACLE = flag("--oracle", "pi");
if (ORACLE !== "pi" && ORACLE !== "omp") throw new Error(`--oracle pi|omp, not ${ORACLE}`);
const MINUTES = Number(flag("--minutes", 30));
const OUT = resolve(flag("--out", join(ROOT, `goldens/fuzz-${ORACLE}`)));
const LOG = flag("--log", `/tmp/fuzz-${ORACLE}.log`);
const MAX_CASES = Number(flag("--cases", 1e9));
let seed = Number(flag("--seed", Date.now() % 1e9));
const PI_PKG = process.env.PI_PKG ?? "/tmp/peers/pi15/shim.mjs";
const OMP_PKG = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const BUN = process.env.BUN ?? "/tmp/peers/omp/node_modules/.bin/bun";
const HANG_MS = 6000;
mkdirSync(OUT, { recursive: true });
const work = mkdtempSync(join(tmpdir(), `fuzz-${ORACLE}-`));
// The agent dir both sides read blobs from (PI_CODING_AGENT_DIR): omp's goldens' blobs.
mkdirSync(join(work, "agent", "blobs"), { recursive: true });
if (ORACLE === "omp") {
	for (const d of ["goldens/omp/agent/blobs", "goldens/omp-context/agent/blobs"]) {
		for (const f of readdirSync(join(ROOT, d))) copyFileSync(join(ROOT, d, f), join(work, "agent", "blobs", f));
	}
}
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const BLOBS = readdirSync(join(work, "agent", "blobs")).filter((f) => /^[0-9a-f]{64}$/.test(f));
const log = (s) => appendFileSync(LOG, `${new Date().toISOString()} ${s}\n`);

// ---- random ------------------------------------------------------------------------------
const rnd = () => {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];

const parse = (l) => { try { return JSON.parse(l); } catch { return undefined; } };
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// ---- corpus --------------------------------------------------------------------------------
// omp's title slot (the first line of every omp 18 file), as omp wrote it in goldens/omp.
const SLOT = readFileSync(join(ROOT, "goldens/omp/gen-seed1-n8.jsonl"), "utf8").split("\n")[0];
const corpus = [];
const CORPUS = ORACLE === "pi" ? ["goldens/pi15", "goldens/pi"] : ["goldens/omp", "goldens/omp-context"];
for (const d of CORPUS) {
	for (const f of readdirSync(join(ROOT, d))) {
		if (!f.endsWith(".jsonl") || f.includes(".open.") || f.includes("chain-5000") || f.startsWith("exact-wide-")) continue;
		if (d === "goldens/pi" && f.startsWith("exact-")) continue; // the same bytes as goldens/pi15/exact-*
		const text = readFileSync(join(ROOT, d, f), "utf8");
		if (text.length > 400000) continue;
		const lines = text.split("\n").filter((l) => l.trim() !== "");
		// An omp file without the slot is a pi file to arbor (dialect detection): given one.
		if (ORACLE === "omp" && lines.length && parse(lines[0])?.type !== "title") lines.unshift(SLOT);
		if (lines.length >= 2) corpus.push({ name: f, lines });
	}
}

// ---- mutations -----------------------------------------------------------------------------
const ODD_TS = ["2026-11-24 20:05:04Z", "Nov 24 2026 20:05:05 GMT", "2026-11-31T20:05:06Z", "2026-11-24T20:05:07z", "2026-11-24T20:05:08+0000",
	"2024/01/02", "1", "garbage", "", "2026-11-24T20:05:09", "24 Nov 2026 20:05:10 UTC", "2026", "11/24/2026", 1790000000000, null, 0, true, [2026]];
const ODD_ID = () => pick([null, "", 5, 6, "5", "x", "s\ud800", "s\ufffd", true, 0, "f0000002"]);
const ROLES = ["branchSummary", "compactionSummary", "system", "custom", "developer", "hookMessage", "bashExecution", "user", "assistant", "toolResult", "zzz"];
const TYPES = ["message", "custom", "custom_message", "label", "compaction", "branch_summary", "context_edit", "session_info", "usage", "model_change", "thinking_level_change", "zzz", undefined];
const NON_OBJ = ["5", '"x"', "[1,2]", "true", "0", "false", '""', "[]", "1.5"];
// The index of the header line: after omp's title slot when the first line is one.
const headerAt = (L) => (parse(L[0])?.type === "title" && L.length > 1 ? 1 : 0);

const OMP_ROLES = ["developer", "fileMention", "pythonExecution", "bashExecution", "custom", "hookMessage", "branchSummary", "compactionSummary"];
const OMP_TYPES = ["ttsr_injection", "session_init", "mode_change", "service_tier_change", "title_change", "model_usage", "credential_pin", "reset_boundary", "model_change", "thinking_level_change"];

function mutate(lines) {
	const L = [...lines];
	const H = headerAt(L);
	const ids = L.map(parse).filter(isObj).map((e) => e.id).filter((x) => x !== undefined);
	const anyId = () => (rnd() < 0.85 && ids.length ? pick(ids) : ODD_ID());
	const at = () => H + 1 + int(Math.max(1, L.length - H - 1));
	const header = (f) => { const h = parse(L[H]); if (isObj(h)) { f(h); L[H] = JSON.stringify(h); } };
	const edit = (f) => {
		const i = at();
		const e = parse(L[i]);
		if (!isObj(e)) return;
		f(e);
		L[i] = JSON.stringify(e);
	};
	const kinds = [
		() => L.length > H + 2 && L.splice(at(), 1),
		() => { const i = at(); L.splice(i, 0, L[i] ?? L[L.length - 1]); },
		() => { const i = at(), j = at(); [L[i], L[j]] = [L[j], L[i]]; },
		() => { const i = at(); const [x] = L.splice(i, 1); L.splice(at(), 0, x); },
		() => edit((e) => { e.id = ODD_ID(); }),
		() => edit((e) => { e.parentId = pick([null, "", anyId(), undefined, 5, e.id]); if (e.parentId === undefined) delete e.parentId; }),
		() => edit((e) => { const t = pick(TYPES); if (t === undefined) delete e.type; else e.type = t; }),
		() => edit((e) => { e.timestamp = pick(ODD_TS); }),
		() => edit((e) => { if (isObj(e.message)) e.message.role = pick(ROLES); }),
		() => edit((e) => { if (isObj(e.message)) e.message.summary = pick(["s", 42, ["a", "b"], { x: 1 }, null, "", undefined]); }),
		() => edit((e) => { e.label = pick([42, ["x"], { a: 1 }, "", "  ", "L", null, true]); }),
		() => edit((e) => { e.firstKeptEntryId = anyId(); }),
		() => edit((e) => { e.targetId = anyId(); }),
		() => edit((e) => { delete e.targetId; }),
		() => L.splice(at(), 0, pick(NON_OBJ)),
		() => L.push(pick(NON_OBJ)),
		() => { const last = parse(L[L.length - 1]); if (isObj(last)) { last.id = pick([null, undefined, 5]); L[L.length - 1] = JSON.stringify(last); } },
		() => L.splice(at(), 0, JSON.stringify({ type: "context_edit", id: `z${int(1e7)}`, parentId: anyId(), timestamp: pick(ODD_TS), targetId: anyId(), replacement: pick([null, { role: "user", content: "edited", timestamp: 1 }, { role: "branchSummary", summary: "b", timestamp: 1 }]) })),
		() => L.splice(at(), 0, JSON.stringify({ type: "compaction", id: `y${int(1e7)}`, parentId: anyId(), timestamp: pick(ODD_TS), summary: pick(["sum", 5]), firstKeptEntryId: anyId(), tokensBefore: 1, ...(rnd() < 0.5 ? { systemMessage: { role: pick(ROLES), content: "sys", summary: "S", timestamp: 1 } } : {}) })),
		() => L.splice(at(), 0, JSON.stringify({ type: "message", id: `w${int(1e7)}`, parentId: anyId(), timestamp: pick(ODD_TS), message: { role: pick(ROLES), content: "hi", summary: pick(["s", 3, undefined]), timestamp: 5 } })),
		() => header((h) => { h.version = pick(["3", [3], "2", {}, 2, 1, 3, undefined, "x"]); }),
		() => header((h) => { h.id = pick(["0123456789abcdef", "exact", 5]); }),
		() => header((h) => { h.timestamp = pick(ODD_TS); }),
	];
	if (ORACLE === "omp") kinds.push(...ompKinds(L, H, anyId, at, edit, header));
	const n = 1 + int(4);
	for (let k = 0; k < n; k++) pick(kinds)();
	return L;
}

// omp's own shapes: the title slot, omp's entry types and roles, omp's compaction fields.
function ompKinds(L, H, anyId, at, edit, header) {
	const slot = (f) => { if (H !== 1) return; const s = parse(L[0]); if (isObj(s)) { f(s); L[0] = JSON.stringify(s); } };
	const ins = (e) => L.splice(at(), 0, JSON.stringify({ id: `o${int(1e7)}`, parentId: anyId(), timestamp: pick(ODD_TS), ...e }));
	return [
		() => slot((s) => { s.title = pick(["", "T", "  ", 5, null, "Fix ✓"]); }),
		() => slot((s) => { s.source = pick(["user", "auto", "x", 1, undefined]); if (s.source === undefined) delete s.source; }),
		() => slot((s) => { s.v = pick([1, 2, "1", undefined]); if (s.v === undefined) delete s.v; }),
		() => slot((s) => { for (const k of ["updatedAt", "pad", "title"]) if (rnd() < 0.3) delete s[k]; }),
		() => header((h) => { h.title = pick(["H", "", 5, undefined]); if (h.title === undefined) delete h.title; }),
		() => edit((e) => { if (isObj(e.message)) e.message.role = pick(OMP_ROLES); }),
		() => edit((e) => { const t = pick(OMP_TYPES); e.type = t; }),
		() => ins({ type: "reset_boundary" }),
		() => ins({ type: "ttsr_injection", injectedRules: pick([["r1"], ["r1", "r2"], [], "r", null, [5]]) }),
		() => ins({ type: "mode_change", mode: pick(["plan", "none", "", 5, null]), ...(rnd() < 0.5 ? { data: { x: 1 } } : {}) }),
		() => ins({ type: "service_tier_change", serviceTier: pick(["priority", "flex", null, 5, ""]) }),
		() => ins({ type: "model_change", model: pick(["openai/gpt-4o", "anthropic/claude", "x", 5, ""]), ...(rnd() < 0.5 ? { role: pick(["default", "smol", "plan", 5]) } : {}) }),
		() => ins({ type: "thinking_level_change", thinkingLevel: pick(["high", "off", null, 5]), ...(rnd() < 0.5 ? { configured: pick(["high", null, 3]) } : {}) }),
		() => ins({ type: "session_init", systemPrompt: pick(["sys", 5, null]), task: pick(["t", undefined]), tools: pick([["bash"], [], "x"]) }),
		() => ins({ type: "compaction", summary: pick(["sum", "", 5]), shortSummary: pick(["short", undefined, 5]), firstKeptEntryId: anyId(), tokensBefore: 1,
			...(rnd() < 0.5 ? { preserveData: pick([{ a: 1 }, null, 5, { anthropicCompaction: { content: "c" } }]) } : {}),
			...(rnd() < 0.3 ? { fromExtension: pick([true, false, 1]) } : {}),
			...(rnd() < 0.3 ? { providerReplayThroughEntryId: anyId() } : {}) }),
		() => ins({ type: "custom_message", customType: pick(["note", "x"]), content: pick(["c", [{ type: "text", text: "t" }], 5, null]), display: pick([true, false]),
			...(rnd() < 0.5 ? { attribution: pick(["user", "agent", 5]) } : {}) }),
		() => ins({ type: "message", message: { role: pick(OMP_ROLES), content: pick(["hi", [{ type: "text", text: "t" }], 5]), timestamp: pick([5, "x", null]),
			...(rnd() < 0.5 ? { command: "ls", output: "o", code: "print(1)", files: [{ path: "a" }], summary: "s", customType: "c", display: true } : {}) } }),
		() => edit((e) => { if (e.type === "compaction") e.preserveData = pick([null, 5, {}, { anthropicCompaction: null }]); }),
		// A blob reference omp's store has, or one it has not (omp leaves that in place).
		() => edit((e) => { if (isObj(e.message)) e.message.content = [{ type: "text", text: "see" }, { type: "image", mimeType: "image/png", data: `blob:sha256:${pick(BLOBS.length && rnd() < 0.5 ? BLOBS : ["0".repeat(64), "f".repeat(63)])}` }]; }),
	];
}

// ---- the two sides -------------------------------------------------------------------------
let worker = null;
let pending = null;
let ready = null;
function startWorker() {
	// Each handler answers only for its own process: a killed (hung) worker's late output or
	// exit must not answer, or clear, the request of the worker that replaced it.
	const env = { ...process.env, TZ: "UTC", HOME: work, TMPDIR: work, PI_CODING_AGENT_DIR: join(work, "agent") };
	const w = ORACLE === "pi"
		? spawn(process.execPath, ["--max-old-space-size=512", "--stack-size=984", join(HERE, "pi-worker.mjs")], { cwd: "/", stdio: ["pipe", "pipe", "ignore"], env: { ...env, PI_PKG } })
		: spawn(BUN, [join(HERE, "omp-worker.ts")], { cwd: "/", stdio: ["pipe", "pipe", "ignore"], env: { ...env, OMP_PKG } });
	worker = w;
	// pi's worker answers at once; omp's says {"ready":true} when bun has loaded omp.
	let onReady;
	ready = ORACLE === "pi" ? Promise.resolve() : new Promise((r) => (onReady = r));
	let wbuf = "";
	w.stdout.on("data", (d) => {
		if (worker !== w) return;
		wbuf += d;
		let nl;
		while ((nl = wbuf.indexOf("\n")) >= 0) {
			const line = wbuf.slice(0, nl);
			wbuf = wbuf.slice(nl + 1);
			const v = JSON.parse(line);
			if (v.ready) { onReady?.(); continue; }
			if (!pending) continue;
			const p = pending;
			pending = null;
			p(v);
		}
	});
	w.on("exit", () => {
		if (worker !== w) return;
		worker = null;
		onReady?.();
		if (pending) { const p = pending; pending = null; p({ ok: false, stage: "crash", error: `${ORACLE} worker died (out of memory?)` }); }
	});
}
async function askPeer(file, leaves) {
	if (!worker) startWorker();
	await ready;
	if (!worker) return { ok: false, stage: "crash", error: `${ORACLE} worker died before it was ready` };
	return new Promise((res) => {
		const timer = setTimeout(() => { if (pending) { pending = null; const w = worker; worker = null; w?.kill("SIGKILL"); res({ ok: false, stage: "hang", error: "no answer in time" }); } }, HANG_MS);
		pending = (v) => { clearTimeout(timer); res(v); };
		worker.stdin.write(JSON.stringify({ file, leaves }) + "\n");
	});
}
function runArbor(argv) {
	return new Promise((res) => {
		const p = spawn(ARBOR, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TZ: "UTC", HOME: work, PI_CODING_AGENT_DIR: join(work, "agent") } });
		let out = "", err = "";
		p.stdout.on("data", (d) => (out += d));
		p.stderr.on("data", (d) => (err += d));
		const timer = setTimeout(() => p.kill("SIGKILL"), 20000);
		p.on("close", (code, sig) => { clearTimeout(timer); res({ code, sig, out, err }); });
	});
}
async function askArbor(file, leaves) {
	const jobs = [runArbor(["tree", "--json", file])];
	for (const k of leaves) {
		const leaf = k === "__open__" ? [] : ["--leaf", k];
		// --lenient: a missing blob reference left in place, as omp leaves it (arbor's default
		// refuses it, naming it: README).
		const v = ORACLE === "omp" ? ["--omp-version", "18.2", "--lenient"] : [];
		jobs.push(runArbor(["context", ...v, ...leaf, file]), runArbor(["context", "--llm", ...v, ...leaf, file]));
	}
	const r = await Promise.all(jobs);
	const out = { tree: r[0], ctx: {}, llm: {} };
	leaves.forEach((k, i) => { out.ctx[k] = r[1 + 2 * i]; out.llm[k] = r[2 + 2 * i]; });
	return out;
}

// ---- comparison ------------------------------------------------------------------------------
// The keys arbor adds to the peer's context object (README): omp's to pi's, pi's `model` to omp's.
const EXTRA = ORACLE === "pi" ? ["models", "injectedTtsrRules", "mode"] : ["model"];
const canon = (v) => (Array.isArray(v) ? v.map(canon) : isObj(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
const parseOut = (r) => { try { return JSON.parse(r.out); } catch { return undefined; } };

// JS `Number(x)` as pi's `header.version ?? 1` comparisons see it.
const jsNumber = (v) => (v === null || v === undefined ? 1 : Number(v));

function knownDifference(lines) {
	if (ORACLE === "omp") {
		// arbor reads a file as omp's by its title slot (its first line's `type` is "title"), or
		// omp 13's shape; any other file is a pi file, answered by pi's rules (README).
		const first = parse(lines[0]);
		if (!isObj(first) || first.type !== "title") {
			const h = lines.map(parse).find(isObj);
			if (!isObj(h) || typeof h.id !== "string" || !ompThirteen(h, lines)) return "pi-dialect";
		}
		lines = lines.slice(headerAt(lines));
	}
	// A v1 file (pi's coercion of header.version): pi's migration draws random ids, arbor
	// derives them from the header bytes (docs/design-notes.md): the same tree, other ids.
	const h = lines.map(parse).find((v) => v !== undefined);
	// No valid header as the first JSON line (README "edge-no-header"): pi truncates the file to a fresh
	// header and answers for an empty session; arbor refuses the file and changes nothing.
	if (!isObj(h) || h.type !== "session" || typeof h.id !== "string") return "no-header";
	if (jsNumber(h.version) < 2) return "v1-migration-ids";
	// omp 13's shape (arbor_core::doc::is_omp_mark): a 16-hex session id and an entry only omp's
	// API writes make the file omp's to arbor; pi reads it as its own.
	if (ORACLE === "pi" && ompThirteen(h, lines)) return "omp-13-shape";
	// docs/pi-versions.md: duplicate ids (pi lists the later entry twice in getTree()).
	// Keys as pi's Map has them: every entry without an id (a JSON line that is not an object
	// included) shares the key `undefined`; object ids are keys by identity (never shared).
	// (pi 1.5 skips the falsy lines `0`, `false`, `""`; omp 18 keeps them: README.)
	const entries = lines.slice(lines.findIndex((l) => parse(l) !== undefined) + 1).map(parse).filter((v) => (ORACLE === "omp" ? v !== undefined && v !== null : v));
	const seen = new Set();
	for (const e of entries) {
		const id = isObj(e) ? e.id : undefined;
		if (id !== null && typeof id === "object") continue;
		const k = id === undefined ? "undefined" : JSON.stringify(id);
		if (seen.has(k)) return "duplicate-ids";
		seen.add(k);
	}
	// omp runs under bun: JavaScriptCore's sort orders siblings differently from V8's (which
	// arbor follows) when the comparator is inconsistent, i.e. a sibling's timestamp is NaN
	// (docs/pi-versions.md). The tree only: contexts are compared.
	if (ORACLE === "omp") {
		const groups = new Map();
		for (const e of entries.filter(isObj)) {
			const k = JSON.stringify(e.parentId ?? null);
			groups.set(k, [...(groups.get(k) ?? []), e]);
		}
		for (const g of groups.values()) {
			if (g.length >= 2 && g.some((e) => Number.isNaN(new Date(e.timestamp).getTime()))) return "jsc-sibling-order";
		}
	}
	return null;
}
// Known differences of the tree only: the contexts of such a case are still compared.
const TREE_ONLY = new Set(["duplicate-ids", "jsc-sibling-order"]);

// omp 13's shape (arbor_core::doc::is_omp_mark): a 16-hex session id and an entry only omp's API writes.
function ompThirteen(h, lines) {
	const MARKS = ["ttsr_injection", "session_init", "mode_change", "service_tier_change", "title_change", "model_usage", "credential_pin", "reset_boundary"];
	return /^[0-9a-fA-F]{16}$/.test(h.id) && lines.map(parse).filter(isObj).some((e) =>
		MARKS.includes(e.type) || (e.type === "model_change" && typeof e.model === "string" && !("provider" in e)) || (e.type === "custom_message" && "attribution" in e));
}

async function compare(lines) {
	const file = join(work, "case.jsonl");
	writeFileSync(file, lines.join("\n") + "\n");
	// Leaves: entries (not the header) with a string id; arbor's CLI refuses an unknown id where
	// pi falls back to the last entry (a user-facing choice: `arbor context --leaf` names a typo).
	// (An id with a lone surrogate cannot travel through argv: the core takes it as a key, the
	// goldens check that, exact-surrogate-ids.)
	const es = lines.slice(headerAt(lines) + 1).map(parse).filter(isObj).filter((e) => typeof e.id === "string" && e.type !== "session" && e.id.isWellFormed());
	const leaves = ["__open__"];
	for (let k = 0; k < 2 && es.length; k++) { const id = pick(es).id; if (!leaves.includes(id)) leaves.push(id); }
	const pi = await askPeer(file, leaves);
	const ar = await askArbor(file, leaves);
	const diffs = [];
	for (const r of [ar.tree, ...Object.values(ar.ctx), ...Object.values(ar.llm)]) {
		if (r.code === 101 || r.sig || /panicked/.test(r.err)) diffs.push({ kind: "arbor-crash", detail: r.err.slice(0, 300) });
	}
	if (!pi.ok) return { pi: pi.stage === "hang" ? "hang" : "throw", why: `${pi.stage}: ${String(pi.error).slice(0, 70)}`, diffs, leaves };
	const t = parseOut(ar.tree);
	if (!t) diffs.push({ kind: "tree-error", detail: ar.tree.err.slice(0, 300) });
	else if (!same(t, pi.tree)) diffs.push({ kind: "tree", detail: "" });
	for (const k of leaves) {
		if (pi.thrown[k]) continue;
		for (const [part, mine, theirs] of [["context", ar.ctx[k], pi.ctx[k]], ["llm", ar.llm[k], pi.llm[k]]]) {
			// omp's convertToLlm throws on a message that is not an object; arbor answers (README).
			if (part === "llm" && pi.llmThrown?.[k]) continue;
			const v = parseOut(mine);
			if (!v) { diffs.push({ kind: `${part}-error`, key: k === "__open__" ? "open" : "leaf", detail: mine.err.slice(0, 300) }); continue; }
			for (const x of EXTRA) delete v[x];
			if (!same(v, theirs)) diffs.push({ kind: part, key: k === "__open__" ? "open" : "leaf", detail: "" });
		}
	}
	return { pi: "ok", diffs, leaves };
}

const sig = (r) => [...new Set(r.diffs.map((d) => d.kind + (d.key ? `:${d.key}` : "")))].sort().join(",");

async function minimise(lines, want) {
	let cur = lines;
	for (let i = cur.length - 1; i >= 1; i--) {
		const next = cur.filter((_, j) => j !== i);
		const r = await compare(next);
		const k = knownDifference(next);
		if (TREE_ONLY.has(k)) r.diffs = r.diffs.filter((d) => d.kind !== "tree");
		if (r.diffs.length && sig(r) === want && (!k || TREE_ONLY.has(k))) cur = next;
	}
	return cur;
}

// A hung pi worker never reads its stdin's end: take it down with the driver.
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { worker?.kill("SIGKILL"); process.exit(130); });
process.on("exit", () => worker?.kill("SIGKILL"));

// --recheck DIR: compare every DIR/*.jsonl again (a fixed arbor should agree now) and print
// each file's verdict; nothing is written.
if (args.includes("--recheck")) {
	const dir = resolve(flag("--recheck"));
	for (const f of readdirSync(dir).filter((f) => f.endsWith(".jsonl") && !f.includes(".open."))) {
		const lines = readFileSync(join(dir, f), "utf8").split("\n").filter((l) => l.trim() !== "");
		let verdict = "agree";
		for (let k = 0; k < 3; k++) {
			const r = await compare(lines);
			if (r.pi !== "ok") { verdict = `${ORACLE} ${r.pi}`; break; }
			if (r.diffs.length) { verdict = `${knownDifference(lines) ?? "DISAGREE"} ${sig(r)}`; break; }
		}
		console.log(`${f}\t${verdict}`);
	}
	worker?.kill("SIGKILL");
	process.exit(0);
}

// ---- main loop -------------------------------------------------------------------------------
const t0 = Date.now();
const stats = { oracle: ORACLE, seed, arbor: ARBOR, peer: ORACLE === "pi" ? PI_PKG : OMP_PKG, cases: 0, peerHang: 0, peerThrow: 0, throws: {}, agree: 0, disagree: 0, known: {}, kinds: {}, crashes: 0, written: [] };
const found = new Set(existsSync(join(OUT, "summary.json")) ? [] : []);
while (Date.now() - t0 < MINUTES * 60000 && stats.cases < MAX_CASES) {
	const base = pick(corpus);
	const lines = mutate(base.lines);
	stats.cases++;
	// The counts so far, every 200 cases (an interrupted run still reports).
	if (stats.cases % 200 === 0) writeFileSync(join(OUT, "summary.json"), JSON.stringify({ ...stats, minutes: (Date.now() - t0) / 60000 }, null, 1) + "\n");
	const r = await compare(lines);
	if (r.pi === "hang") stats.peerHang++;
	if (r.pi === "throw") { stats.peerThrow++; stats.throws[r.why] = (stats.throws[r.why] ?? 0) + 1; }
	if (r.diffs.some((d) => d.kind === "arbor-crash")) stats.crashes++;
	if (!r.diffs.length) { if (r.pi === "ok") stats.agree++; continue; }
	const known = knownDifference(lines);
	// Duplicate keys change only the tree: contexts are still compared.
	if (TREE_ONLY.has(known)) r.diffs = r.diffs.filter((d) => d.kind !== "tree");
	if (known && !r.diffs.some((d) => d.kind === "arbor-crash") && (!TREE_ONLY.has(known) || !r.diffs.length)) { stats.known[known] = (stats.known[known] ?? 0) + 1; continue; }
	stats.disagree++;
	const s = sig(r);
	stats.kinds[s] = (stats.kinds[s] ?? 0) + 1;
	log(`case ${stats.cases} from ${base.name}: ${s} ${r.diffs.map((d) => d.detail).filter(Boolean).join(" | ").slice(0, 300)}`);
	if (found.has(s) || stats.written.length >= 60) continue;
	found.add(s);
	const small = await minimise(lines, s);
	const name = `fuzz-${createHash("sha256").update(small.join("\n")).digest("hex").slice(0, 10)}`;
	writeFileSync(join(OUT, `${name}.jsonl`), small.join("\n") + "\n");
	if (ORACLE === "pi") {
		spawnSync(process.execPath, [join(ROOT, "tools/goldens/pi-oracle.mjs"), "expect", join(OUT, `${name}.jsonl`), join(OUT, name), "--sample", "1000", "--timeout", "10"],
			{ env: { ...process.env, PI_PKG, PI_LABEL: "1.5.2", TZ: "UTC", LC_ALL: "C" }, stdio: "ignore" });
	} else {
		// The blobs the case refers to go with it (OUT/agent/blobs: what the goldens test reads).
		for (const [, hash] of small.join("\n").matchAll(/blob:sha256:([0-9a-f]{64})/g)) {
			if (!existsSync(join(work, "agent", "blobs", hash))) continue;
			mkdirSync(join(OUT, "agent", "blobs"), { recursive: true });
			copyFileSync(join(work, "agent", "blobs", hash), join(OUT, "agent", "blobs", hash));
		}
		spawnSync(BUN, [join(ROOT, "tools/goldens/omp-oracle.ts"), "expect", join(OUT, `${name}.jsonl`), join(OUT, name), "--sample", "1000", "--timeout", "20", "--store"],
			{ env: { ...process.env, OMP_PKG, TZ: "UTC", LC_ALL: "C", HOME: work, PI_CODING_AGENT_DIR: join(work, "agent") }, stdio: "ignore" });
	}
	stats.written.push({ name, kind: s, from: base.name, lines: small.length });
	log(`wrote ${name} (${small.length} lines) for ${s}`);
	writeFileSync(join(OUT, "summary.json"), JSON.stringify({ ...stats, minutes: (Date.now() - t0) / 60000 }, null, 1) + "\n");
}
worker?.kill("SIGKILL");
const summary = { ...stats, minutes: (Date.now() - t0) / 60000 };
writeFileSync(join(OUT, "summary.json"), JSON.stringify(summary, null, 1) + "\n");
console.log(JSON.stringify(summary, null, 1));
process.exit(0);
