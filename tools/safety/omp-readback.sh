#!/usr/bin/env bash
# Checks by hand that the REAL omp 18.2.3 reads what arbor writes into an omp session: an image appended with
# `arbor append` (stored in the shared blob store under the sha256 of its decoded bytes) and a name set with
# `arbor name` (title slot rewritten in place). Needs bun and omp under /tmp/peers (setup-peers.sh).
# Prints omp's view: {"name","entries","imageRestored"}; imageRestored must be true.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUN=/tmp/peers/omp/node_modules/.bin/bun
cargo build -q --manifest-path "$ROOT/Cargo.toml" -p arbor-cli
A=$ROOT/target/debug/arbor
T=$(mktemp -d /tmp/arbor-omp-readback.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/agent"
S=$("$A" --agent-dir "$T/agent" new --omp --cwd /w)
head -c 5000 /dev/urandom | base64 -w0 >"$T/img.b64"
"$A" --agent-dir "$T/agent" append "$S" "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"data\":\"$(cat "$T/img.b64")\",\"mimeType\":\"image/png\"}],\"timestamp\":1}}" >/dev/null
"$A" --agent-dir "$T/agent" name "$S" "Arbor named" >/dev/null
cat >"$T/read.ts" <<TS
const { SessionManager } = await import("/tmp/peers/omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts");
const sm = await SessionManager.open(process.argv[2]);
const img = require("fs").readFileSync("$T/img.b64", "utf8");
const e = sm.getEntries().find((x: any) => x.type === "message");
console.log(JSON.stringify({ name: sm.getSessionName(), entries: sm.getEntries().length, imageRestored: e.message.content[0].data === img }));
TS
PI_CODING_AGENT_DIR=$T/agent HOME=$T "$BUN" "$T/read.ts" "$S"
