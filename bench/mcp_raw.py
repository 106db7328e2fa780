#!/usr/bin/env python3
"""arbor mcp over stdio with raw JSON-RPC lines: start to first answer, and warm tool calls.

    bench/mcp_raw.py ARBOR AGENT_DIR CATALOG [RUNS] [QUERY]

Starts `ARBOR --agent-dir AGENT_DIR mcp --all --catalog CATALOG` RUNS times and times, for
each start, initialize + tools/list (the wall time from spawn to the tools/list answer);
then, in one server, search_sessions QUERY and list_sessions {limit: 20} RUNS times each
after two warm-up calls. Prints medians of wall time, the server's CPU time (user+sys, from /proc/PID/stat: the
whole process for a start, the mean per call for the calls), and the load average. The catalog should be up to date
(`ARBOR --agent-dir AGENT_DIR index --catalog CATALOG` first). MCP_ARGS adds flags to
`arbor mcp` (`--no-watch`); MCP_WAIT=SECONDS waits after initialize before the calls (the
server's watcher makes its first refresh in the background).

issue 25's client benchmark through the real clients (Inspector CLI, Python SDK) is
bench/mcp.sh; this one needs nothing but Python and measures the server alone.
"""
import json
import os
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 (1-based) of the whole line.
    return (int(fields[11]) + int(fields[12])) / TICK


class Server:
    def __init__(self, arbor, agent, catalog):
        self.p = subprocess.Popen(
            [arbor, "--agent-dir", agent, "mcp", "--all", "--catalog", catalog]
            + os.environ.get("MCP_ARGS", "").split(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next = 1

    def request(self, method, params):
        rid = self.next
        self.next += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout")
            m = json.loads(line)
            if m.get("id") == rid:
                return m

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "mcp_raw", "version": "1"},
}


def main():
    arbor, agent, catalog = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 11
    query = sys.argv[5] if len(sys.argv) > 5 else "refactor lock"
    starts, start_cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        s = Server(arbor, agent, catalog)
        s.request("initialize", INIT)
        s.notify("notifications/initialized")
        r = s.request("tools/list", {})
        starts.append(time.perf_counter() - t0)
        start_cpu.append(cpu(s.p.pid))
        assert "result" in r, r
        s.close()
    s = Server(arbor, agent, catalog)
    s.request("initialize", INIT)
    s.notify("notifications/initialized")
    # MCP_WAIT=SECONDS: let the server's own watcher finish its first refresh first.
    time.sleep(float(os.environ.get("MCP_WAIT", "0")))
    out = {}
    for name, args in [
        ("search_sessions", {"query": query}),
        ("list_sessions", {"limit": 20}),
    ]:
        for _ in range(2):
            s.request("tools/call", {"name": name, "arguments": args})
        walls = []
        c0 = cpu(s.p.pid)
        for _ in range(runs):
            t0 = time.perf_counter()
            r = s.request("tools/call", {"name": name, "arguments": args})
            walls.append(time.perf_counter() - t0)
            assert r["result"]["isError"] is False, r
        # The clock ticks are 10 ms: the CPU time of all the calls, divided.
        per_call = (cpu(s.p.pid) - c0) / runs
        out[name] = (walls, per_call, r["result"]["structuredContent"])
    s.close()
    ms = lambda v: f"{statistics.median(v) * 1000:.1f} ms"
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    print(f"start to initialize + tools/list: median {ms(starts)} wall, {ms(start_cpu)} CPU (user+sys), {runs} runs")
    for name, (walls, per_call, sc) in out.items():
        n = len(sc.get("hits", sc.get("sessions", [])))
        print(f"{name}: median {ms(walls)} wall, {per_call * 1000:.1f} ms CPU per call (user+sys, the mean over the runs), {runs} runs, {n} items")


if __name__ == "__main__":
    main()
