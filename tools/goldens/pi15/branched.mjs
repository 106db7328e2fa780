// pi 1.5.2: createBranchedSession(LEAF) of a copy of SESSION; prints the new file.
// Usage: PI_PKG=... node branched.mjs SESSION LEAF
import { copyFileSync, readFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
const { SessionManager } = await import(process.env.PI_PKG);
const [src, leaf] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), "pi-branch-"));
const copy = join(dir, "s.jsonl"); copyFileSync(src, copy);
const sm = SessionManager.open(copy, dir);
const f = sm.createBranchedSession(leaf);
process.stdout.write(readFileSync(f, "utf8"));
