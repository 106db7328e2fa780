// Times the real pi's SessionManager.list(cwd, dir) (what `pi --resume` runs), in one node process.
// Usage: node bench/pi-list.mjs PI_DIST_INDEX_JS DIR
// Prints one JSON line: {"listMs", "sessions"}.
const [pkg, dir] = process.argv.slice(2);
const { SessionManager } = await import(pkg);
const t0 = performance.now();
const list = await SessionManager.list("/unused", dir);
const t1 = performance.now();
console.log(JSON.stringify({ listMs: t1 - t0, sessions: list.length }));
