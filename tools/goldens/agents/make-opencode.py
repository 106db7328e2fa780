#!/usr/bin/env python3
"""Writes the generated opencode sources of goldens/agents/: opencode.db (opencode 1.2+'s SQLite
layout: session, message, part with JSON `data`) and storage/ (the JSON files before 1.2), the same
sessions in both. Message/part shapes as opencode writes them (see docs/agents.md); the first
session's first two messages and parts are the ones of git-ai's public fixture
(tests/fixtures/opencode-sqlite/schema.sql), ids and session renamed.
Usage: make-opencode.py OUTDIR   (writes OUTDIR/opencode.db and OUTDIR/../opencode-storage/storage)"""
import json, os, sqlite3, sys

out = sys.argv[1]
T0 = 1793700000000  # 2026-11-03T...

sessions = [
    dict(id="ses_01main", project_id="p1", parent_id=None, slug="main", directory="/work/app",
         title="Update index.ts", version="1.2.4", time_created=T0, time_updated=T0 + 90000),
    dict(id="ses_02sub", project_id="p1", parent_id="ses_01main", slug="sub", directory="/work/app",
         title="Explore (@general subagent)", version="1.2.4", time_created=T0 + 20000, time_updated=T0 + 30000),
]
def tok(i, o, r=0, cr=0, cw=0):
    return {"input": i, "output": o, "reasoning": r, "cache": {"read": cr, "write": cw}}
messages = {
  "ses_01main": [
    ("msg_001", {"role": "user", "time": {"created": T0}, "agent": "build", "model": {"providerID": "openai", "modelID": "gpt-5"}},
     [{"type": "text", "text": "Please update index.ts using sqlite transcript data"},
      {"type": "file", "mime": "image/png", "filename": "pixel.png", "url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="}]),
    ("msg_002", {"role": "assistant", "time": {"created": T0 + 1000, "completed": T0 + 5000}, "parentID": "msg_001", "modelID": "gpt-5", "providerID": "openai", "mode": "build",
                 "path": {"cwd": "/work/app", "root": "/work/app"}, "cost": 0.0123, "tokens": tok(30, 50, 5, 100, 0), "finish": "stop"},
     [{"type": "step-start"},
      {"type": "reasoning", "text": "Edit index.ts first."},
      {"type": "text", "text": "I will make the edit from sqlite."},
      {"type": "tool", "tool": "edit", "callID": "call-sql-001", "state": {"status": "completed", "input": {"filePath": "/work/app/index.ts", "content": "// sqlite path\nconsole.log(\"sqlite\");"}, "output": "Edit applied", "title": "index.ts", "metadata": {}, "time": {"start": T0 + 2000, "end": T0 + 3000}}},
      {"type": "step-finish", "reason": "tool-calls", "cost": 0.0100, "tokens": tok(10, 40, 5, 100, 0)},
      {"type": "step-start"},
      {"type": "tool", "tool": "bash", "callID": "call-sql-002", "state": {"status": "error", "input": {"command": "npm test"}, "error": "exit code 1"}},
      {"type": "step-finish", "reason": "tool-calls", "cost": 0.0013, "tokens": tok(10, 5, 0, 0, 0)},
      {"type": "step-start"},
      {"type": "text", "text": "Edited; the tests still fail."},
      {"type": "step-finish", "reason": "stop", "cost": 0.0010, "tokens": tok(10, 5, 0, 0, 0)},
      {"type": "patch", "hash": "abc", "files": ["/work/app/index.ts"]}]),
    ("msg_003", {"role": "user", "time": {"created": T0 + 20000}},
     [{"type": "text", "text": "Ask a subagent to explore the repo"}]),
    ("msg_004", {"role": "assistant", "time": {"created": T0 + 21000}, "parentID": "msg_003", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "cost": 0.002, "tokens": tok(20, 10)},
     [{"type": "step-start"},
      {"type": "tool", "tool": "task", "callID": "call-task-1", "state": {"status": "completed", "input": {"description": "Explore", "prompt": "List the modules", "subagent_type": "general"}, "output": "modules: a, b", "metadata": {"sessionId": "ses_02sub"}}},
      {"type": "step-finish", "reason": "tool-calls", "cost": 0.002, "tokens": tok(20, 10)}]),
    ("msg_005", {"role": "user", "time": {"created": T0 + 40000}}, [{"type": "compaction", "auto": True}]),
    ("msg_006", {"role": "assistant", "time": {"created": T0 + 41000}, "parentID": "msg_005", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "summary": True, "cost": 0.001, "tokens": tok(900, 60)},
     [{"type": "text", "text": "Summary: index.ts edited, tests failing, modules a and b."}]),
    ("msg_007", {"role": "user", "time": {"created": T0 + 60000}}, [{"type": "text", "text": "Fix the tests"}]),
    ("msg_008", {"role": "assistant", "time": {"created": T0 + 61000}, "parentID": "msg_007", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "cost": 0.0, "tokens": tok(0, 0),
                 "error": {"name": "ProviderAuthError", "data": {"message": "invalid api key"}}},
     []),
    ("msg_009", {"role": "system", "time": {"created": T0 + 62000}}, []),
  ],
  "ses_02sub": [
    ("msg_101", {"role": "user", "time": {"created": T0 + 20500}}, [{"type": "text", "text": "List the modules"}]),
    ("msg_102", {"role": "assistant", "time": {"created": T0 + 21500}, "parentID": "msg_101", "modelID": "claude-haiku-4-5", "providerID": "anthropic", "cost": 0.0004, "tokens": tok(50, 8)},
     [{"type": "step-start"}, {"type": "text", "text": "modules: a, b"}, {"type": "step-finish", "reason": "stop", "cost": 0.0004, "tokens": tok(50, 8)}]),
  ],
}

os.makedirs(out, exist_ok=True)
db = os.path.join(out, "opencode.db")
if os.path.exists(db):
    os.remove(db)
c = sqlite3.connect(db)
c.executescript("""
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL,
  title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER,
  summary_files INTEGER, summary_diffs TEXT, revert TEXT, permission TEXT, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
""")
for s in sessions:
    c.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?,?,?,?,?,?,?,?,?)",
              (s["id"], s["project_id"], s["parent_id"], s["slug"], s["directory"], s["title"], s["version"], s["time_created"], s["time_updated"]))
for sid, msgs in messages.items():
    for mid, data, parts in msgs:
        t = data["time"]["created"]
        c.execute("INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, t, t, json.dumps(data)))
        for i, p in enumerate(parts):
            c.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (f"prt_{mid[4:]}_{i:02d}", mid, sid, t + i, t + i, json.dumps(p)))
# A part whose data is not JSON: reported, skipped.
c.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", ("prt_007_99", "msg_007", "ses_01main", T0 + 60001, T0 + 60001, "{not json"))
c.commit()
c.close()

st = os.path.join(out, "..", "opencode-storage", "storage")
for s in sessions:
    d = os.path.join(st, "session", s["project_id"]); os.makedirs(d, exist_ok=True)
    j = {"id": s["id"], "version": s["version"], "projectID": s["project_id"], "directory": s["directory"], "title": s["title"],
         "time": {"created": s["time_created"], "updated": s["time_updated"]}}
    if s["parent_id"]:
        j["parentID"] = s["parent_id"]
    json.dump(j, open(os.path.join(d, s["id"] + ".json"), "w"))
for sid, msgs in messages.items():
    md = os.path.join(st, "message", sid); os.makedirs(md, exist_ok=True)
    for mid, data, parts in msgs:
        json.dump(dict(id=mid, sessionID=sid, **data), open(os.path.join(md, mid + ".json"), "w"))
        pd = os.path.join(st, "part", mid); os.makedirs(pd, exist_ok=True)
        for i, p in enumerate(parts):
            pid = f"prt_{mid[4:]}_{i:02d}"
            json.dump(dict(id=pid, sessionID=sid, messageID=mid, **p), open(os.path.join(pd, pid + ".json"), "w"))
print(db)
