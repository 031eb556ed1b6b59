/**
 * What the MCP modules name alike: the tools' names, where `mcp.json` lives, and the sign-in
 * command they point at. Nothing heavy is imported: the start-up path (tool selection, the light
 * MCP extension, tool_search) reads these without loading the MCP client.
 */
import { join } from "node:path";
import { PROJECT_DIR_NAME } from "../config/agent-dir.js";

export const TOOL_SEARCH_TOOL_NAME = "tool_search";
export const LIST_MCP_RESOURCES_TOOL = "list_mcp_resources";
export const LIST_MCP_RESOURCE_TEMPLATES_TOOL = "list_mcp_resource_templates";
export const READ_MCP_RESOURCE_TOOL = "read_mcp_resource";
export const RESOURCE_TOOL_NAMES: ReadonlySet<string> = new Set([LIST_MCP_RESOURCES_TOOL, LIST_MCP_RESOURCE_TEMPLATES_TOOL, READ_MCP_RESOURCE_TOOL]);

/** MCP's tools: a server's (`mcp__<server>__<tool>`) and the resource tools. */
export const isMcpToolName = (name: string): boolean => name.startsWith("mcp__") || RESOURCE_TOOL_NAMES.has(name);

/** The user's `mcp.json`, in the agent directory. */
export const userMcpFile = (agentDir: string): string => join(agentDir, "mcp.json");
/** A project's `mcp.json` (read only when the project is trusted). */
export const projectMcpFile = (cwd: string): string => join(cwd, PROJECT_DIR_NAME, "mcp.json");

export const noServersConfigured = (agentDir: string): string => `No MCP servers configured. Add them to ${userMcpFile(agentDir)} or .pi/mcp.json.`;

/** The command that signs in to an OAuth-protected server. */
export const signInCommand = (server: string): string => `parley mcp login ${server}`;

/** Where `parley mcp` errors point (pi's own words point at `pi mcp --help`). */
export const MCP_HELP_HINT = 'Use "parley mcp --help" for usage.';

/** What the `parley mcp` commands are given: pi's folders, parley's version, and where their lines go. */
export interface McpCliOptions {
  agentDir: string;
  cwd: string;
  version: string;
  out: (line: string) => void;
  err: (line: string) => void;
}
