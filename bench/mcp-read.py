#!/usr/bin/env python3
"""The readers of arbor mcp on one (large) session: the first call of each tool in a server
of its own, then the pages after it in the same server.

    bench/mcp-read.py ARBOR AGENT_DIR CATALOG SESSION [RUNS]

For each of get_messages and get_context (default arguments): RUNS times, a new server
(`bench/mcp_raw.py`'s `Server`), initialize, the call timed (the wall time as the client sees
it); the server's CPU time (user+sys, the whole process: start, initialize, the call) and its
peak RSS (VmHWM). Then, in one server, the pages after the first (get_messages at offset
1000, get_context, get_tree, get_tool_calls). Compare with
`/usr/bin/time -f '%e s %U+%S s %M KB' ARBOR context SESSION > /dev/null`.
The numbers of docs/mcp.md's "Measured": a 1 GB session from
`arbor-gen --size 1GB --seed 1 AGENT_DIR/sessions/--tmp-big--/2026-01-01T00-00-00-000Z_big.jsonl`.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_raw import INIT, Server, cpu  # noqa: E402


def hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


def call(s, name, args):
    t0 = time.perf_counter()
    r = s.request("tools/call", {"name": name, "arguments": args})
    wall = time.perf_counter() - t0
    assert r["result"]["isError"] is False, r
    return wall


def main():
    arbor, agent, catalog, session = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    for name in ["get_messages", "get_context"]:
        walls, cpus, peaks = [], [], []
        for _ in range(runs):
            s = Server(arbor, agent, catalog)
            s.request("initialize", INIT)
            s.notify("notifications/initialized")
            walls.append(call(s, name, {"session": session}))
            cpus.append(cpu(s.p.pid))
            peaks.append(hwm(s.p.pid))
            s.close()
        print(
            f"{name} first call: median {statistics.median(walls) * 1000:.0f} ms wall "
            f"({min(walls) * 1000:.0f} to {max(walls) * 1000:.0f}), server CPU "
            f"{statistics.median(cpus):.2f} s, peak RSS {statistics.median(peaks)} MB, {runs} runs"
        )
    s = Server(arbor, agent, catalog)
    s.request("initialize", INIT)
    s.notify("notifications/initialized")
    call(s, "get_messages", {"session": session})
    for name, args in [
        ("get_messages", {"session": session, "offset": 1000}),
        ("get_context", {"session": session}),
        ("get_tree", {"session": session}),
        ("get_tool_calls", {"session": session}),
    ]:
        print(f"{name} after the first: {call(s, name, args) * 1000:.0f} ms wall")
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    s.close()


if __name__ == "__main__":
    main()
