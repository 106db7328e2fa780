// Writes the hand-made inputs of issue 22 ("exact under mutation") into DIR, byte for byte:
// the shapes where arbor and pi 1.5.2 disagreed under differential fuzzing. make.sh then
// records pi 1.5.2's answers for each (pi-oracle.mjs expect). Usage: node exact.mjs DIR
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const H = (id = "exact-22", extra = {}) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-11-24T20:00:00.000Z", cwd: "/work/project", ...extra });
const ts = (s) => `2026-11-24T20:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}.000Z`;
const msg = (id, parentId, t, role, content, extra = {}) =>
	JSON.stringify({ type: "message", id, parentId, timestamp: t, message: { role, content, timestamp: 1790000000000, ...extra } });
const write = (name, lines) => writeFileSync(join(dir, `${name}.jsonl`), lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");

// Class 1: one entry with many children, some timestamps unparseable (pi's comparator gives
// NaN, V8's TimSort runs, merges and gallops with it). 70 children (one merge) and 300 (many).
for (const [n, every] of [[70, 7], [300, 5]]) {
	const lines = [H(), msg("root0000", null, ts(0), "user", "root")];
	let seed = n;
	const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
	for (let i = 0; i < n; i++) {
		const t = i % every === 3 ? (i % 2 ? "garbage" : "not a date") : ts(1 + Math.floor(rnd() * 3000));
		lines.push(msg(`c${String(i).padStart(7, "0")}`, "root0000", t, "assistant", [{ type: "text", text: `child ${i}` }]));
	}
	write(`exact-wide-${n}-bad-timestamps`, lines);
}

// The rest: small files, one per class (header, entries), as lines of JSON text.
const u = (id, parentId, s, text, extra = {}) => ({ type: "message", id, parentId, timestamp: ts(s), message: { role: "user", content: text, timestamp: 1790000000000 + s }, ...extra });
const a = (id, parentId, s, text) => ({ type: "message", id, parentId, timestamp: ts(s), message: { role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 1790000000000 + s } });
const sysMsg = { role: "system", content: "You are pi.", tools: [{ name: "bash", description: "run", parameters: { type: "object", properties: {} } }], timestamp: 1790000000000 };

// Class 4: a 16-hex session id in a pi file (pi --session-id writes it): system message,
// custom-role message and custom_message must read as pi's.
write("exact-hex-session-id", [
	H("0123456789abcdef"),
	{ type: "message", id: "e0000001", parentId: null, timestamp: ts(1), message: sysMsg },
	u("e0000002", "e0000001", 2, "hi"),
	{ type: "message", id: "e0000003", parentId: "e0000002", timestamp: ts(3), message: { role: "custom", customType: "note", content: "custom role", display: true, timestamp: 1790000000003 } },
	{ type: "custom_message", customType: "ext", content: "from an extension", display: true, id: "e0000004", parentId: "e0000003", timestamp: ts(4) },
	a("e0000005", "e0000004", 5, "hello"),
]);

// Class 5: header versions that are not numbers (JS coercion: "3" is 3, [3] is 3, "2" is 2,
// {} is NaN: nothing migrates). (`true` and `null` are v1, as before: goldens/pi has v1 files.)
const v3body = [u("v0000001", null, 1, "one"), { type: "message", id: "v0000002", parentId: "v0000001", timestamp: ts(2), message: { role: "hookMessage", customType: "h", content: "hook", display: true, timestamp: 1 } }, a("v0000003", "v0000002", 3, "two")];
for (const [name, version] of [["string-3", "3"], ["array-3", [3]], ["string-2", "2"], ["object", {}], ["string-junk", "x"], ["array-2-3", [2, 3]], ["string-space-2", " 2 "]]) {
	write(`exact-version-${name}`, [JSON.stringify({ type: "session", version, id: `exact-version-${name}`, timestamp: ts(0), cwd: "/work/project" }), ...v3body]);
}

// Class 6: JSON lines that are not objects, in the middle and as the last line.
const base6 = [u("j0000001", null, 1, "one"), a("j0000002", "j0000001", 2, "two")];
// (One in the middle: several share pi's `undefined` id, and pi's getTree then lists the last
// of them once per line: the duplicate-id tree, a documented difference, docs/pi-versions.md.)
write("exact-non-object-middle", [H(), base6[0], '"x"', base6[1]]);
write("exact-non-object-last-number", [H(), ...base6, "5"]);
write("exact-non-object-last-array", [H(), ...base6, "[1,2]"]);
write("exact-non-object-falsy", [H(), ...base6, "0", "false", '""']);

// Class 7: odd ids.
write("exact-id-null-last", [H(), u("k0000001", null, 1, "one"), { ...a("x", "k0000001", 2, "two"), id: null }]);
write("exact-parent-empty-string", [H(), u("", null, 1, "empty id"), u("k0000002", "", 2, "parent is empty string"), a("k0000003", "k0000002", 3, "three")]);
write("exact-numeric-ids", [H(), { ...u("x", null, 1, "one"), id: 5 }, { ...a("x", 5, 2, "two"), id: 6 }, u("k0000003", 6, 3, "three")]);
write("exact-edit-no-target", [H(), { ...u("x", null, 1, "no id"), id: undefined }, u("k0000002", null, 2, "two"), { type: "context_edit", id: "k0000003", parentId: "k0000002", timestamp: ts(3), replacement: { role: "user", content: "edited", timestamp: 1 } }, a("k0000004", "k0000003", 4, "four")]);
write("exact-label-not-string", [H(), u("k0000001", null, 1, "one"), a("k0000002", "k0000001", 2, "two"),
	{ type: "label", id: "k0000003", parentId: "k0000002", timestamp: ts(3), targetId: "k0000001", label: 42 },
	{ type: "label", id: "k0000004", parentId: "k0000003", timestamp: ts(4), targetId: "k0000002", label: ["x"] },
	{ type: "label", id: "k0000005", parentId: "k0000004", timestamp: ts(5), targetId: "k0000004", label: { a: 1 } }]);
// Ids that differ only in lone surrogates / U+FFFD (written as JSON escapes, byte for byte).
writeFileSync(join(dir, "exact-surrogate-ids.jsonl"), [H(),
	'{"type":"message","id":"s\\ud800","parentId":null,"timestamp":"' + ts(1) + '","message":{"role":"user","content":"lone high","timestamp":1}}',
	'{"type":"message","id":"s\\udc00","parentId":null,"timestamp":"' + ts(2) + '","message":{"role":"user","content":"lone low","timestamp":2}}',
	'{"type":"message","id":"s\\ufffd","parentId":null,"timestamp":"' + ts(3) + '","message":{"role":"user","content":"replacement char","timestamp":3}}',
	'{"type":"message","id":"t0000001","parentId":"s\\ud800","timestamp":"' + ts(4) + '","message":{"role":"user","content":"child of high","timestamp":4}}',
	'{"type":"compaction","id":"t0000002","parentId":"t0000001","timestamp":"' + ts(5) + '","summary":"sum","firstKeptEntryId":"s\\udc00","tokensBefore":1}',
	'{"type":"label","id":"t0000003","parentId":"t0000002","timestamp":"' + ts(6) + '","targetId":"s\\ud800","label":"high"}',
].join("\n") + "\n");

// Class 3: messages whose role is branchSummary / compactionSummary (appendMessage of an
// extension), odd summaries, and a compaction systemMessage with such a role.
write("exact-summary-roles", [H(),
	u("m0000001", null, 1, "one"),
	{ type: "message", id: "m0000002", parentId: "m0000001", timestamp: ts(2), message: { role: "branchSummary", summary: "went elsewhere", fromId: "m0000001", timestamp: 2 } },
	{ type: "message", id: "m0000003", parentId: "m0000002", timestamp: ts(3), message: { role: "compactionSummary", summary: "compacted", tokensBefore: 5, timestamp: 3 } },
	{ type: "message", id: "m0000004", parentId: "m0000003", timestamp: ts(4), message: { role: "branchSummary", summary: 42, timestamp: 4 } },
	{ type: "message", id: "m0000005", parentId: "m0000004", timestamp: ts(5), message: { role: "compactionSummary", summary: ["a", "b"], timestamp: 5 } },
	{ type: "message", id: "m0000006", parentId: "m0000005", timestamp: ts(6), message: { role: "branchSummary", timestamp: 6 } },
	{ type: "message", id: "m0000007", parentId: "m0000006", timestamp: ts(7), message: { role: "compactionSummary", summary: { x: 1 }, timestamp: 7 } },
	{ type: "message", id: "m0000008", parentId: "m0000007", timestamp: ts(8), message: { role: "branchSummary", summary: null, timestamp: 8 } },
	a("m0000009", "m0000008", 9, "after"),
	{ type: "compaction", id: "m0000010", parentId: "m0000009", timestamp: ts(10), summary: "c", firstKeptEntryId: "m0000009", tokensBefore: 9, systemMessage: { role: "compactionSummary", summary: "as system", timestamp: 10 } },
	u("m0000011", "m0000010", 11, "last"),
]);

// Class 2: timestamps V8's legacy Date parser accepts beyond the ISO format (siblings sorted
// by them; custom_message / branch_summary timestamps carried into the context).
const odd = ["2026-11-24 20:05:04Z", "Nov 24 2026 20:05:05 GMT", "2026-11-31T20:05:06Z", "2026-11-24T20:05:07z", "2026-11-24T20:05:08+0000",
	"2024/01/02", "1", "Tue Nov 24 2026 20:05:09 GMT+0000 (Coordinated Universal Time)", "24 Nov 2026 20:05:10 UTC", "2026-11-24T20:05:11.5Z",
	"November 24, 2026 20:05:12", "2026-11-24T20:05:13", "11/24/2026", "2026-02-29T00:00:00Z", "Mon, 24 Nov 2026 20:05:14 GMT", "2026-11-24T25:00:00Z",
	"12:00 2026-11-24", "2026-11-24 20:05:15 +01:00", "  2026-11-24T20:05:16Z  ", "2026-11-24T20:05", "Nov 24 2026", "2026", "garbage", "2026-13-01"];
const lines2 = [H(), u("d0000000", null, 0, "root")];
odd.forEach((t, i) => {
	lines2.push({ type: "custom_message", customType: "t", content: `ts ${JSON.stringify(t)}`, display: true, id: `d${String(i + 1).padStart(7, "0")}`, parentId: "d0000000", timestamp: t });
});
write("exact-legacy-dates", lines2);
