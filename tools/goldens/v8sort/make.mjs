// Writes goldens/v8sort.json: node's own Array.prototype.sort (V8 TimSort) on arrays of
// timestamps with pi's getTree comparator `(a, b) => ta - tb`, where `null` stands for an
// unparseable timestamp (NaN, which V8 reads as "equal": an inconsistent comparator).
// arbor's crate::js_sort must give the same permutation (crates/arbor-core/tests/v8_sort.rs).
// Usage: node tools/goldens/v8sort/make.mjs goldens/v8sort.json
import { writeFileSync } from "node:fs";
let seed = 22;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const cases = [];
const lengths = [2, 3, 5, 33, 63, 64, 65, 100, 129, 257, 700];
for (const n of lengths) {
	for (const nanShare of [0, 0.03, 0.3]) {
		for (const shape of ["random", "runs", "dups", "sorted"]) {
			const ts = [];
			let v = 1000;
			for (let i = 0; i < n; i++) {
				if (rnd() < nanShare) { ts.push(null); continue; }
				if (shape === "random") ts.push(Math.floor(rnd() * 1e6));
				else if (shape === "dups") ts.push(Math.floor(rnd() * 5));
				else if (shape === "sorted") ts.push(i);
				else { v += rnd() < 0.1 ? -Math.floor(rnd() * 500) : Math.floor(rnd() * 20); ts.push(v); }
			}
			const idx = ts.map((_, i) => i);
			const t = (i) => (ts[i] === null ? NaN : ts[i]);
			idx.sort((a, b) => t(a) - t(b));
			cases.push({ n, nanShare, shape, ts, order: idx });
		}
	}
}
writeFileSync(process.argv[2], JSON.stringify({ node: process.version, cases }) + "\n");
console.log(`${cases.length} cases`);
