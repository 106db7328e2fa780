// Deterministic random operation scripts for the golden-file oracles.
// Based on /work/shared/reference/ops.mjs (team code), extended so that every append method of pi and omp
// is exercised: bashExecution variants, custom-role messages, compaction/branch-summary details and flags,
// omp-only entries (ttsr_injection, session_init, mode_change, service_tier_change, title).
// The op list depends only on (seed, n, opts); each runner resolves "pick" fractions against its live state
// and ignores the ops it has no API for (pi skips the omp-only ones).

export function rng(seed) {
	let s = seed >>> 0 || 1;
	return () => {
		s ^= s << 13; s >>>= 0;
		s ^= s >>> 17;
		s ^= s << 5; s >>>= 0;
		return s / 4294967296;
	};
}

const WORDS = ["alpha", "beta", "gamma", "refactor", "the", "bug", "in", "session", "manager", "fix", "tests",
	"ünïcödé", "日本語", "emoji😀", "quote\"s", "back\\slash", "tab\tchar", "new\nline", "</summary>", "null",
	"ctl\u0001x", "crlf\r\n", "u2028\u2028", "slash/", "del\u007f"];

function text(r, n) {
	const out = [];
	const len = 1 + Math.floor(r() * n);
	for (let i = 0; i < len; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
	return out.join(" ");
}

function b64(r, bytes) {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	let s = "";
	for (let i = 0; i < Math.ceil(bytes / 3) * 4; i++) s += chars[Math.floor(r() * 64)];
	return s;
}

const BASH_VARIANTS = ["ok", "fail", "empty", "cancelled", "truncated", "excluded"];

function bashOp(r, t, variant) {
	const v = variant ?? BASH_VARIANTS[Math.floor(r() * BASH_VARIANTS.length)];
	const op = { op: "bash", variant: v, command: r() < 0.5 ? "ls -la" : "grep -rn \"x\" src | head", output: text(r, 20), ts: t };
	if (v === "empty") op.output = "";
	return op;
}

function kindOf(op) {
	switch (op.op) {
		case "bash": return `bash:${op.variant}`;
		case "branchSummary": return op.pick === null ? "branchSummary:root" : "branchSummary";
		case "label": return op.label === "" ? "label:clear" : "label";
		case "customMessage": return typeof op.content === "string" ? "customMessage:string" : "customMessage:array";
		default: return op.op;
	}
}

// One op of a given kind (used for the coverage pass).
function forced(kind, r, t) {
	switch (kind) {
		case "user": return { op: "user", text: text(r, 12), image: null, ts: t };
		case "assistant": return assistant(r, t, { noTools: true });
		case "customRole": return { op: "customRole", customType: "role-custom", content: text(r, 6), display: true, details: { why: "forced" }, ts: t };
		case "thinking": return { op: "thinking", level: "high", configured: "auto" };
		case "model": return { op: "model", provider: "openai", modelId: "gpt-4o", role: "smol" };
		case "compaction": return { op: "compaction", keep: 0.5, summary: text(r, 10), shortSummary: "short " + text(r, 2), tokensBefore: 1234, offPath: false, details: { readFiles: ["a.ts"], modifiedFiles: [] }, fromHook: true, preserveData: { k: [1, 2] } };
		case "branch": return { op: "branch", pick: 0.3 };
		case "branchSummary": return { op: "branchSummary", pick: 0.4, summary: text(r, 8), details: { readFiles: [], modifiedFiles: ["b.ts"] }, fromHook: false };
		case "branchSummary:root": return { op: "branchSummary", pick: null, summary: text(r, 8) };
		case "reset": return { op: "reset" };
		case "label": return { op: "label", pick: 0.6, label: text(r, 2) };
		case "label:clear": return { op: "label", pick: 0.6, label: "" };
		case "custom": return { op: "custom", customType: "ext-0", data: { n: 7, s: text(r, 3) } };
		case "customMessage:string": return { op: "customMessage", customType: "hook-0", content: text(r, 5), display: true, details: { k: 1 }, ts: t };
		case "customMessage:array": return { op: "customMessage", customType: "hook-1", content: [{ type: "text", text: text(r, 5) }], display: false, details: undefined, ts: t };
		case "name": return { op: "name", name: text(r, 3) };
		case "ttsr": return { op: "ttsr", rules: ["rule-a", "rule-b"] };
		case "sessionInit": return { op: "sessionInit", systemPrompt: "You are a test.", task: text(r, 5), tools: ["bash", "read"] };
		case "mode": return { op: "mode", mode: "plan", data: { step: 1 } };
		case "serviceTier": return { op: "serviceTier", tier: null };
		case "title": return { op: "title", title: "Title " + text(r, 3), source: "user" };
		default:
			if (kind.startsWith("bash:")) return bashOp(r, t, kind.slice(5));
			throw new Error(kind);
	}
}

const ALL_KINDS = ["user", "assistant", "customRole", "thinking", "model", "compaction", "branch", "branchSummary",
	"branchSummary:root", "reset", "label", "label:clear", "custom", "customMessage:string", "customMessage:array", "name",
	"ttsr", "sessionInit", "mode", "serviceTier", "title", ...BASH_VARIANTS.map((v) => `bash:${v}`)];

function assistant(r, t, opts) {
	const calls = !opts.noTools && r() < 0.4 ? 1 + Math.floor(r() * 2) : 0;
	return { op: "assistant", text: text(r, 15), thinking: r() < 0.3 ? text(r, 8) : null, ncalls: calls,
		provider: r() < 0.7 ? "anthropic" : "openai", model: r() < 0.5 ? "claude-sonnet-4-5" : "gpt-5.1-codex",
		input: Math.floor(r() * 5000), output: Math.floor(r() * 900), ts: t };
}

// Build a list of ops. Picks are fractions in [0,1) resolved against the runner's live state.
// With n >= 40 (or opts.cover), every op kind above is guaranteed to occur at least once.
export function makeOps(seed, n, opts = {}) {
	const r = rng(seed);
	const ops = [];
	let t = 1763681581000;
	for (let i = 0; i < n; i++) {
		t += 1000 + Math.floor(r() * 5000);
		const x = r();
		if (x < 0.18) {
			const withImage = opts.images && r() < 0.3;
			ops.push({ op: "user", text: text(r, 12), image: withImage ? b64(r, 300 + Math.floor(r() * 1200)) : null, ts: t });
		} else if (x < 0.38) {
			ops.push(assistant(r, t, opts));
		} else if (x < 0.42) {
			ops.push(bashOp(r, t));
		} else if (x < 0.44) {
			ops.push({ op: "customRole", customType: "role-" + Math.floor(r() * 2), content: r() < 0.5 ? text(r, 8) : [{ type: "text", text: text(r, 8) }], display: r() < 0.5, details: r() < 0.5 ? { n: 1 } : undefined, ts: t });
		} else if (x < 0.47) {
			ops.push({ op: "thinking", level: ["off", "minimal", "low", "medium", "high", "xhigh"][Math.floor(r() * 6)], configured: r() < 0.3 ? "auto" : undefined });
		} else if (x < 0.50) {
			ops.push({ op: "model", provider: r() < 0.5 ? "openai" : "anthropic", modelId: r() < 0.5 ? "gpt-4o" : "claude-opus-4", role: r() < 0.3 ? "smol" : undefined });
		} else if (x < 0.55) {
			const flavour = r();
			ops.push({ op: "compaction", keep: r(), summary: text(r, 20), tokensBefore: Math.floor(r() * 100000), offPath: r() < 0.15,
				shortSummary: r() < 0.5 ? text(r, 3) : undefined,
				details: flavour < 0.4 ? { readFiles: ["src/a.ts"], modifiedFiles: ["src/b.ts"] } : undefined,
				fromHook: flavour < 0.2 ? true : flavour < 0.6 ? false : undefined,
				preserveData: flavour > 0.8 ? { note: text(r, 2) } : undefined });
		} else if (x < 0.62) {
			ops.push({ op: "branch", pick: r() });
		} else if (x < 0.66) {
			const flavour = r();
			ops.push({ op: "branchSummary", pick: r() < 0.1 ? null : r(), summary: text(r, 20),
				details: flavour < 0.4 ? { readFiles: [], modifiedFiles: [] } : undefined,
				fromHook: flavour < 0.2 ? true : flavour < 0.6 ? false : undefined });
		} else if (x < 0.67) {
			ops.push({ op: "reset" });
		} else if (x < 0.72) {
			ops.push({ op: "label", pick: r(), label: r() < 0.25 ? "" : text(r, 2) });
		} else if (x < 0.76) {
			ops.push({ op: "custom", customType: "ext-" + Math.floor(r() * 3), data: r() < 0.1 ? undefined : { n: Math.floor(r() * 100), s: text(r, 3) } });
		} else if (x < 0.81) {
			ops.push({ op: "customMessage", customType: "hook-" + Math.floor(r() * 3), content: r() < 0.5 ? text(r, 10) : [{ type: "text", text: text(r, 10) }], display: r() < 0.5, details: r() < 0.5 ? { k: 1 } : undefined, ts: t });
		} else if (x < 0.84) {
			ops.push({ op: "name", name: r() < 0.2 ? "  " : text(r, 4) });
		} else if (x < 0.86) {
			ops.push({ op: "ttsr", rules: ["rule-" + Math.floor(r() * 4)] });
		} else if (x < 0.87) {
			ops.push({ op: "sessionInit", systemPrompt: "You are agent " + Math.floor(r() * 9), task: text(r, 8), tools: ["bash", "read", "edit"] });
		} else if (x < 0.89) {
			ops.push({ op: "mode", mode: r() < 0.5 ? "plan" : "none", data: r() < 0.5 ? { why: text(r, 2) } : undefined });
		} else if (x < 0.90) {
			ops.push({ op: "serviceTier", tier: r() < 0.5 ? null : { openai: "priority" } });
		} else if (x < 0.91) {
			ops.push({ op: "title", title: text(r, 4), source: r() < 0.5 ? "user" : "auto" });
		} else {
			ops.push({ op: "user", text: text(r, 25), image: null, ts: t });
		}
		// Expand tool calls into result ops.
		const last = ops[ops.length - 1];
		if (last.op === "assistant" && !last.toolCalls) expandCalls(r, last, ops);
	}
	if (opts.cover ?? n >= 40) {
		const seen = new Set(ops.map(kindOf));
		for (const kind of ALL_KINDS) {
			if (opts.noTools && kind === "toolResult") continue;
			if (seen.has(kind)) continue;
			const op = forced(kind, r, t);
			if (op.op === "assistant") op.ncalls = 0;
			const at = 1 + Math.floor(r() * (ops.length - 1));
			const list = [op];
			if (op.op === "assistant") expandCalls(r, op, list);
			ops.splice(at, 0, ...list);
		}
	}
	// Always end with an assistant message so the file is persisted.
	ops.push({ op: "assistant", text: "done", thinking: null, toolCalls: [], provider: "anthropic", model: "claude-sonnet-4-5", input: 1, output: 1, ts: t + 10 });
	// Number tool calls in final order so ids are deterministic and unique.
	let seq = 0;
	const pending = [];
	for (const op of ops) {
		if (op.op === "assistant") {
			op.toolCalls = op.toolCalls.map(() => `call_${++seq}`);
			pending.push(...op.toolCalls);
		} else if (op.op === "toolResult") {
			op.toolCallId = pending.shift() ?? `call_orphan_${++seq}`;
		}
	}
	return ops;
}

function expandCalls(r, a, ops) {
	const n = a.ncalls ?? 0;
	a.toolCalls = new Array(n).fill(null);
	for (let c = 0; c < n; c++) {
		ops.push({ op: "toolResult", toolName: r() < 0.5 ? "bash" : "read", text: text(r, 20), isError: r() < 0.1, details: r() < 0.3 ? { exitCode: 0 } : undefined, ts: a.ts + 1 });
	}
}

function usage(op) {
	return { input: op.input, output: op.output, cacheRead: 0, cacheWrite: 0, totalTokens: op.input + op.output,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

export function userMessage(op) {
	const content = op.image
		? [{ type: "text", text: op.text }, { type: "image", data: op.image, mimeType: "image/png" }]
		: op.text;
	return { role: "user", content, timestamp: op.ts };
}

export function assistantMessage(op) {
	const content = [];
	if (op.thinking) content.push({ type: "thinking", thinking: op.thinking });
	content.push({ type: "text", text: op.text });
	for (const id of op.toolCalls) content.push({ type: "toolCall", id, name: "bash", arguments: { command: "ls -la" } });
	return { role: "assistant", content, api: "anthropic-messages", provider: op.provider, model: op.model, usage: usage(op),
		stopReason: op.toolCalls.length ? "toolUse" : "stop", timestamp: op.ts };
}

export function toolResultMessage(op) {
	const m = { role: "toolResult", toolCallId: op.toolCallId, toolName: op.toolName, content: [{ type: "text", text: op.text }] };
	if (op.details) m.details = op.details;
	m.isError = op.isError;
	m.timestamp = op.ts;
	return m;
}

export function bashMessage(op) {
	const m = { role: "bashExecution", command: op.command, output: op.output, exitCode: 0, cancelled: false, truncated: false };
	switch (op.variant) {
		case "fail": m.exitCode = 2; break;
		case "cancelled": m.exitCode = undefined; m.cancelled = true; break;
		case "truncated": m.truncated = true; m.fullOutputPath = "/tmp/pi-bash-full-output.log"; m.exitCode = 1; break;
	}
	m.timestamp = op.ts;
	if (op.variant === "excluded") m.excludeFromContext = true;
	return m;
}

export function customRoleMessage(op) {
	return { role: "custom", customType: op.customType, content: op.content, display: op.display, details: op.details, timestamp: op.ts };
}

// Resolve a fraction against a list; returns undefined for an empty list.
export function pick(list, f) {
	if (!list.length) return undefined;
	return list[Math.min(list.length - 1, Math.floor(f * list.length))];
}
