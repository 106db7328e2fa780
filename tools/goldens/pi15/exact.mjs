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
