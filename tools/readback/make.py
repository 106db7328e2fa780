#!/usr/bin/env python3
"""Writes tools/readback/ops.json through `arbor new`/`arbor append` only (argv and stdin `-` mode),
and prints the session path. Usage: make.py ARBOR OPS.json DIR [--omp]"""
import json, re, subprocess, sys

arbor, ops_file, out_dir = sys.argv[1:4]
omp = "--omp" in sys.argv[4:]
ops = json.load(open(ops_file, encoding="utf-8"))

def enc(body, ids):
    def sub(v):
        if isinstance(v, str) and v.startswith("@"):
            return ids[int(v[1:])]
        return v
    b = dict(body)
    for k in ("firstKeptEntryId", "targetId"):
        if k in b:
            b[k] = sub(b[k])
    s = json.dumps(b, ensure_ascii=False)
    # lone surrogates cannot travel in UTF-8: keep them as JSON escapes
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), s)

def run(args, stdin=None):
    r = subprocess.run([arbor] + args, input=stdin, capture_output=True, check=True, encoding="utf-8")
    return r.stdout.split()

new = ["new", "--dir", out_dir, "--cwd", "/work/project"] + (["--omp"] if omp else [])
path = run(new)[0]
ids = []
i = 0
while i < len(ops):
    op = ops[i]
    flag = []
    if op.get("parent") == "root":
        flag = ["--root"]
    elif isinstance(op.get("parent"), int):
        flag = ["--parent", ids[op["parent"]]]
    if op.get("stdin"):
        j = i
        lines = []
        while j < len(ops) and ops[j].get("stdin") and (j == i or "parent" not in ops[j]):
            lines.append(enc(ops[j]["body"], ids))
            j += 1
        got = run(["append", path] + flag + ["-"], stdin="\n".join(lines) + "\n")
        assert len(got) == j - i, got
        ids += got
        i = j
    else:
        ids += run(["append", path] + flag + [enc(op["body"], ids)])
        i += 1
print(path)
