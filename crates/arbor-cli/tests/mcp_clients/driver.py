"""Drives `arbor mcp` from the official MCP Python SDK (PyPI `mcp`), for tests/mcp_clients.rs.

    python driver.py stdio COMMAND ARG...   < plan.json
    python driver.py http URL [TOKEN_FILE]  < plan.json

The plan (JSON on stdin): {"calls": [{"tool": NAME, "arguments": {...}, "pages": N}],
"resources": true|false, "read": [URI...]}. A call with "pages" > 1 is repeated with
`cursor` = the previous answer's `next_cursor` until there is none or N pages were read.
Prints one JSON object: the server's name and protocol version, the tools as listed (every page),
each call's answers (isError, the text content, structuredContent), the resources as listed and
the text of each resource read. The SDK checks each structured answer against the tool's output
schema (ClientSession.validate_tool_result); a mismatch is an error, printed as the call's
"client_error".
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(session, plan):
    init = await session.initialize()
    out = {
        "protocol_version": init.protocol_version if hasattr(init, "protocol_version") else None,
        "server": dump(init.server_info),
        "capabilities": dump(init.capabilities),
        "instructions": init.instructions,
    }
    tools, cursor = [], None
    while True:
        params = {"cursor": cursor} if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(dump(t) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    out["tools"] = tools
    calls = []
    for call in plan.get("calls", []):
        args = dict(call.get("arguments", {}))
        pages = []
        for _ in range(max(1, call.get("pages", 1))):
            try:
                r = await session.call_tool(call["tool"], args)
            except Exception as e:  # a protocol error or a failed output-schema check
                pages.append({"client_error": f"{type(e).__name__}: {e}"})
                break
            text = "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")
            pages.append({"isError": bool(r.is_error), "text": text, "structured": r.structured_content})
            nxt = (r.structured_content or {}).get("next_cursor") if not r.is_error else None
            if not nxt:
                break
            args["cursor"] = nxt
        calls.append({"tool": call["tool"], "arguments": call.get("arguments", {}), "pages": pages})
    out["calls"] = calls
    if plan.get("resources"):
        res, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else None
            page = await session.list_resources(params=params)
            res.extend(dump(r) for r in page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
        out["resources"] = res
    reads = {}
    for uri in plan.get("read", []):
        try:
            r = await session.read_resource(uri)
            reads[uri] = {"text": "".join(getattr(c, "text", "") or "" for c in r.contents)}
        except Exception as e:
            reads[uri] = {"client_error": f"{type(e).__name__}: {e}"}
    out["read"] = reads
    return out


async def main():
    mode, target = sys.argv[1], sys.argv[2:]
    plan = json.load(sys.stdin)
    if mode == "stdio":
        params = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await run(session, plan)
    elif mode == "http":
        import httpx2

        headers = {}
        if len(target) > 1:
            with open(target[1]) as f:
                headers["Authorization"] = "Bearer " + f.read().strip()
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with streamable_http_client(target[0], http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    out = await run(session, plan)
    else:
        raise SystemExit(f"driver.py: unknown transport {mode!r} (stdio or http)")
    json.dump(out, sys.stdout)


asyncio.run(main())
