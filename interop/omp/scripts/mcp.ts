// Runs omp's own MCP client (src/mcp: connectToServer, listTools,
// callTool) against a server over stdio, as omp does with a server in its
// mcp config: argv COMMAND CALLS_JSON, where CALLS_JSON is
// [{"name": tool, "arguments": {...}}, ...]; the server inherits the
// environment. Prints {server, instructions, tools, results}, each result
// {name, isError, text, structured}.
import { callTool, connectToServer, disconnectServer, listTools } from "@oh-my-pi/pi-coding-agent/mcp/client";

const [command, callsJSON] = process.argv.slice(2);
const calls: { name: string; arguments: Record<string, unknown> }[] = JSON.parse(callsJSON);
const conn = await connectToServer("xdev", { type: "stdio", command, args: [], timeout: 60_000 });
const tools = await listTools(conn);
const results = [];
for (const c of calls) {
	try {
		const r = await callTool(conn, c.name, c.arguments);
		const text = (r.content ?? []).filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
		results.push({ name: c.name, isError: !!r.isError, text, structured: (r as any).structuredContent ?? null });
	} catch (e) {
		results.push({ name: c.name, isError: true, text: String(e), structured: null, protocolError: true });
	}
}
await disconnectServer(conn);
process.stdout.write(JSON.stringify({
	server: conn.serverInfo, instructions: conn.instructions ?? "",
	tools: tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
	results,
}));
