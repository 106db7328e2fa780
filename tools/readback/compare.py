#!/usr/bin/env python3
"""compare.py ARBOR ARBOR_FILE PEER_FILE EXPECT_PREFIX: structure of the arbor-written file vs the peer-written
one (line count, types, parent structure by position, recursive key order), then arbor's context/llm/tree vs the
peer's recorded answers (EXPECT_PREFIX.{context,llm,tree}.json). Exit 1 on any difference."""
import json, subprocess, sys

arbor, afile, pfile, prefix = sys.argv[1:5]
bad = 0
def keys(v):
    if isinstance(v, dict):
        return [[k, keys(x)] for k, x in v.items() if True]
    if isinstance(v, list):
        return [keys(x) for x in v]
    return None
def strip(v):  # key sequences, values of id/parentId/timestamp aside
    return keys(v)
A = [json.loads(l) for l in open(afile, encoding="utf-8", errors="surrogatepass").read().split("\n") if l]
P = [json.loads(l) for l in open(pfile, encoding="utf-8", errors="surrogatepass").read().split("\n") if l]
n = 0
if len(A) != len(P):
    print("line count", len(A), len(P)); bad += 1
for i, (a, p) in enumerate(zip(A, P)):
    n += 1
    if a.get("type") != p.get("type"): print("type", i, a.get("type"), p.get("type")); bad += 1
    if strip(a) != strip(p): print("keys", i, json.dumps(strip(a)), json.dumps(strip(p))); bad += 1
    pos = lambda L, e: None if e.get("parentId") is None else [x.get("id") for x in L].index(e["parentId"])
    if i > 0 and pos(A, a) != pos(P, p): print("parent", i, pos(A, a), pos(P, p)); bad += 1
    for k in ("firstKeptEntryId", "targetId", "fromId"):
        if k in a and k in p:
            fa = [x.get("id") for x in A].index(a[k]) if a[k] in [x.get("id") for x in A] else a[k]
            fp = [x.get("id") for x in P].index(p[k]) if p[k] in [x.get("id") for x in P] else p[k]
            if fa != fp: print(k, i, fa, fp); bad += 1
print(f"structure: {n} lines compared")
def ar(*args):
    return json.loads(subprocess.run([arbor] + list(args), capture_output=True, check=True).stdout)
# arbor's documented superset on pi files: omp's models/injectedTtsrRules/mode after pi's three keys
PI_EXTRA = ["models", "injectedTtsrRules", "mode"]
def ctx_of(*args):
    c = ar(*args)
    if "--pi" in sys.argv[5:]:
        assert list(c)[-3:] == PI_EXTRA, list(c)
        for k in PI_EXTRA:
            del c[k]
    if "--omp" in sys.argv[5:]:  # arbor's documented superset on omp files: pi's model after thinkingLevel
        assert list(c)[2] == "model", list(c)
        del c["model"]
    return c
ctx = json.load(open(prefix + ".context.json")); llm = json.load(open(prefix + ".llm.json"))
m = 0
for key in ctx:
    extra = [] if key == "__open__" else ["--leaf", key]
    if ctx_of("context", afile, *extra) != ctx[key]: print("context differs", key); bad += 1
    if ctx_of("context", afile, "--llm", *extra) != llm[key]: print("llm differs", key); bad += 1
    m += 1
tree = json.load(open(prefix + ".tree.json"))
if ar("tree", afile, "--json") != tree: print("tree differs"); bad += 1
meta = json.load(open(prefix + ".meta.json"))
hdr = [x for x in A if x.get("type") == "session"][0]
if meta["header"] != hdr or list(meta["header"]) != list(hdr): print("header differs", meta["header"], hdr); bad += 1
print(f"answers: {m} context keys x (context, llm) + tree compared; differences: {bad}")
sys.exit(1 if bad or n == 0 or m == 0 else 0)
