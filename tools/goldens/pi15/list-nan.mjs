// Issue 22 gap: a listing where some sessions' `modified` is an Invalid Date (a message
// timestamp of 9e15 ms, past JS's 8.64e15 limit: `new Date(9e15)` is invalid, getTime() NaN).
// pi sorts with `(a, b) => b.modified.getTime() - a.modified.getTime()`: NaN, which V8 reads as
// "equal", among 70 sessions (TimSort with one merge). Writes the files into DIR and prints pi's
// `SessionManager.list("/p", DIR)` order as JSON (ids); read by
// crates/arbor-store/tests/pi15_list.rs and crates/arbor-cli/tests/pi15_listing.rs.
// Usage: node list-nan.mjs SHIM goldens/pi15/list-nan > goldens/pi15/list-nan-modified.json
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const [shim, dir] = process.argv.slice(2);
mkdirSync(dir, { recursive: true });
for (let i = 0; i < 70; i++) {
	const id = `s${String(i).padStart(2, "0")}`;
	const min = (i * 37) % 70;
	const hts = `2026-01-01T${String(Math.floor(min / 60)).padStart(2, "0")}:${String(min % 60).padStart(2, "0")}:00.000Z`;
	const mts = i % 7 === 3 ? 9e15 : 1767225600000 + ((i * 53) % 70) * 60000;
	const body =
		`{"type":"session","version":3,"id":"${id}","timestamp":"${hts}","cwd":"/p"}\n` +
		`{"type":"message","id":"m1","parentId":null,"timestamp":"${hts}","message":{"role":"user","content":"hi ${id}","timestamp":${mts}}}\n`;
	writeFileSync(join(dir, `${id}.jsonl`), body);
}
const { SessionManager } = await import(shim);
const list = await SessionManager.list("/p", dir);
console.log(JSON.stringify(list.map((s) => s.id)));
