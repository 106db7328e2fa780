// Times the real pi: SessionManager.open(FILE) + buildSessionContext(), in one node process.
// Usage: node bench/pi-open.mjs PI_DIST_INDEX_JS FILE [--stringify]
// Prints one JSON line: {"openMs", "contextMs", "totalMs", "messages", "stringifyMs"?, "bytes"?}.
// Only reads FILE: pi rewrites a file on open only when it must migrate it (v1/v2), and the
// generated sessions are v3.
const [pkg, file, ...flags] = process.argv.slice(2);
const { SessionManager } = await import(pkg);
const t0 = performance.now();
const sm = SessionManager.open(file);
const t1 = performance.now();
const ctx = sm.buildSessionContext();
const t2 = performance.now();
const out = { openMs: t1 - t0, contextMs: t2 - t1, totalMs: t2 - t0, messages: ctx.messages.length };
if (flags.includes("--stringify")) {
	const s = JSON.stringify(ctx);
	out.stringifyMs = performance.now() - t2;
	out.bytes = Buffer.byteLength(s);
}
console.log(JSON.stringify(out));
