/**
 * The newest pi's built-in MCP support (`builtin:mcp`) as a parley built-in extension. This module
 * stays light: it registers `/mcp` and the events, and loads the MCP client and the rest
 * (mcp-session.ts) only once there is a server to connect: an `mcp.json` (the user's, or a trusted
 * project's) or a server an extension registered.
 */
import { existsSync } from "node:fs";
import type { ExtensionAPI, ExtensionContext, ExtensionFactory } from "../extensions/types.js";
import type { McpOptions, McpSession } from "./mcp-session.js";
import { noServersConfigured, projectMcpFile, userMcpFile } from "./names.js";

export function createMcpExtension(options: McpOptions): ExtensionFactory {
  return (pi: ExtensionAPI) => {
    let session: McpSession | undefined;

    const hasServers = (ctx: ExtensionContext): boolean =>
      pi.getMcpServers().length > 0 || existsSync(userMcpFile(options.agentDir)) || (ctx.isProjectTrusted() && existsSync(projectMcpFile(ctx.cwd)));

    /** The session's MCP integration, loaded on first need. */
    const load = async (): Promise<McpSession> => {
      if (session) return session;
      const { createMcpSession } = await import("./mcp-session.js");
      session ??= createMcpSession(pi, options);
      return session;
    };

    pi.on("session_start", async (_event, ctx) => {
      if (session || hasServers(ctx)) (await load()).sessionStart(ctx);
    });
    pi.on("before_agent_start", (event, ctx) => session?.beforeAgentStart(event, ctx));
    pi.on("tool_call", async (event, ctx) => {
      await session?.toolCall(event, ctx);
    });
    // A server registered later in a session that had none loads the integration then.
    pi.on("mcp_servers_change", async (_event, ctx) => {
      if (session) await session.serversChanged(ctx);
      else if (hasServers(ctx)) (await load()).sessionStart(ctx);
    });
    pi.on("session_shutdown", async () => {
      await session?.sessionShutdown();
    });
    pi.registerCommand("mcp", {
      // pi 1.6's description, which clients list.
      description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
      handler: async (args, ctx) => {
        if (session) await session.command(args, ctx);
        else ctx.ui.notify(noServersConfigured(options.agentDir), "info");
      },
    });
  };
}
