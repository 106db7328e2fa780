#!/usr/bin/env node
// Writes the extra listing inputs for omp 18.3.4's `assistantTurns` / `isEmptySession`
// (goldens/omp183/list-extra/): where the assistant turns are (the 4 KB prefix, the 32 KB tail,
// only the unread middle, none), marker text inside strings, titles and first prompts that do or
// do not name an empty session. Usage: node list-inputs.mjs DIR
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const J = (o) => JSON.stringify(o);
const ts = (s) => `2025-02-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const hdr = (id, extra = {}) => J({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/p", ...extra });
let n = 0;
const msg = (message) => J({ type: "message", id: `e${String(++n).padStart(7, "0")}`, parentId: null, timestamp: ts(n % 60), message });
const user = (content) => msg({ role: "user", content, timestamp: 1 });
const asst = (text, extra = {}) => msg({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: 2, ...extra });
const pad = (k) => user("p".repeat(k));
const files = {
	"t-assistant-in-prefix.jsonl": [hdr("t1"), user("hi"), asst("hello")],
	"t-assistant-only-in-middle.jsonl": [hdr("t2"), user("first"), pad(6000), asst("middle"), pad(40000)],
	"t-assistant-in-tail.jsonl": [hdr("t3"), user("first"), pad(6000), asst("tail")],
	"t-user-only.jsonl": [hdr("t4"), user("unanswered prompt")],
	"t-header-only.jsonl": [hdr("t5")],
	"t-header-only-titled.jsonl": [hdr("t6", { title: "named draft" })],
	"t-blank-prompt.jsonl": [hdr("t7"), user(" \n\t")],
	"t-control-title.jsonl": [hdr("t8", { title: "\u0001\u0002" }), user([{ type: "image", data: "AA", mimeType: "image/png" }])],
	"t-marker-in-text.jsonl": [hdr("t9"), user('quoted "role":"assistant" marker')],
	"t-assistant-torn-line.jsonl": [hdr("t10"), user("first"), pad(6000), asst("middle").slice(0, 40), pad(40000)],
	"t-assistant-many.jsonl": [hdr("t11"), user("u"), asst("a1"), asst("a2"), user("u2"), asst("a3")],
	"t-crlf-middle.jsonl": [hdr("t12"), user("first"), pad(6000), asst("middle") + "\r", pad(40000)],
};
const mtimes = {};
let m = 0;
for (const [name, ls] of Object.entries(files)) {
	writeFileSync(join(dir, name), ls.join("\n") + "\n");
	mtimes[name] = `2025-07-01T00:${String(m++).padStart(2, "0")}:00.000Z`;
}
writeFileSync(join(dir, "mtimes.json"), JSON.stringify(mtimes, null, 1) + "\n");
