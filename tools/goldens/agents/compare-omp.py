#!/usr/bin/env python3
"""Compares arbor's import of a source set (expected/SET-ID.pi.jsonl) with omp 18.2.3's import of
the same sources (OMPDIR/*.jsonl), message by message. Usage: compare-omp.py SET EXPECTED OMPDIR"""
import difflib, json, os, sys

set_, exp, ompdir = sys.argv[1:]

def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]

def text_of(m):
    c = m.get("content")
    if isinstance(c, str):
        return c
    out = []
    for p in c or []:
        t = p.get("type")
        if t == "text": out.append(p["text"])
        elif t == "thinking": out.append("<thinking%s>" % (":redacted" if p.get("redacted") else ""))
        elif t == "toolCall": out.append("<call %s %s>" % (p.get("name"), p.get("id")))
        elif t == "image": out.append("<image>")
    return " | ".join(out)

def summary(m):
    r = m["role"]
    if r == "toolResult":
        return "toolResult %s: %s" % (m.get("toolCallId"), text_of(m)[:60])
    return "%s: %s" % (r, text_of(m)[:80])

def stats(entries):
    msgs = [e["message"] for e in entries if e.get("type") == "message"]
    roles = {}
    for m in msgs: roles[m["role"]] = roles.get(m["role"], 0) + 1
    # Leaves of the conversation: message and compaction entries no conversation entry hangs
    # from (a title or marker entry after the last message does not count).
    conv = [e for e in entries if e.get("type") in ("message", "compaction", "model_change")]
    parents = {e.get("parentId") for e in conv}
    ids = [e["id"] for e in entries if e.get("type") in ("message", "compaction") and "id" in e]
    leaves = [i for i in ids if i not in parents]
    use = [0, 0, 0, 0]
    for m in msgs:
        if m["role"] == "assistant":
            u = m.get("usage") or {}
            for k, key in enumerate(["input", "output", "cacheRead", "cacheWrite"]):
                use[k] += u.get(key, 0)
    types = {}
    for e in entries: types[e.get("type")] = types.get(e.get("type"), 0) + 1
    return msgs, roles, leaves, use, types

def merged(msgs):
    """omp's assistant messages sharing a responseId, one after another, as one."""
    out = []
    for m in msgs:
        if (out and m["role"] == "assistant" and out[-1]["role"] == "assistant"
                and m.get("responseId") and m.get("responseId") == out[-1].get("responseId")):
            out[-1] = dict(out[-1], content=list(out[-1]["content"]) + list(m["content"]))
        else:
            out.append(m)
    return out

print(f"## {set_}")
for f in sorted(os.listdir(ompdir)):
    omp = load(os.path.join(ompdir, f))
    body = [e for e in omp if e.get("type") != "session"]
    src = next((e["data"] for e in body if e.get("type") == "custom" and e.get("customType") == "foreign_session_import"), {})
    sid = src.get("sourceId")
    mine_p = os.path.join(exp, f"{set_}-{sid}.pi.jsonl")
    if not os.path.exists(mine_p):
        print(f"- {sid}: omp imported it, arbor has no import of it (arbor imports only sessions with messages)")
        continue
    mine = load(mine_p)[1:]
    am, ar, al, au, at = stats(mine)
    om, orr, ol, ou, ot = stats(body)
    omm = merged(om)
    print(f"- session {sid}")
    print(f"  entries: arbor {len(mine)} {dict(sorted(at.items()))}; omp {len(body)} {dict(sorted(ot.items()))}")
    print(f"  messages: arbor {len(am)} {dict(sorted(ar.items()))}; omp {len(om)} {dict(sorted(orr.items()))}; omp with replies merged by responseId {len(omm)}")
    print(f"  branches (leaf messages): arbor {len(al)}, omp {len(ol)}")
    print(f"  usage input/output/cacheRead/cacheWrite: arbor {au}, omp {ou}")
    a = [summary(m) for m in am]
    o = [summary(m) for m in omm]
    sm = difflib.SequenceMatcher(a=a, b=o, autojunk=False)
    same = sum(b.size for b in sm.get_matching_blocks())
    print(f"  message by message (file order; omp merged): {same} equal, {len(a) - same} only in arbor, {len(o) - same} only in omp")
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        for x in a[i1:i2]: print(f"    arbor only: {x}")
        for x in o[j1:j2]: print(f"    omp only:   {x}")
print()
