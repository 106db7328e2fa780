// Applies tools/readback/ops.json through the real pi SessionManager (the same op sequence make.py gives `arbor append`).
// Usage: node pi-write.mjs OPS.json OUTDIR  -> prints the session file path
import { readFileSync } from "node:fs";
const PKG = process.env.PI_PKG ?? "/tmp/peers/pi/node_modules/@mariozechner/pi-coding-agent/dist/index.js";
const { SessionManager } = await import(PKG);
const [opsFile, outDir] = process.argv.slice(2);
const ops = JSON.parse(readFileSync(opsFile, "utf8"));
const sm = SessionManager.create("/work/project", outDir);
const ids = [];
const ref = (v) => (typeof v === "string" && v.startsWith("@") ? ids[Number(v.slice(1))] : v);
for (const op of ops) {
	if (op.parent === "root") sm.resetLeaf();
	else if (typeof op.parent === "number") sm.branch(ids[op.parent]);
	const b = op.body;
	let id;
	switch (b.type) {
		case "message": id = sm.appendMessage(b.message); break;
		case "thinking_level_change": id = sm.appendThinkingLevelChange(b.thinkingLevel); break;
		case "model_change": id = sm.appendModelChange(b.provider, b.modelId); break;
		case "compaction": id = sm.appendCompaction(b.summary, ref(b.firstKeptEntryId), b.tokensBefore, b.details, b.fromHook); break;
		case "branch_summary": {
			const from = op.parent === "root" ? null : sm.getLeafId();
			id = sm.branchWithSummary(from, b.summary, b.details, b.fromHook); break;
		}
		case "custom": id = sm.appendCustomEntry(b.customType, b.data); break;
		case "custom_message": id = sm.appendCustomMessageEntry(b.customType, b.content, b.display, b.details); break;
		case "label": id = sm.appendLabelChange(ref(b.targetId), b.label); break;
		case "session_info": id = sm.appendSessionInfo(b.name); break;
		default: throw new Error("unknown op " + b.type);
	}
	ids.push(id);
}
console.log(sm.getSessionFile());
