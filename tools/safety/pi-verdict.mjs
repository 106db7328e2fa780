#!/usr/bin/env node
// pi's verdict on one session file: does the REAL pi (npm @mariozechner/pi-coding-agent 0.73.1, installed under
// /tmp/peers by ../../../shared/reference/setup-peers.sh) open it, build its context, and leave it as it was?
//   node pi-verdict.mjs FILE   -> prints {"opens","rewrote","ids","leaf","messages"} or {"opens":false,"error"}
// FILE is opened in place: callers pass a scratch copy.
import { readFileSync } from "node:fs";

const PKG = process.env.PI_PKG ?? "/tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js";
const file = process.argv[2];
const before = readFileSync(file);
let out;
try {
	const { SessionManager } = await import(PKG);
	const sm = SessionManager.open(file);
	const entries = sm.getEntries();
	const ctx = sm.buildSessionContext();
	sm.getTree();
	const after = readFileSync(file);
	out = {
		opens: true,
		rewrote: !before.equals(after),
		ids: entries.map((e) => (e && typeof e === "object" ? e.id ?? null : null)),
		leaf: sm.getLeafId() ?? null,
		messages: ctx.messages.length,
	};
} catch (e) {
	out = { opens: false, error: String(e && e.message ? e.message : e).slice(0, 300) };
}
process.stdout.write(JSON.stringify(out) + "\n");
