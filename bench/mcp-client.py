"""The client side of bench/mcp.sh: times `arbor mcp` over stdio through the official MCP Python
SDK (PyPI `mcp`, ClientSession), as an agent would call it.

    python mcp-client.py start RUNS QUERY -- ARBOR mcp ...
        RUNS fresh servers: the time from spawning the server to the first answer of
        search_sessions(QUERY) (initialize included), and the server's CPU time until then.
    python mcp-client.py search RUNS WARMUP QUERY... -- ARBOR mcp ...
        one server; each QUERY WARMUP times, then RUNS times: wall time per call and the
        server's CPU time per call.
    python mcp-client.py first RUNS SESSION -- ARBOR mcp ...
        RUNS fresh servers for each of get_messages and get_context: the first page on
        SESSION, the time of the call, the server's CPU time for it, the server's peak RSS.

Prints one JSON object per measurement on stdout: {"what", "wall_ms": [...], "cpu_ms": [...],
"rss_kb": [...], "chars": answer size}. The server's CPU time is the sum of its threads'
(/proc/PID/task/*/schedstat, nanoseconds); its pid comes from a `sh -c 'echo $$ >F; exec ...'`
wrapper. A tool error (isError) stops the run with its text.
"""

import asyncio
import json
import os
import sys
import tempfile
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def cpu_ns(pid):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended
    return total


def peak_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Server:
    """`arbor mcp` over stdio, with its pid."""

    def __init__(self, cmd):
        self.cmd = cmd
        fd, self.pidfile = tempfile.mkstemp(prefix="arbor-mcp-pid.")
        os.close(fd)

    async def __aenter__(self):
        params = StdioServerParameters(
            command="sh",
            args=["-c", 'echo $$ >"$0"; exec "$@"', self.pidfile, *self.cmd],
            env=dict(os.environ),
        )
        self._client = stdio_client(params)
        read, write = await self._client.__aenter__()
        self._session = ClientSession(read, write)
        self.session = await self._session.__aenter__()
        return self

    def pid(self):
        with open(self.pidfile) as f:
            return int(f.read().strip())

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._client.__aexit__(*exc)
        os.unlink(self.pidfile)


async def call(session, tool, args):
    """The answer's size in characters (text and structured content) and the structured answer."""
    r = await session.call_tool(tool, args)
    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
    if r.is_error:
        raise SystemExit(f"mcp-client.py: {tool} {args}: tool error: {text}")
    s = r.structured_content or {}
    return len(text) + len(json.dumps(s)), s


def emit(what, **kw):
    print(json.dumps({"what": what, **kw}), flush=True)


async def start(runs, query, cmd):
    wall, cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        async with Server(cmd) as s:
            await s.session.initialize()
            _, answer = await call(s.session, "search_sessions", {"query": query})
            wall.append((time.perf_counter() - t0) * 1e3)
            cpu.append(cpu_ns(s.pid()) / 1e6)
    emit(f"start to first answer (search_sessions {query})", wall_ms=wall, cpu_ms=cpu,
         matches=answer.get("matches"))


async def search(runs, warmup, queries, cmd):
    async with Server(cmd) as s:
        await s.session.initialize()
        pid = s.pid()
        for q in queries:
            args = {"query": q}
            for _ in range(warmup):
                await call(s.session, "search_sessions", args)
            wall, cpu = [], []
            for _ in range(runs):
                c0, t0 = cpu_ns(pid), time.perf_counter()
                chars, answer = await call(s.session, "search_sessions", args)
                wall.append((time.perf_counter() - t0) * 1e3)
                cpu.append((cpu_ns(pid) - c0) / 1e6)
            emit(f"search_sessions {q}", wall_ms=wall, cpu_ms=cpu, chars=chars,
                 matches=answer.get("matches"), hits=len(answer.get("hits", [])))


async def first(runs, session, cmd):
    # Each tool on servers of its own: a server keeps the session it loaded, so a second tool
    # on the same server would not pay for reading the file.
    res = {t: {"wall": [], "cpu": [], "chars": 0} for t in ("get_messages", "get_context")}
    rss = []
    for _ in range(runs):
        for tool in ("get_messages", "get_context"):
            async with Server(cmd) as s:
                await s.session.initialize()
                pid = s.pid()
                c0, t0 = cpu_ns(pid), time.perf_counter()
                res[tool]["chars"], _ = await call(s.session, tool, {"session": session})
                res[tool]["wall"].append((time.perf_counter() - t0) * 1e3)
                res[tool]["cpu"].append((cpu_ns(pid) - c0) / 1e6)
                rss.append(peak_rss_kb(pid))
    for tool, r in res.items():
        emit(f"{tool} first page", wall_ms=r["wall"], cpu_ms=r["cpu"], chars=r["chars"])
    emit("server peak RSS after both", rss_kb=rss)


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    mode, rest, cmd = argv[0], argv[1:sep], argv[sep + 1 :]
    if mode == "start":
        asyncio.run(start(int(rest[0]), rest[1], cmd))
    elif mode == "search":
        asyncio.run(search(int(rest[0]), int(rest[1]), rest[2:], cmd))
    elif mode == "first":
        asyncio.run(first(int(rest[0]), rest[1], cmd))
    else:
        raise SystemExit(f"mcp-client.py: unknown mode {mode!r}")


main()
