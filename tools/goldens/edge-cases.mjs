#!/usr/bin/env node
// Writes the hand-written edge-case INPUT files of the golden corpus (exact bytes are spelled out here so that
// BOMs, CRLFs, torn lines, lone surrogates and odd numbers survive). The expectations next to them are produced
// by pi-oracle.mjs / omp-oracle.ts (see make-goldens.sh). Every input is described in goldens/README.md.
//
//   node edge-cases.mjs pi DIR | pi-list DIR | omp DIR | omp-list DIR
import { mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [mode, dir] = process.argv.slice(2);
const CHAIN_LEN = Number(process.env.CHAIN_LEN ?? 5000);

const J = (o) => JSON.stringify(o);
const ts = (s) => `2025-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const ms = (s) => Date.parse(ts(s));
const hdr = (extra = {}) => J({ type: "session", version: 3, id: "edge-session", timestamp: ts(0), cwd: "/p", ...extra });
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text, s) => ({ role: "user", content: text, timestamp: ms(s) });
const asst = (text, s, extra = {}) => ({ role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "stop", timestamp: ms(s), ...extra });
const M = (id, parentId, s, message) => J({ type: "message", id, parentId, timestamp: ts(s), message });
const lines = (...ls) => ls.join("\n") + "\n";

// v1 (no ids; compactions carry firstKeptEntryIndex into the FULL array, header = index 0).
function v1Compaction() {
	const e = (o) => J(o);
	return lines(
		J({ type: "session", id: "v1-session", timestamp: ts(0), cwd: "/p" }),
		e({ type: "message", timestamp: ts(1), message: user("u1", 1) }), // index 1
		e({ type: "message", timestamp: ts(2), message: asst("a1", 2) }), // 2
		e({ type: "thinking_level_change", timestamp: ts(3), thinkingLevel: "high" }), // 3
		e({ type: "message", timestamp: ts(4), message: user("u2", 4) }), // 4
		e({ type: "message", timestamp: ts(5), message: asst("a2", 5) }), // 5
		e({ type: "compaction", timestamp: ts(6), summary: "S1 keeps from index 4", firstKeptEntryIndex: 4, tokensBefore: 100 }), // 6
		e({ type: "message", timestamp: ts(7), message: user("u3", 7) }), // 7
		e({ type: "model_change", timestamp: ts(8), provider: "openai", modelId: "gpt-4o" }), // 8
		e({ type: "message", timestamp: ts(9), message: asst("a3", 9) }), // 9
		e({ type: "compaction", timestamp: ts(10), summary: "S2 index 0 (the header)", firstKeptEntryIndex: 0, tokensBefore: 200 }), // 10
		e({ type: "message", timestamp: ts(11), message: user("u4", 11) }), // 11
		e({ type: "compaction", timestamp: ts(12), summary: "S3 out of range", firstKeptEntryIndex: 999, tokensBefore: 300 }), // 12
		e({ type: "message", timestamp: ts(13), message: asst("a4", 13) }), // 13
		e({ type: "compaction", timestamp: ts(14), summary: "S4 forward index 16", firstKeptEntryIndex: 16, tokensBefore: 400 }), // 14
		e({ type: "message", timestamp: ts(15), message: user("u5", 15) }), // 15
		e({ type: "message", timestamp: ts(16), message: asst("a5", 16) }), // 16
		e({ type: "compaction", timestamp: ts(17), summary: "S5 index 15 backwards", firstKeptEntryIndex: 15, tokensBefore: 500 }), // 17
		e({ type: "message", timestamp: ts(18), message: user("u6", 18) }), // 18
		e({ type: "compaction", timestamp: ts(19), summary: "S6 index as string", firstKeptEntryIndex: "18", tokensBefore: 600 }), // 19
	);
}

function v2HookMessage() {
	return lines(
		J({ type: "session", version: 2, id: "v2-session", timestamp: ts(0), cwd: "/p" }),
		M("a0000001", null, 1, user("hello", 1)),
		M("a0000002", "a0000001", 2, { role: "hookMessage", customType: "my-hook", content: "hook text", display: true, details: { x: 1 }, timestamp: ms(2) }),
		M("a0000003", "a0000002", 3, { role: "hookMessage", customType: "my-hook", content: [{ type: "text", text: "hook array" }], display: false, timestamp: ms(3) }),
		M("a0000004", "a0000003", 4, asst("reply", 4)),
		J({ type: "custom_message", customType: "cm", content: "custom message entry", display: true, id: "a0000005", parentId: "a0000004", timestamp: ts(5) }),
	);
}

const basic = [
	hdr(),
	M("b0000001", null, 1, user("first", 1)),
	M("b0000002", "b0000001", 2, asst("second", 2)),
	M("b0000003", "b0000002", 3, user("third", 3)),
	M("b0000004", "b0000003", 4, asst("fourth", 4)),
];

function piFiles() {
	const f = {};
	f["edge-v1-compaction-index"] = v1Compaction();
	f["edge-v2-hookmessage"] = v2HookMessage();
	f["edge-bom"] = "\uFEFF" + lines(...basic);
	f["edge-crlf"] = basic.join("\r\n") + "\r\n";
	f["edge-blank-and-malformed-lines"] = lines(basic[0], basic[1], "", "   ", "{\"type\":\"message\",\"id\":\"bad\",", basic[2], "not json at all", basic[3], basic[4]);
	f["edge-bom-crlf-mixed"] = "\uFEFF" + [basic[0], basic[1], "", "{oops", basic[2], basic[3]].join("\r\n") + "\r\n" + basic[4];
	f["edge-no-final-newline"] = basic.join("\n");
	f["edge-torn-last-line"] = lines(...basic.slice(0, 4)) + basic[4].slice(0, 60);
	f["edge-lone-surrogate"] = lines(
		hdr(),
		// written with JSON escapes; the raw file stays valid UTF-8
		`{"type":"message","id":"c0000001","parentId":null,"timestamp":"${ts(1)}","message":{"role":"user","content":"lone \\ud83d high surrogate and \\udc00 low","timestamp":${ms(1)}}}`,
		`{"type":"message","id":"c0000002","parentId":"c0000001","timestamp":"${ts(2)}","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"echo \\ud83d"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":${J(usage)},"stopReason":"toolUse","timestamp":${ms(2)}}}`,
		`{"type":"message","id":"c0000003","parentId":"c0000002","timestamp":"${ts(3)}","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"out \\ud83d end"}],"isError":false,"timestamp":${ms(3)}}}`,
		`{"type":"message","id":"c0000004","parentId":"c0000003","timestamp":"${ts(4)}","message":{"role":"user","content":[{"type":"text","text":"pair \\ud83d\\ude00 ok, reversed \\ude00\\ud83d"}],"timestamp":${ms(4)}}}`,
		M("c0000005", "c0000004", 5, asst("done", 5)),
	);
	// Invalid UTF-8 bytes (0xff, and CESU-8 encoded surrogate 0xED 0xA0 0xBD) inside a JSON string.
	f["edge-invalid-utf8"] = Buffer.concat([
		Buffer.from(lines(hdr(), M("d0000001", null, 1, user("ok", 1)))),
		Buffer.from(`{"type":"message","id":"d0000002","parentId":"d0000001","timestamp":"${ts(2)}","message":{"role":"user","content":"bad `),
		Buffer.from([0xff, 0x20, 0xed, 0xa0, 0xbd]),
		Buffer.from(` bytes","timestamp":${ms(2)}}}\n`),
		Buffer.from(lines(M("d0000003", "d0000002", 3, asst("reply", 3)))),
	]);
	const numbers = (version) => lines(
		J({ type: "session", version, id: "num-session", timestamp: ts(0), cwd: "/p" }),
		`{"type":"message","id":"e0000001","parentId":null,"timestamp":"${ts(1)}","message":{"role":"user","content":"numbers","timestamp":1735689601000.0}}`,
		`{"type":"message","id":"e0000002","parentId":"e0000001","timestamp":"${ts(2)}","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"calc","arguments":{"b":1.0,"a":1e2,"2":"two","1":"one","01":"zero-one","-1":"neg","4294967294":"max-index","4294967295":"not-index","big":12345678901234567890,"small":1e-7,"tiny":0.000001,"negzero":-0,"huge":1e400,"exp":1E21,"dup":1,"dup":2}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1.0,"output":2e0,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}},"stopReason":"toolUse","timestamp":1735689602000}}`,
		`{"type":"message","id":"e0000003","parentId":"e0000002","timestamp":"${ts(3)}","message":{"role":"toolResult","toolCallId":"t1","toolName":"calc","content":[{"type":"text","text":"ok"}],"details":{"10":"ten","9":"nine","x":[1.50,2.0e1,-0.0]},"isError":false,"timestamp":1735689603000}}`,
		J({ type: "custom", customType: "nums", data: { 3: "c", 1: "a", z: 9007199254740993 }, id: "e0000004", parentId: "e0000003", timestamp: ts(4) }).replace("9007199254740992", "9007199254740993"),
		M("e0000005", "e0000004", 5, asst("fin", 5)),
	);
	f["edge-numbers-v3"] = numbers(3);
	f["edge-numbers-v2"] = numbers(2); // v2 -> migration rewrite re-serializes every line
	f["edge-duplicate-ids"] = lines(
		hdr(),
		M("f0000001", null, 1, user("u1", 1)),
		M("f0000002", "f0000001", 2, asst("first f0000002", 2)),
		M("f0000003", "f0000002", 3, user("child of f0000002", 3)),
		M("f0000002", "f0000001", 4, asst("second f0000002 (same id)", 4)),
		M("f0000004", "f0000002", 5, user("child after duplicate", 5)),
		M("f0000005", "f0000004", 6, asst("end", 6)),
	);
	f["edge-orphan"] = lines(
		hdr(),
		M("g0000001", null, 1, user("root", 1)),
		M("g0000002", "g0000001", 2, asst("a", 2)),
		M("g0000003", "missing0", 3, user("orphan: parent not present", 3)),
		M("g0000004", "g0000003", 4, asst("child of orphan", 4)),
	);
	f["edge-self-parent"] = lines(
		hdr(),
		M("h0000001", null, 1, user("root", 1)),
		M("h0000002", "h0000002", 2, user("self-parented", 2)),
		M("h0000003", "h0000001", 3, asst("last entry, normal", 3)),
	);
	f["edge-cycle2"] = lines(
		hdr(),
		M("i0000001", null, 1, user("root", 1)),
		M("i0000002", "i0000003", 2, user("cycle a", 2)),
		M("i0000003", "i0000002", 3, asst("cycle b (last line: the leaf)", 3)),
	);
	f["edge-non-object-lines"] = lines(
		hdr(),
		M("j0000001", null, 1, user("u", 1)),
		"42",
		"[1]",
		"\"s\"",
		M("j0000002", "j0000001", 2, asst("a", 2)),
		"true",
	);
	f["edge-null-line"] = lines(hdr(), M("k0000001", null, 1, user("u", 1)), "null", M("k0000002", "k0000001", 2, asst("a", 2)));
	// message entries whose message is not an object: pi's buildSessionContext throws on null (on every leaf below it)
	// and passes [], a string and a number through; convertToLlm leaves them out.
	f["edge-message-not-object"] = lines(hdr(), M("n0000001", null, 1, user("u", 1)), M("n0000002", "n0000001", 2, []),
		M("n0000003", "n0000002", 3, "a string"), M("n0000004", "n0000003", 4, 5), M("n0000005", "n0000004", 5, asst("a", 5)),
		M("n0000006", "n0000005", 6, null), M("n0000007", "n0000006", 7, user("below the null", 7)));
	f["edge-bad-timestamp"] = lines(
		hdr(),
		M("l0000001", null, 1, user("u1", 1)),
		M("l0000002", "l0000001", 2, asst("a1", 2)),
		M("l0000003", "l0000002", 3, user("u2 on main", 3)),
		J({ type: "branch_summary", id: "l0000004", parentId: "l0000002", timestamp: "garbage", fromId: "l0000002", summary: "branch summary with garbage timestamp" }),
		J({ type: "custom_message", customType: "cm", content: "custom message with garbage timestamp", display: true, id: "l0000005", parentId: "l0000004", timestamp: "garbage" }),
		J({ type: "message", id: "l0000006", parentId: "l0000005", timestamp: "garbage", message: user("message entry with garbage entry timestamp", 6) }),
		J({ type: "compaction", id: "l0000007", parentId: "l0000006", timestamp: "2025-13-45T99:99:99Z", summary: "compaction with invalid date", firstKeptEntryId: "l0000005", tokensBefore: 5 }),
		M("l0000008", "l0000007", 8, asst("after", 8)),
		J({ type: "custom_message", customType: "cm", content: [{ type: "text", text: "no-Z local time" }], display: false, details: { d: 1 }, id: "l0000009", parentId: "l0000008", timestamp: "2025-01-01T00:00:09" }),
		J({ type: "custom_message", customType: "cm", content: "date only", display: false, id: "l0000010", parentId: "l0000009", timestamp: "2025-01-01" }),
		J({ type: "custom_message", customType: "cm", content: "numeric timestamp", display: false, id: "l0000011", parentId: "l0000010", timestamp: 1735689611000 }),
	);
	f["edge-empty-branch-summary"] = lines(
		hdr(),
		M("m0000001", null, 1, user("u1", 1)),
		M("m0000002", "m0000001", 2, asst("a1", 2)),
		J({ type: "branch_summary", id: "m0000003", parentId: "m0000001", timestamp: ts(3), fromId: "m0000001", summary: "" }),
		M("m0000004", "m0000003", 4, user("after empty summary", 4)),
		J({ type: "branch_summary", id: "m0000005", parentId: null, timestamp: ts(5), fromId: "root", summary: "from root", details: { readFiles: [], modifiedFiles: [] }, fromHook: false }),
		J({ type: "branch_summary", id: "m0000006", parentId: "m0000005", timestamp: ts(6), fromId: "m0000002", summary: "fromId differs from parentId" }),
		J({ type: "branch_summary", id: "m0000007", parentId: "m0000006", timestamp: ts(7), fromId: "m0000002" }),
	);
	f["edge-compaction-offpath"] = lines(
		hdr(),
		M("n0000001", null, 1, user("u1", 1)),
		M("n0000002", "n0000001", 2, asst("a1 main", 2)),
		M("n0000003", "n0000001", 3, asst("a1 other branch", 3)),
		M("n0000004", "n0000002", 4, user("u2 main", 4)),
		J({ type: "compaction", id: "n0000005", parentId: "n0000004", timestamp: ts(5), summary: "firstKept on the other branch", firstKeptEntryId: "n0000003", tokensBefore: 10 }),
		M("n0000006", "n0000005", 6, user("u3", 6)),
		J({ type: "compaction", id: "n0000007", parentId: "n0000006", timestamp: ts(7), summary: "firstKept unknown id", firstKeptEntryId: "zzzzzzzz", tokensBefore: 20 }),
		M("n0000008", "n0000007", 8, asst("a3", 8)),
		J({ type: "compaction", id: "n0000009", parentId: "n0000008", timestamp: ts(9), summary: "firstKept is the compaction itself", firstKeptEntryId: "n0000009", tokensBefore: 30 }),
		M("n0000010", "n0000009", 10, user("u4", 10)),
		J({ type: "compaction", id: "n0000011", parentId: "n0000010", timestamp: ts(11), summary: "firstKept later on the path", firstKeptEntryId: "n0000012", tokensBefore: 40 }),
		M("n0000012", "n0000011", 12, asst("a4", 12)),
		J({ type: "compaction", id: "n0000013", parentId: "n0000012", timestamp: ts(13), summary: "firstKept missing key", tokensBefore: 50 }),
		M("n0000014", "n0000013", 14, user("u5", 14)),
		J({ type: "compaction", id: "n0000015", parentId: "n0000014", timestamp: ts(15), summary: "valid, keeps from u4 (across earlier compactions)", firstKeptEntryId: "n0000010", tokensBefore: 60 }),
		M("n0000016", "n0000015", 16, asst("a5", 16)),
	);
	f["edge-labels"] = lines(
		hdr(),
		M("o0000001", null, 1, user("u1", 1)),
		M("o0000002", "o0000001", 2, asst("a1", 2)),
		J({ type: "label", id: "o0000003", parentId: "o0000002", timestamp: ts(3), targetId: "o0000001", label: "first" }),
		J({ type: "label", id: "o0000004", parentId: "o0000003", timestamp: ts(4), targetId: "o0000002", label: "second" }),
		J({ type: "label", id: "o0000005", parentId: "o0000004", timestamp: ts(5), targetId: "o0000001", label: "" }), // cleared with ""
		J({ type: "label", id: "o0000006", parentId: "o0000005", timestamp: ts(6), targetId: "o0000002" }), // cleared, label absent
		J({ type: "label", id: "o0000007", parentId: "o0000006", timestamp: ts(7), targetId: "o0000001", label: "again" }),
		J({ type: "label", id: "o0000008", parentId: "o0000007", timestamp: ts(8), targetId: "nonexist", label: "dangling" }),
		J({ type: "label", id: "o0000009", parentId: "o0000002", timestamp: ts(9), targetId: "o0000004", label: "label on a label, other branch" }),
		J({ type: "label", id: "o0000010", parentId: "o0000009", timestamp: ts(10), targetId: "o0000001", label: "   " }),
		J({ type: "label", id: "o0000011", parentId: "o0000010", timestamp: ts(11), targetId: "o0000002", label: null }),
		M("o0000012", "o0000011", 12, user("end", 12)),
	);
	f["edge-header-only"] = lines(hdr());
	f["edge-empty"] = "";
	f["edge-whitespace-only"] = "\n  \n\t\n";
	f["edge-no-header"] = lines(basic[1], basic[2], basic[3]);
	f["edge-junk-then-header"] = lines("this is junk", ...basic);
	f["edge-header-id-number"] = lines(J({ type: "session", version: 3, id: 12345, timestamp: ts(0), cwd: "/p" }), basic[1], basic[2]);
	f["edge-legacy-header-fields"] = lines(
		J({ type: "session", id: "legacy-session", timestamp: ts(0), cwd: "/p", provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "high", branchedFrom: "/old/parent.jsonl" }),
		J({ type: "message", timestamp: ts(1), message: user("hi", 1) }),
		J({ type: "message", timestamp: ts(2), message: asst("hello", 2) }),
	);
	f["edge-legacy-header-fields-v3"] = lines(
		J({ type: "session", version: 3, id: "legacy-v3", timestamp: ts(0), cwd: "/p", provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "high", branchedFrom: "/old/parent.jsonl", parentSession: "/p/parent.jsonl" }),
		M("p0000001", null, 1, user("hi", 1)),
		M("p0000002", "p0000001", 2, asst("hello", 2)),
	);
	f["edge-unknown-types"] = lines(
		hdr({ futureField: { nested: [1, 2] } }),
		M("q0000001", null, 1, user("u1", 1)),
		J({ type: "future_entry", id: "q0000002", parentId: "q0000001", timestamp: ts(2), payload: { a: 1 }, summary: "not a summary" }),
		J({ type: "message", id: "q0000003", parentId: "q0000002", timestamp: ts(3), message: asst("a1", 3), extraTopLevel: true }),
		J({ type: "message", id: "q0000004", parentId: "q0000003", timestamp: ts(4), message: { role: "developer", content: "unknown role", timestamp: ms(4) } }),
		J({ type: "session_info", id: "q0000005", parentId: "q0000004", timestamp: ts(5), name: "  spaced name  " }),
		J({ type: "model_usage", id: "q0000006", parentId: "q0000005", timestamp: ts(6), purpose: "title", api: "x", provider: "openai", model: "gpt-4o-mini", usage, stopReason: "stop" }),
		J({ type: "reset_boundary", id: "q0000007", parentId: "q0000006", timestamp: ts(7) }),
		J({ id: "q0000008", parentId: "q0000007", timestamp: ts(8), note: "no type at all" }),
		M("q0000009", "q0000008", 9, user("end", 9)),
	);
	f["edge-omp-model-change"] = lines(
		hdr(),
		M("r0000001", null, 1, user("u1", 1)),
		J({ type: "model_change", id: "r0000002", parentId: "r0000001", timestamp: ts(2), model: "openai/gpt-4o", role: "default", resolvedModelIsFallback: false }),
		J({ type: "thinking_level_change", id: "r0000003", parentId: "r0000002", timestamp: ts(3), thinkingLevel: null, configured: "auto" }),
		M("r0000004", "r0000003", 4, user("u2", 4)),
		J({ type: "model_change", id: "r0000005", parentId: "r0000004", timestamp: ts(5), provider: "anthropic", modelId: "claude-opus-4" }),
		J({ type: "thinking_level_change", id: "r0000006", parentId: "r0000005", timestamp: ts(6) }),
		M("r0000007", "r0000006", 7, user("u3", 7)),
	);
	f[`edge-chain-${CHAIN_LEN}`] = chain(CHAIN_LEN);
	return f;
}

// A CHAIN_LEN-entry linear chain (deep parent walks). Mostly small custom entries; a user/assistant pair every
// 500 entries and a compaction near the end keep the contexts small.
function chain(n) {
	const out = [J({ type: "session", version: 3, id: "chain-session", timestamp: ts(0), cwd: "/p" })];
	const id = (i) => "c" + i.toString(16).padStart(7, "0");
	for (let i = 0; i < n; i++) {
		const parent = i === 0 ? null : id(i - 1);
		const t = new Date(Date.parse(ts(0)) + i * 1000).toISOString();
		if (i === n - 40) out.push(J({ type: "compaction", id: id(i), parentId: parent, timestamp: t, summary: "chain compaction", firstKeptEntryId: id(n - 60), tokensBefore: 12345 }));
		else if (i % 500 === 0) out.push(J({ type: "message", id: id(i), parentId: parent, timestamp: t, message: user(`u${i}`, 1) }));
		else if (i % 500 === 1) out.push(J({ type: "message", id: id(i), parentId: parent, timestamp: t, message: asst(`a${i}`, 2) }));
		else out.push(J({ type: "custom", customType: "k", id: id(i), parentId: parent, timestamp: t }));
	}
	return lines(...out);
}

function piListFiles() {
	const f = {};
	f["a-named.jsonl"] = lines(hdr({ id: "list-a" }), M("s1", null, 1, user("first user of a", 1)),
		J({ type: "session_info", id: "s2", parentId: "s1", timestamp: ts(2), name: "Old name" }), M("s3", "s2", 3, asst("reply a", 3)),
		J({ type: "session_info", id: "s4", parentId: "s3", timestamp: ts(4), name: "  Final name  " }));
	f["b-blank-name.jsonl"] = lines(hdr({ id: "list-b", timestamp: ts(1) }), M("s1", null, 10, user([{ type: "text", text: "hello" }, { type: "text", text: "world" }], 10)),
		J({ type: "session_info", id: "s2", parentId: "s1", timestamp: ts(11), name: "Good" }), M("s3", "s2", 12, asst("x", 12)),
		J({ type: "session_info", id: "s4", parentId: "s3", timestamp: ts(13), name: "   " }));
	f["c-no-messages.jsonl"] = lines(hdr({ id: "list-c", timestamp: ts(2) }), J({ type: "thinking_level_change", id: "s1", parentId: null, timestamp: ts(20), thinkingLevel: "high" }),
		J({ type: "custom_message", customType: "cm", content: "custom messages do not count", display: true, id: "s2", parentId: "s1", timestamp: ts(21) }));
	f["d-invalid-header.jsonl"] = lines(M("s1", null, 1, user("no header here", 1)), M("s2", "s1", 2, asst("x", 2)));
	f["e-image-only.jsonl"] = lines(hdr({ id: "list-e", timestamp: ts(3) }), M("s1", null, 30, { role: "user", content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], timestamp: ms(30) }),
		M("s2", "s1", 31, { ...asst("looks like a PNG", 31), content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "looks like" }, { type: "toolCall", id: "t", name: "x", arguments: {} }, { type: "text", text: "a PNG" }] }),
		M("s3", "s2", 32, { role: "toolResult", toolCallId: "t", toolName: "x", content: [{ type: "text", text: "tool text is not listed" }], isError: false, timestamp: ms(40) }));
	const noTs = asst("assistant without timestamp", 0); delete noTs.timestamp;
	f["f-assistant-no-ts.jsonl"] = lines(hdr({ id: "list-f", timestamp: ts(4) }), M("s1", null, 5, user("user with numeric ts", 5)),
		J({ type: "message", id: "s2", parentId: "s1", timestamp: ts(50), message: noTs }),
		M("s3", "s2", 51, { role: "bashExecution", command: "ls", output: "x", exitCode: 0, cancelled: false, truncated: false, timestamp: ms(59) }));
	f["g-junk-then-header-v1.jsonl"] = lines("junk first line", J({ type: "session", id: "list-g", timestamp: ts(5), cwd: "/q", branchedFrom: "/old.jsonl" }),
		J({ type: "message", timestamp: ts(6), message: user("v1 user", 6) }), "{torn", J({ type: "message", timestamp: ts(7), message: { role: "user", content: "", timestamp: ms(7) } }));
	f["h-bad-header-ts.jsonl"] = lines(J({ type: "session", version: 3, id: "list-h", timestamp: "garbage", cwd: 42, parentSession: "/parent.jsonl" }),
		J({ type: "custom", customType: "k", id: "s1", parentId: null, timestamp: ts(8) }));
	f["i-header-only.jsonl"] = lines(hdr({ id: "list-i", timestamp: ts(9) }));
	f["j-empty.jsonl"] = "";
	f["k-not-jsonl.txt"] = lines(hdr({ id: "list-k" }));
	return f;
}

function titleSlot(title, source, updatedAt) {
	const o = { type: "title", v: 1 };
	if (title !== undefined) o.title = title;
	if (source !== undefined) o.source = source;
	o.updatedAt = updatedAt;
	o.pad = "";
	const base = Buffer.byteLength(J(o)) + 1; // + "\n"
	o.pad = " ".repeat(256 - base);
	const line = J(o) + "\n";
	if (Buffer.byteLength(line) !== 256) throw new Error("title slot size");
	return line;
}

const ompUsage = usage;
function ompFiles() {
	const f = {};
	const h = J({ type: "session", version: 3, id: "01990000-0000-7000-8000-000000000001", timestamp: ts(0), cwd: "/p" });
	f["edge-title-slot"] = titleSlot("Fix flaky test ✓", "user", ts(9)) + lines(
		J({ type: "session", version: 3, id: "01990000-0000-7000-8000-000000000002", title: "Header title (overridden by slot)", titleSource: "auto", timestamp: ts(0), cwd: "/p" }),
		M("t0000001", null, 1, user("u1", 1)),
		M("t0000002", "t0000001", 2, asst("a1", 2)),
		J({ type: "title_change", id: "t0000003", parentId: "t0000002", timestamp: ts(9), title: "Fix flaky test ✓", previousTitle: "Header title (overridden by slot)", source: "user", trigger: "rename" }),
	);
	f["edge-title-slot-empty"] = titleSlot("", undefined, ts(9)) + lines(
		J({ type: "session", version: 3, id: "01990000-0000-7000-8000-000000000003", title: "header title", titleSource: "user", timestamp: ts(0), cwd: "/p" }),
		M("t1000001", null, 1, user("u1", 1)));
	f["edge-omp-types"] = lines(
		h,
		J({ type: "session_init", id: "u0000001", parentId: null, timestamp: ts(1), systemPrompt: "sys", task: "do it", tools: ["bash", "read"], agent: "task", readOnly: true }),
		M("u0000002", "u0000001", 2, user("u1", 2)),
		J({ type: "model_change", id: "u0000003", parentId: "u0000002", timestamp: ts(3), model: "openai/gpt-4o", role: "default", resolvedModelIsFallback: false }),
		J({ type: "model_change", id: "u0000004", parentId: "u0000003", timestamp: ts(4), model: "anthropic/claude-haiku", role: "smol" }),
		J({ type: "thinking_level_change", id: "u0000005", parentId: "u0000004", timestamp: ts(5), thinkingLevel: "high", configured: "auto" }),
		J({ type: "service_tier_change", id: "u0000006", parentId: "u0000005", timestamp: ts(6), serviceTier: { openai: "priority" } }),
		J({ type: "mode_change", id: "u0000007", parentId: "u0000006", timestamp: ts(7), mode: "plan", data: { file: "PLAN.md" } }),
		J({ type: "ttsr_injection", id: "u0000008", parentId: "u0000007", timestamp: ts(8), injectedRules: ["rule-a", "rule-b"] }),
		M("u0000009", "u0000008", 9, { ...asst("a1", 9), provider: "openai", model: "gpt-4o" }),
		J({ type: "title_change", id: "u0000010", parentId: "u0000009", timestamp: ts(10), title: "New title", source: "auto" }),
		J({ type: "ttsr_injection", id: "u0000011", parentId: "u0000010", timestamp: ts(11), injectedRules: ["rule-b", "rule-c"] }),
		J({ type: "credential_pin", id: "u0000012", parentId: "u0000011", timestamp: ts(12), provider: "anthropic", hash: "ab".repeat(32) }),
		J({ type: "model_usage", id: "u0000013", parentId: "u0000012", timestamp: ts(13), purpose: "title", api: "openai-responses", provider: "openai", model: "gpt-4o-mini", usage: ompUsage, stopReason: "stop" }),
		J({ type: "compaction", id: "u0000014", parentId: "u0000013", timestamp: ts(14), summary: "long summary", shortSummary: "short", firstKeptEntryId: "u0000009", tokensBefore: 1000, tokensAfter: 100, details: { readFiles: [] }, fromExtension: true, preserveData: { k: 1 } }),
		M("u0000015", "u0000014", 15, user("u2", 15)),
		J({ type: "mode_change", id: "u0000016", parentId: "u0000015", timestamp: ts(16), mode: "none" }),
		J({ type: "reset_boundary", id: "u0000017", parentId: "u0000016", timestamp: ts(17) }),
		M("u0000018", "u0000017", 18, user("after /clear", 18)),
		J({ type: "model_change", id: "u0000019", parentId: "u0000018", timestamp: ts(19), provider: "anthropic", modelId: "pi-shaped" }),
		J({ type: "custom_message", customType: "cm", content: "cm", display: true, attribution: "user", id: "u0000020", parentId: "u0000019", timestamp: ts(20) }),
		M("u0000021", "u0000020", 21, asst("end", 21)),
	);
	// Same inputs as some pi edge cases, to record omp's behaviour on them.
	const p = piFiles();
	for (const k of ["edge-v1-compaction-index", "edge-v2-hookmessage", "edge-cycle2", "edge-self-parent", "edge-non-object-lines",
		"edge-null-line", "edge-no-header", "edge-junk-then-header", "edge-torn-last-line", "edge-no-final-newline", "edge-bom",
		"edge-crlf", "edge-blank-and-malformed-lines", "edge-lone-surrogate", "edge-bad-timestamp", "edge-compaction-offpath",
		"edge-labels", "edge-duplicate-ids", "edge-orphan", "edge-header-only", "edge-empty", "edge-unknown-types", "edge-omp-model-change",
		"edge-numbers-v2", "edge-message-not-object"]) f[k] = p[k];
	// omp only: the same without the null (omp's SessionManager.open throws on a null message, so the file above
	// records only that); omp's convertToLlm throws on a string or number message, not on [].
	f["edge-message-not-object-no-null"] = lines(hdr(), M("n0000001", null, 1, user("u", 1)), M("n0000002", "n0000001", 2, []),
		M("n0000003", "n0000002", 3, asst("a", 3)), M("n0000004", "n0000003", 4, "a string"), M("n0000005", "n0000004", 5, user("below the string", 5)),
		M("n0000006", "n0000005", 6, 5), M("n0000007", "n0000006", 7, user("below the number", 7)));
	return f;
}

function ompListFiles() {
	const f = {};
	const many = [J({ type: "session", version: 3, id: "01990000-0000-7000-8000-0000000000a1", timestamp: ts(1), cwd: "/p" })];
	for (let i = 0; i < 20; i++) many.push(M(`v${String(i).padStart(7, "0")}`, i ? `v${String(i - 1).padStart(7, "0")}` : null, 10 + i,
		i % 2 ? asst(`assistant reply number ${i} `.repeat(8), 10 + i) : user(`user prompt number ${i} `.repeat(8), 10 + i)));
	f["a-many-messages.jsonl"] = titleSlot("Many messages", "auto", ts(30)) + lines(...many);
	f["b-header-only.jsonl"] = lines(J({ type: "session", version: 3, id: "01990000-0000-7000-8000-0000000000b1", timestamp: ts(2), cwd: "/p" }));
	f["c-pending.jsonl"] = lines(J({ type: "session", version: 3, id: "01990000-0000-7000-8000-0000000000c1", title: "header title", timestamp: ts(3), cwd: "/p", parentSession: "01990000-0000-7000-8000-0000000000a1" }),
		M("c1", null, 4, user("a question still pending", 4)));
	f["d-error.jsonl"] = lines(J({ type: "session", version: 3, id: "01990000-0000-7000-8000-0000000000d1", timestamp: ts(4), cwd: "/p" }),
		M("d1", null, 5, user("please", 5)), M("d2", "d1", 6, { ...asst("", 6), stopReason: "error", errorMessage: "boom" }));
	f["e-tool-interrupted.jsonl"] = lines(J({ type: "session", version: 3, id: "01990000-0000-7000-8000-0000000000e1", timestamp: ts(5), cwd: "/p" }),
		M("e1", null, 6, user("run it", 6)), M("e2", "e1", 7, { ...asst("calling", 7), content: [{ type: "toolCall", id: "t", name: "bash", arguments: {} }], stopReason: "toolUse" }),
		J({ type: "compaction", id: "e3", parentId: "e2", timestamp: ts(8), summary: "s", shortSummary: "Short compaction title", firstKeptEntryId: "e1", tokensBefore: 1 }));
	f["f-invalid-header.jsonl"] = lines(M("f1", null, 1, user("no header", 1)));
	f["g-v1-named.jsonl"] = lines(J({ type: "session", id: "list-g-v1", timestamp: ts(6), cwd: "/p" }), J({ type: "message", timestamp: ts(7), message: user("v1 user", 7) }),
		J({ type: "message", timestamp: ts(8), message: asst("v1 reply", 8) }));
	// Later additions (names sort after the first seven, so their mtimes follow).
	const H = (id, extra = {}) => J({ type: "session", version: 3, id, timestamp: ts(9), cwd: "/p", ...extra });
	// Renamed in place: the slot's title wins over the header's.
	f["h-slot-renamed.jsonl"] = titleSlot("Renamed\tin place", "user", ts(20)) + lines(H("list-h", { title: "Old header title" }),
		M("h1", null, 10, user("hello", 10)), M("h2", "h1", 11, asst("hi", 11)),
		J({ type: "title_change", id: "h3", parentId: "h2", timestamp: ts(20), title: "Renamed\tin place", previousTitle: "Old header title", source: "user" }));
	// A blank slot title hides the header's title.
	f["i-slot-blank.jsonl"] = titleSlot("   ", "user", ts(20)) + lines(H("list-i", { title: "header title" }), M("i1", null, 10, user("x", 10)));
	// The last message is larger than the 32 KB tail window: status unknown.
	f["j-huge-last.jsonl"] = lines(H("list-j"), M("j1", null, 10, user("q", 10)), M("j2", "j1", 11, asst("big ".repeat(10000), 11)));
	// Trailing tool result; aborted; length.
	f["k-tool-result.jsonl"] = lines(H("list-k"), M("k1", null, 10, user("go", 10)),
		M("k2", "k1", 11, { ...asst("", 11), content: [{ type: "toolCall", id: "t1", name: "bash", arguments: {} }], stopReason: "toolUse" }),
		M("k3", "k2", 12, { role: "toolResult", toolCallId: "t1", toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false, timestamp: ms(12) }));
	f["l-aborted.jsonl"] = lines(H("list-l"), M("l1", null, 10, user("go", 10)), M("l2", "l1", 11, { ...asst("partial", 11), stopReason: "aborted" }),
		J({ type: "label", id: "l3", parentId: "l2", timestamp: ts(12), targetId: "l2", label: "x" }));
	f["m-length.jsonl"] = lines(H("list-m"), M("m1", null, 10, user("go", 10)), M("m2", "m1", 11, { ...asst("cut", 11), stopReason: "length" }));
	// The first user message is longer than the 4 KB prefix: it does not parse, the first message comes
	// from the text of the prefix (cut, multi-byte characters across the boundary).
	f["n-long-first.jsonl"] = lines(H("list-n"), M("n1", null, 10, user("é€\"quoted\" line\nnext ".repeat(300), 10)), M("n2", "n1", 11, asst("reply", 11)));
	// BOM and CRLF.
	f["o-bom-crlf.jsonl"] = "\ufeff" + [H("list-o"), M("o1", null, 10, user("crlf user", 10)), M("o2", "o1", 11, asst("crlf reply", 11))].join("\r\n") + "\r\n";
	// A JSON object before the header: hidden. Junk text before the header: listed.
	f["p-object-first.jsonl"] = lines(J({ a: 1 }), H("list-p"), M("p1", null, 10, user("p", 10)));
	f["q-junk-first.jsonl"] = lines("not json", H("list-q"), M("q1", null, 10, user("q", 10)));
	// Content omp cannot read (a number): the file is hidden.
	f["r-bad-content.jsonl"] = lines(H("list-r"), M("r1", null, 10, { role: "user", content: 42, timestamp: ms(10) }));
	// A header longer than the prefix window: read from its text (escapes, title, parentSession).
	f["s-long-header.jsonl"] = lines(H("list-s", { title: "T\u00e9 \"q\"", parentSession: "/a/b.jsonl", systemPrompt: "s".repeat(5000) }),
		M("s1", null, 10, user("after long header", 10)));
	// Only a developer/assistant text: the fallback first message; a bad header timestamp.
	f["t-assistant-only.jsonl"] = lines(H("list-t", { timestamp: "not a date" }), M("t1", null, 10, asst("assistant first", 10)),
		M("t2", "t1", 11, { role: "developer", content: "dev text", timestamp: ms(11) }));
	// Message markers beyond the parsed lines: a long message cut by the prefix, then counted by marker.
	f["u-markers.jsonl"] = lines(H("list-u"), M("u1", null, 10, user("short", 10)), M("u2", "u1", 11, asst("y".repeat(3000), 11)),
		M("u3", "u2", 12, user("z".repeat(3000), 12)), M("u4", "u3", 13, asst("w", 13)));
	return f;
}

// Fixed, distinct mtimes so listing (omp uses mtime for `modified`; pi falls back to it) is reproducible.
// Recorded in DIR/mtimes.json: tests must apply them before listing.
function writeAll(files, target, setMtimes) {
	mkdirSync(target, { recursive: true });
	const mtimes = {};
	let i = 0;
	for (const [name, body] of Object.entries(files)) {
		const file = join(target, name.includes(".") ? name : `${name}.jsonl`);
		writeFileSync(file, body);
		if (setMtimes) {
			const t = new Date(Date.parse("2025-06-01T00:00:00.000Z") + 60_000 * i++);
			utimesSync(file, t, t);
			mtimes[name] = t.toISOString();
		}
	}
	if (setMtimes) writeFileSync(join(target, "mtimes.json"), JSON.stringify(mtimes, null, 1) + "\n");
}

if (mode === "pi") writeAll(piFiles(), dir, false);
else if (mode === "omp") writeAll(ompFiles(), dir, false);
else if (mode === "pi-list" || mode === "omp-list") {
	rmSync(dir, { recursive: true, force: true });
	writeAll(mode === "pi-list" ? piListFiles() : ompListFiles(), dir, true);
} else {
	console.error("usage: edge-cases.mjs pi|pi-list|omp|omp-list DIR");
	process.exit(2);
}
