#!/usr/bin/env python3
"""Writes a Claude Code session of about SIZE_MB megabytes (deterministic: SEED) in Claude Code
2.1's shapes: each turn a prompt, a reply over several lines sharing message.id (thinking, text,
tool calls) with its usage repeated on each, progress lines, tool results as user lines with
toolUseResult (1-12 KB of output), now and then a branch (a prompt re-asked from an earlier
point) and a compaction (compact_boundary + isCompactSummary).
Usage: gen-claude.py OUT.jsonl SIZE_MB [SEED]"""
import json, random, sys, uuid

out, size_mb = sys.argv[1], float(sys.argv[2])
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
target = int(size_mb * 1024 * 1024)
sid = str(uuid.UUID(int=rnd.getrandbits(128)))
words = ("the a file test build error fix function module return value line path branch tree "
         "session import merge reply tool result output input cache token model").split()
def text(n):
    return " ".join(rnd.choice(words) for _ in range(n))
n = 0
t = 1_790_000_000_000
def uid():
    return str(uuid.UUID(int=rnd.getrandbits(128)))
def base(kind, parent):
    global n, t
    n += 1
    t += rnd.randint(200, 5000)
    ms = t
    iso = "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (2026, 9, 1 + (ms // 86_400_000) % 28, (ms // 3_600_000) % 24, (ms // 60_000) % 60, (ms // 1000) % 60, ms % 1000)
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/bench",
            "sessionId": sid, "version": "2.1.72", "gitBranch": "main", "type": kind, "uuid": uid(), "timestamp": iso}
written = 0
users = []
with open(out, "w") as f:
    def emit(rec):
        global written
        line = json.dumps(rec, separators=(",", ":"))
        f.write(line + "\n")
        written += len(line) + 1
        return rec["uuid"]
    tail = None
    turn = 0
    while written < target:
        turn += 1
        if users and rnd.random() < 0.03:
            tail = rnd.choice(users)  # a branch: re-ask from an earlier point
        if turn % 150 == 0:
            b = base("system", None)
            b.update(subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=tail,
                     compactMetadata={"trigger": "auto", "preTokens": rnd.randint(100000, 180000)})
            tail = emit(b)
            u = base("user", tail)
            u.update(isCompactSummary=True, message={"role": "user", "content": "This session is being continued. Summary: " + text(300)})
            tail = emit(u)
        u = base("user", tail)
        u["message"] = {"role": "user", "content": text(rnd.randint(5, 60))}
        users.append(tail)
        tail = emit(u)
        for step in range(rnd.randint(1, 4)):
            mid = "msg_%024x" % rnd.getrandbits(96)
            usage = {"input_tokens": rnd.randint(1, 50), "cache_creation_input_tokens": rnd.randint(0, 3000),
                     "cache_read_input_tokens": rnd.randint(10000, 150000), "output_tokens": rnd.randint(20, 900),
                     "service_tier": "standard"}
            blocks = []
            if rnd.random() < 0.5:
                blocks.append({"type": "thinking", "thinking": text(rnd.randint(20, 200)), "signature": "Eu" + "x" * 200})
            blocks.append({"type": "text", "text": text(rnd.randint(10, 120))})
            calls = []
            for _ in range(rnd.randint(0, 3) if step < 3 else 0):
                cid = "toolu_%022x" % rnd.getrandbits(88)
                calls.append(cid)
                blocks.append({"type": "tool_use", "id": cid, "name": rnd.choice(["Bash", "Read", "Edit", "Grep"]),
                               "input": {"command": text(8), "description": text(4)}})
            for blk in blocks:
                a = base("assistant", tail)
                a["message"] = {"model": "claude-opus-4-6", "id": mid, "type": "message", "role": "assistant",
                                "content": [blk], "stop_reason": None, "stop_sequence": None, "usage": usage}
                a["requestId"] = "req_%024x" % rnd.getrandbits(96)
                tail = emit(a)
            for cid in calls:
                p = base("progress", tail)
                p.update(data={"type": "bash_progress", "output": text(10)}, toolUseID=cid, parentToolUseID=cid)
                tail = emit(p)
                r = base("user", tail)
                body = text(rnd.randint(150, 2000))
                r["message"] = {"role": "user", "content": [{"tool_use_id": cid, "type": "tool_result", "content": body, "is_error": False}]}
                r["toolUseResult"] = {"stdout": body, "stderr": "", "interrupted": False, "isImage": False}
                tail = emit(r)
            if not calls:
                break
        s = base("system", tail)
        s.update(subtype="turn_duration", durationMs=rnd.randint(1000, 90000), isMeta=False)
        tail = emit(s)
    f.write(json.dumps({"type": "ai-title", "aiTitle": "bench session", "sessionId": sid}) + "\n")
print(out)
