#!/usr/bin/env python3
"""omp-ops.py OPS.json: the same op sequence in omp's dialect (model_change {model: "provider/id"}, fromExtension
instead of fromHook, no session_info: omp names sessions in its title slot). Parent indexes are renumbered."""
import json, sys
ops = json.load(open(sys.argv[1], encoding="utf-8"))
out, new_index = [], {}
for i, op in enumerate(ops):
    b = dict(op["body"])
    if b["type"] == "session_info":
        continue
    if b["type"] == "model_change":
        b = {"type": "model_change", "model": f'{b["provider"]}/{b["modelId"]}'}
    if "fromHook" in b:
        b["fromExtension"] = b.pop("fromHook")
    for k in ("firstKeptEntryId", "targetId"):
        if k in b:
            b[k] = "@%d" % new_index[int(b[k][1:])]
    o = dict(op, body=b)
    if isinstance(op.get("parent"), int):
        o["parent"] = new_index[op["parent"]]
    new_index[i] = len(out)
    out.append(o)
print(json.dumps(out, indent=1))
