// Applies an ops file (tools/readback/ops.json turned into omp's dialect by omp-ops.py) through the real omp 18.2.3
// SessionManager, the same op sequence make.py gives `arbor append` on an `arbor new --omp` file.
// Usage: bun omp-write.ts OPS.json OUTDIR  -> prints the session file path
import { readFileSync } from "node:fs";
const ROOT = process.env.OMP_PKG ?? "/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session";
const { SessionManager } = await import(`${ROOT}/session-manager.ts`);
const [opsFile, outDir] = process.argv.slice(2);
const ops = JSON.parse(readFileSync(opsFile, "utf8"));
const sm = SessionManager.create("/work/project", outDir);
const ids: string[] = [];
const ref = (v: any) => (typeof v === "string" && v.startsWith("@") ? ids[Number(v.slice(1))] : v);
for (const op of ops) {
	if (op.parent === "root") sm.resetLeaf();
	else if (typeof op.parent === "number") sm.branch(ids[op.parent]);
	const b = op.body;
	let id: string;
	switch (b.type) {
		case "message": id = sm.appendMessage(b.message); break;
		case "thinking_level_change": id = sm.appendThinkingLevelChange(b.thinkingLevel); break;
		case "model_change": id = sm.appendModelChange(b.model, b.role); break;
		case "compaction":
			id = sm.appendCompaction(b.summary, b.shortSummary, ref(b.firstKeptEntryId), b.tokensBefore,
				{ details: b.details, fromExtension: b.fromExtension });
			break;
		case "branch_summary": {
			const from = op.parent === "root" ? null : sm.getLeafId();
			id = sm.branchWithSummary(from, b.summary, b.details, b.fromExtension); break;
		}
		case "custom": id = sm.appendCustomEntry(b.customType, b.data); break;
		case "custom_message": id = sm.appendCustomMessageEntry(b.customType, b.content, b.display, b.details); break;
		case "label": id = sm.appendLabelChange(ref(b.targetId), b.label); break;
		default: throw new Error("unknown op " + b.type);
	}
	ids.push(id);
}
await sm.flush();
await sm.close?.();
console.log(sm.getSessionFile());
