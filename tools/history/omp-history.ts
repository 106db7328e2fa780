// omp history oracle: drives the REAL oh-my-pi HistoryStorage (npm @oh-my-pi/pi-coding-agent 18.2.3,
// src/session/history-storage.ts) under bun. Only tools/history/check.sh needs it; tests read the goldens.
//
//   bun omp-history.ts read DB QUERY...        omp's view as JSON: {"recent": getRecent(1000),
//                                               "search": {QUERY: search(QUERY, 100)}, "sessions": {QUERY: matchingSessionIds(QUERY)}}
//   bun omp-history.ts add DB < prompts.jsonl  omp records each prompt ({"prompt","cwd"?,"sessionId"?} per line)
//   bun omp-history.ts legacy DB               writes an omp 13 history.db (no session_id, duplicates, padded prompts)
//   bun omp-history.ts compare OMP.json ARBOR.json   exit 1 when arbor's view differs from omp's
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";

const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const [cmd, db, ...rest] = process.argv.slice(2);

if (cmd === "compare") {
	const omp = JSON.parse(readFileSync(db, "utf8"));
	const arbor = JSON.parse(readFileSync(rest[0], "utf8"));
	let bad = 0;
	const same = (what: string, a: any, b: any) => {
		const x = JSON.stringify(a), y = JSON.stringify(b);
		if (x !== y) {
			bad++;
			console.error(`DIFFERENT ${what}\n  omp:   ${x}\n  arbor: ${y}`);
		}
	};
	same("recent", omp.recent, arbor.recent);
	for (const q of Object.keys(omp.search)) same(`search ${JSON.stringify(q)}`, omp.search[q], arbor.search[q]);
	console.error(bad ? `${bad} differences` : `same: recent (${omp.recent.length}) and ${Object.keys(omp.search).length} searches`);
	process.exit(bad ? 1 : 0);
}

if (cmd === "legacy") {
	const d = new Database(db);
	d.run(`CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT (unixepoch()), cwd TEXT);
CREATE INDEX idx_history_created_at ON history(created_at DESC);
CREATE VIRTUAL TABLE history_fts USING fts5(prompt, content='history', content_rowid='id');
CREATE TRIGGER history_ai AFTER INSERT ON history BEGIN INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt); END;`);
	const ins = d.prepare("INSERT INTO history (prompt, created_at, cwd) VALUES (?, ?, ?)");
	ins.run("old prompt  \nwith padding", 1700000000, "/old");
	ins.run("old prompt\nwith padding", 1700000100, "/newer");
	ins.run("unique legacy prompt", 1700000050, null);
	ins.run("   ", 1700000060, "/blank");
	d.close();
	process.exit(0);
}

const { HistoryStorage } = await import(`${ROOT}/history-storage.ts`);
const h = HistoryStorage.open(db);
if (cmd === "read") {
	const out: any = { recent: h.getRecent(1000), search: {}, sessions: {} };
	for (const q of rest) {
		out.search[q] = h.search(q, 100);
		out.sessions[q] = h.matchingSessionIds(q);
	}
	console.log(JSON.stringify(out, null, 1));
} else if (cmd === "add") {
	for (const line of readFileSync(0, "utf8").split("\n")) {
		if (!line.trim()) continue;
		const p = JSON.parse(line);
		await h.add(p.prompt, p.cwd, p.sessionId);
	}
} else {
	console.error("usage: omp-history.ts read DB QUERY... | add DB < prompts.jsonl | legacy DB | compare OMP.json ARBOR.json");
	process.exit(2);
}
HistoryStorage.close();
