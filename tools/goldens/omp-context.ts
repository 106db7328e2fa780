// Golden maker for omp's LLM context (goldens/omp-context/): drives the REAL oh-my-pi 18.2.3
// SessionManager under bun to write sessions that use every entry type and option omp's
// buildSessionContext reacts to, and records its answers. Run by tools/goldens/omp-context.sh.
//
//   bun omp-context.ts gen FILE SEED N     session made through omp's API (rich op mix), moved to FILE
//   bun omp-context.ts raw FILE KIND       session whose tail is hand-written lines (odd values omp's API
//                                          would not produce), appended after an API-made head
//   bun omp-context.ts expect FILE OUT     OUT = {"<id>": buildSessionContext(entries, id), ...,
//                                          "store:<id>": the same with snapcompact frames resolved from the
//                                          blob store (only where it differs), "__open__": sm.buildSessionContext(),
//                                          "__null__": buildSessionContext(entries, null)}
//
// PI_CODING_AGENT_DIR must point at the agent dir whose blobs/ the goldens ship with.
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
const { buildSessionContext } = await import(`${ROOT}/session-context.ts`);
const { BlobStore, lazyImageDataSync } = await import(`${ROOT}/blob-store.ts`);
const { getBlobsDir } = await import(`${ROOT}/../../../pi-utils/src/index.ts`);

function rng(seed: number) {
	let s = seed >>> 0 || 1;
	return () => {
		s ^= s << 13; s >>>= 0;
		s ^= s >>> 17;
		s ^= s << 5; s >>>= 0;
		return s / 4294967296;
	};
}

const WORDS = ["alpha", "beta", "the", "bug", "fix", "ünïcödé", "日本語", "emoji😀", "quote\"s", "back\\slash",
	"tab\tchar", "new\nline", "</summary>", "null", "  ", "|", "```"];

function b64(r: () => number, chars: number) {
	const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	let s = "";
	for (let i = 0; i < chars; i++) s += a[Math.floor(r() * 64)];
	return s;
}

const OP_KINDS = ["user", "assistant", "assistantTools", "toolResults", "assistantError", "assistantAborted",
	"assistantEmptyError", "assistantRetry", "assistantCopilot", "assistantRedacted", "bash", "python", "fileMention",
	"developer", "customRole", "thinking", "model", "serviceTier", "mode", "ttsr", "sessionInit", "reset",
	"compaction", "compactionRemote", "compactionAnthropic", "compactionSnap", "compactionRollover", "branch",
	"branchSummary", "resetLeaf", "label", "custom", "notes", "customMessage", "interrupted", "skillPrompt",
	"credentialPin"];

function applyOp(sm: any, r: () => number, kind: string, st: { t: number; seq: number; pending: string[] }) {
	const text = (n: number) => {
		const out = [];
		const len = 1 + Math.floor(r() * n);
		for (let i = 0; i < len; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
		return out.join(" ");
	};
	const pick = (list: any[]) => (list.length ? list[Math.min(list.length - 1, Math.floor(r() * list.length))] : undefined);
	st.t += 1000 + Math.floor(r() * 4000);
	const ts = st.t;
	const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const provider = pick(["anthropic", "openai", "google"]);
	const model = pick(["claude-sonnet-4-5", "gpt-5.1", "gemini-3-pro"]);
	const assistant = (content: any[], stopReason: string, extra: any = {}) =>
		sm.appendMessage({ role: "assistant", content, api: "anthropic-messages", provider, model, usage, stopReason, timestamp: ts, ...extra });
	const calls = (n: number) => {
		const ids = [];
		for (let i = 0; i < n; i++) ids.push(`call_${++st.seq}`);
		return ids;
	};
	const callBlocks = (ids: string[]) => ids.map(id => ({ type: "toolCall", id, name: "bash", arguments: { command: "ls" } }));
	switch (kind) {
		case "user":
			sm.appendMessage({ role: "user", content: r() < 0.5 ? text(10) : [{ type: "text", text: text(10) }, { type: "image", data: b64(r, 200), mimeType: "image/png" }], timestamp: ts });
			break;
		case "assistant":
			assistant([...(r() < 0.4 ? [{ type: "thinking", thinking: text(5), ...(r() < 0.5 ? { thinkingSignature: "sig" + st.seq } : {}) }] : []), { type: "text", text: text(20) }], "stop");
			break;
		case "assistantTools": {
			const ids = calls(1 + Math.floor(r() * 3));
			assistant([{ type: "thinking", thinking: text(4), thinkingSignature: "sig-" + ids[0] }, { type: "text", text: text(8) }, ...callBlocks(ids)], "toolUse");
			st.pending.push(...ids);
			break;
		}
		case "toolResults": {
			// Answer some pending calls (the others stay dangling on this path).
			const keep: string[] = [];
			for (const id of st.pending) {
				if (r() < 0.7) sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: text(10) }], isError: r() < 0.1, timestamp: ts });
				else keep.push(id);
			}
			st.pending = keep;
			break;
		}
		case "assistantError": {
			const ids = r() < 0.5 ? calls(1) : [];
			assistant([{ type: "text", text: text(5) }, ...callBlocks(ids)], "error", { errorMessage: "boom" });
			for (const id of ids) sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: "aborted" }], isError: true, timestamp: ts });
			break;
		}
		case "assistantAborted": {
			const ids = calls(2);
			assistant([{ type: "thinking", thinking: text(3) }, ...callBlocks(ids)], "aborted");
			for (const id of ids) sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: "No result provided" }], isError: true, timestamp: ts });
			if (r() < 0.5) sm.appendCustomMessageEntry("interrupted-thinking", "The previous turn was interrupted.", false, { blockCount: 1 }, "agent");
			break;
		}
		case "assistantEmptyError":
			assistant(pick([[], [{ type: "text", text: "  \n" }], [{ type: "thinking", thinking: " ", thinkingSignature: "" }], [{ type: "fallback" }], [{ type: "redactedThinking", data: "" }]]), "error");
			break;
		case "assistantRetry":
			assistant([{ type: "text", text: text(4) }], "stop", { retryRecovery: true });
			break;
		case "assistantCopilot": {
			const ids = r() < 0.5 ? calls(1) : [];
			sm.appendMessage({ role: "assistant", content: [{ type: "thinking", thinking: text(3), thinkingSignature: "enc" }, { type: "text", text: text(5) }, ...callBlocks(ids)],
				api: "openai-responses", provider: r() < 0.7 ? "github-copilot" : "openai", model: "gpt-5.1", usage, stopReason: ids.length ? "toolUse" : "stop", timestamp: ts,
				providerPayload: { type: r() < 0.8 ? "openaiResponsesHistory" : "other", items: [{ type: "reasoning", id: "rs_1" }] } });
			st.pending.push(...ids);
			break;
		}
		case "assistantRedacted": {
			const ids = calls(1);
			assistant([{ type: "redactedThinking", data: "opaque" }, { type: "thinking", thinking: text(3), thinkingSignature: "s" }, ...callBlocks(ids)], "toolUse");
			st.pending.push(...ids);
			break;
		}
		case "bash":
			sm.appendMessage({ role: "bashExecution", command: "ls", output: text(8), exitCode: r() < 0.8 ? 0 : 2, cancelled: false, truncated: false, ...(r() < 0.3 ? { excludeFromContext: true } : {}), timestamp: ts });
			break;
		case "python":
			sm.appendMessage({ role: "pythonExecution", code: "print(1)", output: text(5), exitCode: 0, cancelled: false, truncated: false, timestamp: ts });
			break;
		case "fileMention":
			sm.appendMessage({ role: "fileMention", files: [{ path: "src/a.ts", content: text(6) }], timestamp: ts });
			break;
		case "developer":
			sm.appendMessage({ role: "developer", content: text(6), timestamp: ts });
			break;
		case "customRole":
			sm.appendMessage({ role: "custom", customType: pick(["note", "skill-prompt", "collab-prompt", "interrupted-thinking"]), content: text(5), display: r() < 0.5, attribution: pick(["user", "agent", undefined]), timestamp: ts });
			break;
		case "thinking":
			sm.appendThinkingLevelChange(pick(["off", "low", "high", "xhigh", undefined]), pick(["auto", "medium", undefined]));
			break;
		case "model":
			sm.appendModelChange(`${provider}/${model}`, pick([undefined, "default", "smol", "slow", "plan", "fallback"]), r() < 0.2);
			break;
		case "serviceTier":
			sm.appendServiceTierChange(pick([{ openai: "flex" }, { anthropic: "priority", google: "bad" }, null, { openai: "scale", google: "auto" }, "priority", "claude-only", "flex"]));
			break;
		case "mode":
			if (r() < 0.5) sm.appendModeChange("plan", { planFile: "plan.md", step: Math.floor(r() * 5) });
			else sm.appendModeChange(pick(["none", "ask", "plan"]));
			break;
		case "ttsr":
			sm.appendTtsrInjection([pick(["no-any", "tests-first", "small-diffs"]), pick(["no-any", "docs"])]);
			break;
		case "sessionInit":
			sm.appendSessionInit({ systemPrompt: "You are a subagent.", task: text(5), tools: ["read", "bash"], agent: "task", modelRole: "smol" });
			break;
		case "reset":
			sm.appendResetBoundary();
			break;
		case "compaction":
		case "compactionRemote":
		case "compactionAnthropic":
		case "compactionSnap":
		case "compactionRollover": {
			const path = sm.getBranch();
			const target = r() < 0.15 ? pick(sm.getEntries()) : pick(path);
			if (!target) break;
			const opts: any = { method: pick([undefined, "soft", "remote", "snapcompact"]), tokensAfter: r() < 0.5 ? Math.floor(r() * 5000) : undefined };
			if (kind === "compactionRemote") {
				opts.preserveData = { openaiRemoteCompaction: { provider: pick(["openai", ""]), replacementHistory: [{ type: "message", role: "user", content: [{ type: "input_text", text: text(4) }] }, ...(r() < 0.2 ? ["not-a-record"] : [])] } };
				if (r() < 0.6) opts.providerReplayThroughEntryId = pick(path)?.id;
			} else if (kind === "compactionAnthropic") {
				opts.preserveData = { anthropicCompaction: { provider: "anthropic", content: text(10), ...(r() < 0.5 ? { encryptedContent: "enc" } : {}), ...(r() < 0.5 ? { filesText: "<files/>" } : {}), model: "claude", usedTokens: 123 } };
			} else if (kind === "compactionSnap") {
				const frames = [];
				const n = pick([1, 2, 3, 17]);
				const legacy = n === 17 || r() < 0.3;
				for (let i = 0; i < n; i++) {
					// >= 1024 base64 chars are externalized to the blob store by omp's persistence.
					frames.push({ data: b64(r, pick([64, 1200])), mimeType: "image/png", cols: 80, rows: 40, chars: 3200,
						...(legacy ? {} : { font: "8x13", variant: "bw", lineRepeat: 1 }), ...(r() < 0.3 ? { detail: "high" } : {}) });
				}
				if (r() < 0.3) frames.push({ data: "blob:sha256:" + "ab".repeat(32), mimeType: "image/png", cols: 1, rows: 1, chars: 1 });
				if (r() < 0.2) frames.push({ data: "", mimeType: "image/png", cols: 1, rows: 1, chars: 1 });
				const head = `head ${text(6)}\u2588line two\u000e dim\u000f ![img](data:image/png;base64,iVBORw0KGgo=) and data:text/plain;charset=utf-8;base64,SGVsbG8gd29ybGQ […12ch elided…] QQ==`;
				opts.preserveData = { snapcompact: { frames, totalChars: 9000, truncatedChars: r() < 0.5 ? 0 : 42, ...(r() < 0.5 ? { textHead: head } : {}), ...(r() < 0.7 ? { textTail: `tail ${text(6)}` } : {}), ...(r() < 0.3 ? { text: text(8) } : {}) } };
			} else if (kind === "compactionRollover") {
				opts.details = { kind: "experimental-context-rollover", readFiles: [] };
			} else if (r() < 0.5) {
				opts.details = { readFiles: ["a.ts"], modifiedFiles: [] };
			}
			sm.appendCompaction(text(12), r() < 0.6 ? text(3) : undefined, target.id, Math.floor(r() * 90000), opts);
			break;
		}
		case "branch": {
			const e = pick(sm.getEntries());
			if (e) sm.branch(e.id);
			st.pending = [];
			break;
		}
		case "branchSummary": {
			const e = pick(sm.getEntries());
			if (r() < 0.15) sm.branchWithSummary(null, text(6));
			else if (e) sm.branchWithSummary(e.id, r() < 0.15 ? "" : text(8), r() < 0.5 ? { readFiles: [] } : undefined, r() < 0.3);
			st.pending = [];
			break;
		}
		case "resetLeaf":
			sm.resetLeaf();
			st.pending = [];
			break;
		case "label": {
			const e = pick(sm.getEntries());
			if (e) sm.appendLabelChange(e.id, r() < 0.3 ? undefined : text(2));
			break;
		}
		case "custom":
			sm.appendCustomEntry("ext-" + Math.floor(r() * 3), r() < 0.5 ? { n: 1 } : undefined);
			break;
		case "notes": {
			const body = pick([
				`- task: ${text(4)}   \n\n\n- next: ${text(3)}\n|  a  |  b |\n| :-- | --: |\n\`\`\`\n  keep   \n\n\n\`\`\``,
				text(6),
				"",
				"line\r\nwith cr  \n  indented\u00a0\n</experimental-context-notes>\n<tag>\n",
			]);
			const data = pick([{ version: 1, text: body }, { version: 1, text: body }, { version: 2, text: body }, { version: 1, text: body, extra: true }, { version: 1, text: "x".repeat(16_385) }]);
			sm.appendCustomEntry("experimental_context_notes", data);
			break;
		}
		case "customMessage":
			sm.appendCustomMessageEntry(pick(["hook-a", "prewalk-plan", "vibe-mode-context", "", undefined]), r() < 0.5 ? text(6) : [{ type: "text", text: text(6) }], pick([true, false, undefined]), r() < 0.5 ? { k: 1 } : undefined, pick(["user", "agent", undefined]), r() < 0.3 ? ts : undefined);
			break;
		case "interrupted":
			sm.appendCustomMessageEntry("interrupted-thinking", "Interrupted.", false, undefined, "agent");
			break;
		case "skillPrompt":
			sm.appendCustomMessageEntry(pick(["skill-prompt", "collab-prompt"]), `/skill:${text(1)}`, true, undefined, pick(["user", "agent"]));
			break;
		case "credentialPin":
			sm.appendCredentialPin("anthropic", "hash" + st.seq);
			break;
	}
}

async function gen(file: string, seed: number, n: number) {
	const dir = mkdtempSync(join(tmpdir(), "omp-ctx-gen-"));
	const sm = SessionManager.create("/work/project", dir);
	const r = rng(seed);
	const st = { t: 1763681581000, seq: 0, pending: [] as string[] };
	// Every kind once (in a seed-dependent order), then a random mix.
	const order = [...OP_KINDS].sort(() => r() - 0.5);
	for (let i = 0; i < n; i++) {
		const kind = i < order.length ? order[i] : OP_KINDS[Math.floor(r() * OP_KINDS.length)];
		applyOp(sm, r, kind, st);
	}
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "done" }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
		usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: st.t + 1 });
	await sm.flush();
	await sm.close?.();
	renameSync(sm.getSessionFile(), file);
}

// Hand-written tails: values and shapes omp's own API never writes, but a file can hold.
function rawEntries(kind: string): any[] {
	const a = (content: any, extra: any = {}) => ({ role: "assistant", content, api: "x", provider: "p", model: "m", stopReason: "stop", timestamp: 1, ...extra });
	if (kind === "odd-values") return [
		{ type: "model_change", model: "a/b", role: 7 },
		{ type: "model_change", model: "c/d", role: "10" },
		{ type: "model_change", model: "e/f", role: "2" },
		{ type: "model_change", model: { o: 1 }, role: "obj" },
		{ type: "model_change", model: "", role: "empty" },
		{ type: "model_change", model: "g/h", role: "__proto__" },
		{ type: "model_change", model: "i/j", role: null },
		{ type: "message", message: a([{ type: "text", text: "after explicit default" }], { provider: ["x", null, 2], model: null }) },
		{ type: "thinking_level_change", thinkingLevel: 3 },
		{ type: "thinking_level_change", configured: "auto" },
		{ type: "thinking_level_change", thinkingLevel: null, configured: null },
		{ type: "service_tier_change", serviceTier: ["priority"] },
		{ type: "service_tier_change", serviceTier: "scale" },
		{ type: "service_tier_change", serviceTier: 5 },
		{ type: "ttsr_injection", injectedRules: ["r1", "r1", 1, 1.0, null, { o: 1 }, { o: 1 }, true] },
		{ type: "ttsr_injection", injectedRules: "a😀a" },
		{ type: "mode_change", mode: null, data: [1] },
		{ type: "custom_message", customType: 5, content: "numeric type", display: "yes", attribution: null },
		{ type: "custom_message", customType: "hook", content: { text: "object" }, display: true },
		{ type: "custom_message", customType: "hook", content: [], display: false, details: null, attribution: "user" },
		{ type: "branch_summary", summary: 0, fromId: "x" },
		{ type: "branch_summary", summary: "no fromId" },
		{ type: "branch_summary", summary: ["array"], fromId: 3, timestamp: null },
		{ type: "custom_message", customType: "t", content: "ts bool", display: true, timestamp: true },
		{ type: "custom_message", customType: "t", content: "ts array", display: true, timestamp: ["2025-01-02T03:04:05.000Z"] },
		{ type: "custom_message", customType: "t", content: "ts number", display: true, timestamp: 1.5e12 + 0.7 },
		{ type: "message", message: a("string content") },
		{ type: "message", message: a([{ type: "text", text: "\u3000\ufeff" }, { type: "thinking", thinking: "", thinkingSignature: " x " }], { stopReason: "error" }) },
		{ type: "message", message: a([{ type: "thinking", thinking: " ", thinkingSignature: null }, { type: "image", data: "AA", mimeType: "image/png" }], { stopReason: "error" }) },
		{ type: "message", message: a([{ type: "toolCall", name: "no-id" }], { stopReason: "toolUse" }) },
		{ type: "message", message: { role: "toolResult", toolName: "no-call-id", content: [], isError: false, timestamp: 2 } },
		{ type: "message", message: a([{ type: "toolCall", id: { o: 1 }, name: "object-id" }, "bare string block", { type: "thinking", thinking: "t", thinkingSignature: "s" }], { stopReason: "toolUse" }) },
		{ type: "message", message: a([{ type: "toolCall", id: 5, name: "numeric" }, { type: "text", text: "x" }], { stopReason: "aborted" }) },
		{ type: "message", message: { role: "toolResult", toolCallId: 5.0, toolName: "n", content: [], isError: true, timestamp: 3 } },
		{ type: "message", message: { role: "toolResult", toolCallId: 5, toolName: "n", content: [], isError: true, timestamp: 3 } },
		{ type: "message", message: "a string payload" },
		{ type: "message", message: a([{ type: "text", text: "retry 0" }], { retryRecovery: 0 }) },
		{ type: "mode_change", data: { only: "data" } },
		{ type: "message", message: a([{ type: "text", text: "last" }], { provider: "github-copilot", providerPayload: { type: "openaiResponsesHistory", items: [] } }) },
	];
	if (kind === "compactions") return [
		{ type: "message", message: { role: "user", content: "before", timestamp: 1 } },
		{ type: "custom_message", customType: "skill-prompt", content: "/skill:x", display: true, attribution: "user" },
		{ type: "message", message: { role: "user", content: "dropped request, kept by the rollover", timestamp: 1 } },
		{ type: "message", message: { role: "assistant", content: [{ type: "text", text: "kept" }], api: "x", provider: "p", model: "m", stopReason: "stop", timestamp: 1 }, id: "keep0001" },
		{ type: "compaction", summary: "s1", firstKeptEntryId: "keep0001", tokensBefore: 1, details: { kind: "experimental-context-rollover" } },
		{ type: "message", message: { role: "user", content: "after rollover", timestamp: 1 } },
		{ type: "compaction", summary: "no first kept", tokensBefore: 2, preserveData: { anthropicCompaction: { provider: "anthropic", content: "c" } } },
		{ type: "message", message: { role: "user", content: "x", timestamp: 1 }, timestamp: "not a date" },
		{ type: "compaction", summary: { obj: 1 }, firstKeptEntryId: "keep0001", tokensBefore: "n", shortSummary: null, warning: "w", preserveData: { openaiRemoteCompaction: { provider: "openai", replacementHistory: [] }, anthropicCompaction: { provider: "a", content: "" } }, providerReplayThroughEntryId: "keep0001" },
		{ type: "message", message: { role: "user", content: "tail", timestamp: 1 } },
		{ type: "custom", customType: "experimental_context_notes", data: { text: "notes | a |  \n\n\n<x>\n\n</x>", version: 1 } },
		{ type: "reset_boundary" },
		{ type: "message", message: { role: "user", content: "after reset", timestamp: 1 } },
		{ type: "custom", customType: "experimental_context_notes", data: { version: 1, text: "fresh" } },
	];
	// omp 18.3.4's retained range for Anthropic replay compactions (firstKeptEntryId "" with
	// providerReplayThroughEntryId) and where its `historyRewriteAt` comes from.
	if (kind === "replay-snapshots") {
		const anthropic = { anthropicCompaction: { provider: "anthropic", content: "native" } };
		const u = (content: string) => ({ type: "message", message: { role: "user", content, timestamp: 1 } });
		return [
			{ ...u("turn 1"), id: "snap0001" },
			u("turn 2 (retained after the snapshot)"),
			u("turn 3 (retained after the snapshot)"),
			{ type: "compaction", summary: "through snap0001", firstKeptEntryId: "", providerReplayThroughEntryId: "snap0001", tokensBefore: 10, preserveData: anthropic },
			u("after 1"),
			{ ...u("turn 4"), id: "snap0002" },
			{ type: "compaction", summary: "through the entry just before", firstKeptEntryId: "", providerReplayThroughEntryId: "snap0002", tokensBefore: 11, preserveData: anthropic },
			u("after 2"),
			{ type: "compaction", summary: "through a missing id", firstKeptEntryId: "", providerReplayThroughEntryId: "missing0", tokensBefore: 12, preserveData: anthropic },
			u("after 3"),
			{ type: "compaction", summary: "empty first kept, no snapshot", firstKeptEntryId: "", tokensBefore: 13, preserveData: anthropic },
			u("after 4"),
			{ ...u("turn 5"), id: "snap0003" },
			u("turn 6"),
			{ type: "compaction", summary: "no firstKeptEntryId key", providerReplayThroughEntryId: "snap0003", tokensBefore: 14, preserveData: anthropic },
			u("after 5"),
			{ ...u("turn 7"), id: "snap0004" },
			u("turn 8"),
			{ type: "compaction", summary: "not anthropic", firstKeptEntryId: "", providerReplayThroughEntryId: "snap0004", tokensBefore: 15 },
			u("after 6"),
			{ ...u("turn 9"), id: "snap0005" },
			u("turn 10"),
			{ type: "compaction", summary: "both kept and snapshot", firstKeptEntryId: "snap0005", providerReplayThroughEntryId: "snap0005", tokensBefore: 16, preserveData: anthropic, warning: "w" },
			u("after 7"),
			{ ...u("turn 11"), id: "snap0006" },
			{ ...u("turn 12"), timestamp: "not a date" },
			{ type: "compaction", summary: "retained entry without a date", firstKeptEntryId: "", providerReplayThroughEntryId: "snap0006", tokensBefore: 17, preserveData: anthropic },
			{ type: "compaction", summary: "last, nothing after", firstKeptEntryId: "", providerReplayThroughEntryId: "snap0001", tokensBefore: 18, preserveData: anthropic, tokensAfter: 3, method: "remote" },
		];
	}
	throw new Error("unknown raw kind " + kind);
}

async function raw(file: string, kind: string) {
	const dir = mkdtempSync(join(tmpdir(), "omp-ctx-raw-"));
	const sm = SessionManager.create("/work/project", dir);
	sm.appendMessage({ role: "user", content: "head", timestamp: 1 });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], api: "x", provider: "anthropic", model: "claude", stopReason: "stop", timestamp: 2 });
	await sm.flush();
	await sm.close?.();
	const src = sm.getSessionFile();
	let parent = sm.getLeafId();
	let n = 0;
	for (const body of rawEntries(kind)) {
		n++;
		const id = body.id ?? `r${String(n).padStart(7, "0")}`;
		const entry = { type: body.type, id, parentId: parent, timestamp: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`, ...body };
		appendFileSync(src, JSON.stringify(entry) + "\n");
		parent = id;
	}
	renameSync(src, file);
}

async function expect(file: string, out: string) {
	const dir = mkdtempSync(join(tmpdir(), "omp-ctx-exp-"));
	const copy = join(dir, "s.jsonl");
	copyFileSync(file, copy);
	const sm = await SessionManager.open(copy);
	const entries = sm.getEntries();
	const blobs = new BlobStore(getBlobsDir());
	const resolveFrameData = (data: string) => lazyImageDataSync(blobs, data);
	const res: Record<string, unknown> = {};
	for (const e of entries) {
		if (typeof e.id !== "string") continue;
		const bare = buildSessionContext(entries, e.id);
		res[e.id] = bare;
		const store = buildSessionContext(entries, e.id, undefined, { resolveFrameData });
		if (JSON.stringify(store) !== JSON.stringify(bare)) res[`store:${e.id}`] = store;
	}
	res.__open__ = sm.buildSessionContext();
	res.__null__ = buildSessionContext(entries, null);
	await sm.close?.();
	if (readFileSync(copy, "utf8") !== readFileSync(file, "utf8")) throw new Error(`omp rewrote ${file} on open`);
	writeFileSync(out, JSON.stringify(res));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "gen") await gen(args[0], Number(args[1]), Number(args[2]));
else if (cmd === "raw") await raw(args[0], args[1]);
else if (cmd === "expect") await expect(args[0], args[1]);
else {
	console.error("usage: omp-context.ts gen FILE SEED N | raw FILE KIND | expect FILE OUT");
	process.exit(2);
}
process.exit(0);
