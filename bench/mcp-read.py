#!/usr/bin/env python3
"""Drive `arbor mcp --all` over stdio: initialize, then each tool call in argv[2:] (JSON
{"name":..., "arguments":...}); print the wall time of each call as the client sees it,
the server's peak and current RSS (VmHWM, VmRSS) and its CPU time (user+sys, the whole
process). The numbers of docs/mcp.md's "Measured" (the readers on a 1 GB session):

  arbor-gen --size 1GB --seed 1 $HOME/.pi/agent/sessions/--tmp-big--/2026-01-01T00-00-00-000Z_big.jsonl
  python3 bench/mcp-read.py target/release/arbor '{"name":"get_messages","arguments":{"session":"PATH"}}'
  /usr/bin/time -f '%e s %U+%S s %M KB' target/release/arbor context PATH > /dev/null
"""
import json, subprocess, sys, time, os
arbor = sys.argv[1]
calls = [json.loads(a) for a in sys.argv[2:]]
p = subprocess.Popen([arbor, "mcp", "--all"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def req(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc":"2.0","id":i,"method":method,"params":params})+"\n").encode()); p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("server closed")
        v = json.loads(line)
        if v.get("id") == i: return v
t0=time.perf_counter()
req(1,"initialize",{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
print(f"initialize {1000*(time.perf_counter()-t0):.0f} ms")
for k,c in enumerate(calls):
    t=time.perf_counter()
    v=req(k+2,"tools/call",c)
    ms=1000*(time.perf_counter()-t)
    r=v.get("result",{})
    sc=r.get("structuredContent",{})
    n=len(json.dumps(v))
    print(f"{c['name']} {ms:.0f} ms, answer {n} chars, isError={r.get('isError')}, messages={len(sc.get('messages', sc.get('context',{}).get('messages',[]) if isinstance(sc.get('context'),dict) else []))}")
with open(f"/proc/{p.pid}/status") as f:
    for l in f:
        if l.startswith(("VmHWM","VmRSS")): print(l.strip())
p.stdin.close(); p.wait()
ru=os.times()
print(f"server cpu user+sys {ru.children_user+ru.children_system:.2f} s")
