/**
 * The MCP servers an ACP client offers in `session/new`, `session/load` and `session/resume`
 * (stdio and HTTP; SSE is refused in `initialize`'s `mcpCapabilities`), as entries of the
 * `mcpServers` shape the built-in MCP support connects, named with letters, digits and `_`. Their tools are `direct`: the editor
 * offered them for the agent to use. Values are the client's, taken literally (a `$` or a leading
 * `!` is escaped, so nothing in them names a variable or runs a command).
 */
import type { McpServer } from "@agentclientprotocol/sdk";

/** Who registered them, in `/mcp` and `pi.getMcpServers()`. */
export const CLIENT_MCP_OWNER = "acp-client";

const literal = (value: string): string => {
  const escaped = value.replaceAll("$", "$$$$");
  return escaped.startsWith("!") ? `$${escaped}` : escaped;
};

const record = (pairs: readonly { name: string; value: string }[]): Record<string, string> =>
  Object.fromEntries(pairs.map(({ name, value }) => [name, literal(value)]));

/** The servers as mcp.json entries, named with the characters MCP names allow; `skipped` says why some were left out. */
export function clientMcpServers(servers: readonly McpServer[] | undefined): {
  servers: { name: string; config: Record<string, unknown> }[];
  skipped: string[];
} {
  const out: { name: string; config: Record<string, unknown> }[] = [];
  const skipped: string[] = [];
  for (const server of servers ?? []) {
    // "_" for everything else, "-" included: two names then never share a namespace (mcp__<name>).
    const base = server.name.replace(/[^A-Za-z0-9_]/g, "_") || "server";
    let name = base;
    for (let n = 2; out.some((taken) => taken.name === name); n++) name = `${base}_${n}`;
    if ("type" in server && server.type === "sse") {
      skipped.push(`MCP server "${server.name}": SSE servers are not supported (parley connects stdio and Streamable HTTP servers)`);
      continue;
    }
    if ("url" in server) out.push({ name, config: { url: server.url, headers: record(server.headers), exposure: "direct" } });
    else out.push({ name, config: { command: server.command, args: server.args, env: record(server.env), exposure: "direct" } });
  }
  return { servers: out, skipped };
}
