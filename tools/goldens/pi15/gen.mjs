#!/usr/bin/env node
// Sessions that use what pi 1.5 added to the format (system messages, context edits, usage
// entries, compactions that capture the system message), written by the REAL pi 1.5.2
// SessionManager (npm @earendil-works/pi-coding-agent, installed by
// ../shared/reference/setup-pi-current.sh; run through make-pi15.sh). Only regenerating the
// goldens needs node: arbor's tests read the files.
//
//   node gen.mjs OUTDIR     -> writes OUTDIR/NAME.jsonl for every scenario below, and prints
//                              the refusals pi's appendContextEdit gave (edit-refusals.json)
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const SHIM = process.env.PI15_SHIM ?? "/tmp/peers/pi15/shim.mjs";
const { SessionManager } = await import(SHIM);

const out = process.argv[2];
if (!out) {
	console.error("usage: gen.mjs OUTDIR");
	process.exit(2);
}
mkdirSync(out, { recursive: true });

let clock = Date.UTC(2026, 10, 1, 10, 0, 0);
const tick = () => (clock += 1000);
const user = (text) => ({ role: "user", content: text, timestamp: tick() });
const assistant = (text, calls = []) => ({
	role: "assistant",
	content: [{ type: "text", text }, ...calls.map((id) => ({ type: "toolCall", id, name: "bash", arguments: { command: "ls" } }))],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0.0003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.0006 } },
	stopReason: calls.length ? "toolUse" : "stop",
	timestamp: tick(),
});
const toolResult = (id, text) => ({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: tick() });
const tool = (name) => ({ name, description: `the ${name} tool`, parameters: { type: "object", properties: {} } });
const system = (fields) => ({ role: "system", ...fields, timestamp: tick() });
const usage = (input, output) => ({ input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: input / 1e6, output: output / 1e6, cacheRead: 0, cacheWrite: 0, total: (input + output) / 1e6 } });

const refusals = {};
function tryEdit(name, sm, target, replacement) {
	try {
		return sm.appendContextEdit(target, replacement);
	} catch (e) {
		(refusals[name] ??= []).push({ target, replacement, error: String(e.message) });
		return undefined;
	}
}

function session(name, build) {
	const dir = join(out, `.tmp-${name}`);
	rmSync(dir, { recursive: true, force: true });
	const sm = SessionManager.create("/work/project", dir);
	build(sm);
	const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
	if (files.length !== 1) throw new Error(`${name}: expected one session file, found ${files.length}`);
	renameSync(join(dir, files[0]), join(out, `${name}.jsonl`));
	rmSync(dir, { recursive: true, force: true });
}

// System messages: the prompt and tools travel in the transcript; later ones patch sections.
session("sys-basic", (sm) => {
	sm.appendMessage(system({ content: "You are a careful coding agent.", toolsAdded: [tool("bash"), tool("read")] }));
	sm.appendMessage(user("list the files"));
	const a = sm.appendMessage(assistant("listing", ["c1"]));
	sm.appendMessage(toolResult("c1", "a.txt\nb.txt"));
	sm.appendMessage(system({ content: "", sections: { style: "terse", env: "linux" }, toolsRemoved: [tool("read")] }));
	sm.appendMessage(assistant("two files"));
	sm.appendMessage(system({ content: null, sections: { env: null } }));
	sm.appendMessage(user("thanks"));
	sm.appendUsage("title", "anthropic", "claude-haiku-4-5", usage(50, 5), "session title");
	sm.appendMessage(assistant("you are welcome"));
	sm.branch(a);
	sm.appendMessage(user("another way"));
	sm.appendMessage(assistant("sure"));
});

// Context edits: strings on assistant and tool results become one text block, null removes,
// the latest edit wins, custom messages are editable.
session("edit-basic", (sm) => {
	const u1 = sm.appendMessage(user("first question"));
	const a1 = sm.appendMessage(assistant("first answer with a secret sk-live-123", ["c1"]));
	const r1 = sm.appendMessage(toolResult("c1", "a very long tool output ".repeat(20)));
	sm.appendMessage(assistant("done"));
	const cm = sm.appendCustomMessageEntry("note", "an extension note", true, { k: 1 });
	sm.appendMessage(user("second question"));
	tryEdit("edit-basic", sm, a1, { content: "first answer (redacted)" });
	tryEdit("edit-basic", sm, r1, null);
	tryEdit("edit-basic", sm, u1, { content: "first question, rephrased" });
	tryEdit("edit-basic", sm, u1, { content: [{ type: "text", text: "first question, rephrased again" }] });
	tryEdit("edit-basic", sm, cm, { content: "the note, shorter" });
	sm.appendMessage(assistant("second answer"));
	// Refused: not editable, not found, bad replacement.
	const mc = sm.appendModelChange("openai", "gpt-5");
	tryEdit("edit-basic", sm, mc, { content: "x" });
	tryEdit("edit-basic", sm, "nope0000", { content: "x" });
	tryEdit("edit-basic", sm, u1, { content: 42 });
	tryEdit("edit-basic", sm, u1, "just a string");
	sm.appendMessage(user("third"));
});

// An edit on one branch does not show on another; an edit of an entry off the branch is refused.
session("edit-branches", (sm) => {
	sm.appendMessage(user("root question"));
	const a1 = sm.appendMessage(assistant("root answer"));
	const u2 = sm.appendMessage(user("branch A"));
	sm.appendMessage(assistant("answer A"));
	tryEdit("edit-branches", sm, a1, { content: "root answer, edited on A" });
	sm.appendMessage(user("more on A"));
	sm.branch(a1);
	sm.appendMessage(user("branch B"));
	sm.appendMessage(assistant("answer B"));
	tryEdit("edit-branches", sm, u2, { content: "off the branch" });
	sm.appendMessage(user("more on B"));
});

// Compactions: the system message at compaction time is captured and emitted before the
// summary; system messages in the kept range are dropped; an edit before the compaction of an
// entry it did not keep has no effect; an edit after it of a kept entry does; usage recorded.
session("compaction-system", (sm) => {
	sm.appendMessage(system({ content: "Base prompt.", toolsAdded: [tool("bash")] }));
	const u1 = sm.appendMessage(user("old question"));
	sm.appendMessage(assistant("old answer"));
	tryEdit("compaction-system", sm, u1, { content: "old question, edited before the compaction" });
	const u2 = sm.appendMessage(user("kept question"));
	sm.appendMessage(system({ content: "Extra rule.", sections: { mode: "plan" } }));
	const a2 = sm.appendMessage(assistant("kept answer"));
	sm.appendCompaction("Summary of the old part.", u2, 5000, { readFiles: ["a.txt"] }, false, usage(4000, 300));
	tryEdit("compaction-system", sm, a2, { content: "kept answer, edited after the compaction" });
	sm.appendMessage(system({ content: "After the compaction.", toolsAdded: [tool("write")] }));
	sm.appendMessage(user("new question"));
	sm.appendMessage(assistant("new answer"));
	// A second compaction without firstKeptEntryId (pi defaults it to the compaction's own id).
	sm.appendCompaction("Second summary.", undefined, 9000, undefined, true, usage(8000, 400));
	sm.appendMessage(user("after the second compaction"));
	sm.appendMessage(assistant("ok"));
});

// Null replacement of a tool result, edits of a compaction and of branch summaries.
session("edit-removals", (sm) => {
	sm.appendMessage(user("run it"));
	const a1 = sm.appendMessage(assistant("running", ["c1", "c2"]));
	const r1 = sm.appendMessage(toolResult("c1", "first result"));
	sm.appendMessage(toolResult("c2", "second result"));
	sm.appendMessage(assistant("both done"));
	tryEdit("edit-removals", sm, r1, null);
	tryEdit("edit-removals", sm, r1, { content: "first result, back" });
	sm.branchWithSummary(a1, "Tried another approach first.");
	const bs = sm.getLeafId();
	tryEdit("edit-removals", sm, bs, null);
	sm.appendMessage(user("and now?"));
	sm.appendMessage(assistant("now this"));
});

writeFileSync(join(out, "edit-refusals.json"), `${JSON.stringify(refusals, null, 1)}\n`);
