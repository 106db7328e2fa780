#!/usr/bin/env python3
"""Applies omp 18.3.4's session-reading changes to a copy of omp 18.2.3 (see setup.sh).

Usage: patch.py OLD_SESSION_DIR NEW_SESSION_DIR AGENT_CORE_MESSAGES_TS
Edits OLD_SESSION_DIR/session-context.ts, replaces OLD_SESSION_DIR/session-listing.ts, and
edits the agent-core file in place. Fails loudly when the sources are not the expected ones.
"""
import difflib
import re
import sys

old_dir, new_dir, core = sys.argv[1:4]

# 1. session-context.ts: take 18.3.4's side of exactly the changes of the compaction code that
#    mention the new names (the other changes of the file move helpers into pi-tui).
KEYS = ("historyRewriteAt", "retainedStart", "snapshotIdx", "summaryTimestamp")
ctx_old_path = f"{old_dir}/session-context.ts"
old = open(ctx_old_path).read().splitlines(keepends=True)
new = open(f"{new_dir}/session-context.ts").read().splitlines(keepends=True)
out, taken = [], 0
for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
    side_old, side_new = "".join(old[i1:i2]), "".join(new[j1:j2])
    if tag != "equal" and any(k in side_old or k in side_new for k in KEYS):
        out.extend(new[j1:j2])
        taken += 1
    else:
        out.extend(old[i1:i2])
text = "".join(out)
if taken < 5 or "summaryTimestamp" in text or "historyRewriteAt," not in text:
    sys.exit(f"session-context.ts: unexpected sources ({taken} changes taken)")
open(ctx_old_path, "w").write(text)

# 2. session-listing.ts: 18.3.4's file, its two imports of 18.3.4-only modules pointed at what
#    18.2.3 has (the title index moved from title-index.ts to session-index.ts; `textContent`
#    joins the text blocks with the separator, as 18.2.3's extractTextFromContent did with " "),
#    and FileSessionStorage given 18.3.4's `hasAssistantTurn` (any line that parses as a
#    `message` entry with an assistant role).
listing = open(f"{new_dir}/session-listing.ts").read()
listing, n1 = re.subn(
    r'import \{ textContent \} from "@oh-my-pi/pi-tui/chat/transcript-entry";\n', "", listing)
listing, n2 = re.subn(r'from "\./session-index";', 'from "./title-index";', listing)
if (n1, n2) != (1, 1):
    sys.exit(f"session-listing.ts: unexpected imports ({n1}, {n2})")
listing += '''
function textContent(content: Message["content"], separator: string): string {
\tif (typeof content === "string") return content;
\tconst parts: string[] = [];
\tfor (const block of content) if (block.type === "text") parts.push(block.text);
\treturn parts.join(separator);
}

// omp 18.3.4's FileSessionStorage.hasAssistantTurn, which 18.2.3's storage lacks.
(FileSessionStorage.prototype as unknown as { hasAssistantTurn(p: string): Promise<boolean> }).hasAssistantTurn =
\tasync function (p: string): Promise<boolean> {
\t\tconst handle = await fs.promises.open(p, "r");
\t\ttry {
\t\t\tfor await (const line of handle.readLines()) {
\t\t\t\tif (line.length === 0 || line.charCodeAt(0) !== 123) continue;
\t\t\t\tlet record: { type?: unknown; message?: { role?: unknown } };
\t\t\t\ttry {
\t\t\t\t\trecord = JSON.parse(line);
\t\t\t\t} catch {
\t\t\t\t\tcontinue;
\t\t\t\t}
\t\t\t\tif (record.type === "message" && record.message?.role === "assistant") return true;
\t\t\t}
\t\t\treturn false;
\t\t} finally {
\t\t\tawait handle.close();
\t\t}
\t};
'''
open(f"{old_dir}/session-listing.ts", "w").write(listing)

# 3. pi-agent-core: createCompactionSummaryMessage takes `historyRewriteAt` (placed just before
#    `timestamp`), and the compaction summary's LLM message prefers it to `timestamp`.
src = open(core).read()
src, a = re.subn(r"(const \{ shortSummary, providerPayload, images, blocks, warning, method, tokensAfter) \} = options;",
                 r"\1, historyRewriteAt } = options;", src)
src, b = re.subn(r"(\n\t\twarning,\n)(\t\ttimestamp: new Date\(timestamp\)\.getTime\(\),)",
                 r"\1\t\thistoryRewriteAt,\n\2", src)
src, c = re.subn(r"(\ttokensAfter\?: number;\n)(\}\n\nexport function createCompactionSummaryMessage)",
                 r"\1\thistoryRewriteAt?: number;\n\2", src)
# The second `historyRewriteAt: message.timestamp` is the compaction summary's.
parts = src.split("historyRewriteAt: message.timestamp,")
if (a, b, c) != (1, 1, 1) or len(parts) != 3:
    sys.exit(f"{core}: unexpected source ({a}, {b}, {c}, {len(parts) - 1})")
src = parts[0] + "historyRewriteAt: message.timestamp," + parts[1] + \
    "historyRewriteAt: message.historyRewriteAt ?? message.timestamp," + parts[2]
open(core, "w").write(src)
print("patched", file=sys.stderr)
