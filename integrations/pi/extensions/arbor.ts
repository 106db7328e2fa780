/**
 * arbor for pi: registers arbor's MCP server (`arbor mcp`, over stdio) for every session, so that
 * the model can search and read the person's past pi and omp sessions. The skill in
 * ../skills/arbor/SKILL.md tells the model when and how to use the tools.
 *
 * `arbor` must be on PATH (or name it in $ARBOR_BIN). A server named `arbor` in ~/.pi/agent/mcp.json
 * or .pi/mcp.json takes precedence over this registration (pi's rule), so `pi mcp add arbor -- arbor
 * mcp --allow-writes` there turns the write tools on, for instance.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerMcpServer("arbor", {
		command: process.env.ARBOR_BIN || "arbor",
		args: ["mcp"],
		description:
			"The person's past pi and omp coding sessions: full-text search, the branches of a session, the exact context a model saw, tool calls, edited files, tokens and costs (redacted, read-only)",
		// search_sessions is the way in and is declared to the model; the rest load through tool_search.
		exposure: "deferred",
		toolExposure: { search_sessions: "direct" },
	});
}
