/**
 * The newest pi's built-in extensions, all of which parley has: `builtin:llama.cpp` (its `/llama`
 * command, which headless pi only declines), `builtin:codemode` (the `codemode` tool),
 * `builtin:mcp` (MCP servers) and `builtin:tool-search` (the `tool_search` tool). They load after every other extension, unless
 * `--no-extensions` (then only with `-e builtin:<name>`), `--no-mcp`, or the settings'
 * `extensions` list turns them off (`-builtin:mcp` in the user's, `+`/`-`/`!` in the project's).
 * As in pi, an extension that registers the same command or tool (`/mcp`, `tool_search`) replaces
 * the built-in one, which is then said on the log and not loaded (agent-core.ts).
 */
import { createMcpExtension } from "../mcp/mcp-extension.js";
import { codemodeExtension } from "./codemode-extension.js";
import { CODEMODE_TOOL_NAME } from "./codemode-loadout.js";
import { TOOL_SEARCH_TOOL_NAME } from "../mcp/names.js";
import { toolSearchExtension } from "../mcp/tool-search.js";
import { BUILTIN_PREFIX, PARLEY_BUILTINS, type BuiltinName } from "./builtin-names.js";
import type { ExtensionSource } from "./extension-source.js";
import { llamaExtension } from "./llama-extension.js";
import type { ExtensionFactory } from "./types.js";

export interface BuiltinOptions {
  agentDir: string;
  version: string;
  noExtensions: boolean;
  noMcp: boolean;
  /** `-e builtin:<name>` */
  requested: readonly string[];
  userPatterns: readonly string[] | undefined;
  projectPatterns: readonly string[] | undefined;
}

/** The last entry naming the path decides: `+path` or `path` turns it on, `-path` or `!path` off. */
function verdict(path: string, patterns: readonly string[] | undefined): boolean | undefined {
  let on: boolean | undefined;
  for (const pattern of patterns ?? []) {
    if (pattern === path || pattern === `+${path}`) on = true;
    else if (pattern === `-${path}` || pattern === `!${path}`) on = false;
  }
  return on;
}

/** A built-in's factory, and what an extension registering the same replaces it by (llama.cpp cannot be replaced, as in pi). */
function builtin(name: BuiltinName, options: BuiltinOptions): { factory: ExtensionFactory; replaceable?: { command?: string; tool?: string } } {
  switch (name) {
    case "llama.cpp":
      return { factory: llamaExtension };
    case "codemode":
      return { factory: codemodeExtension, replaceable: { tool: CODEMODE_TOOL_NAME } };
    case "mcp":
      return { factory: createMcpExtension({ agentDir: options.agentDir, clientVersion: options.version }), replaceable: { command: "mcp" } };
    case "tool-search":
      return { factory: toolSearchExtension, replaceable: { tool: TOOL_SEARCH_TOOL_NAME } };
  }
}

export function builtinSources(options: BuiltinOptions): ExtensionSource[] {
  const sources: ExtensionSource[] = [];
  for (const name of PARLEY_BUILTINS) {
    const path = `${BUILTIN_PREFIX}${name}`;
    const requested = options.requested.includes(name);
    const bySettings = !options.noExtensions && (verdict(path, options.projectPatterns) ?? verdict(path, options.userPatterns) ?? true);
    if (name === "mcp" && options.noMcp) continue;
    if (!requested && !bySettings) continue;
    const { factory, replaceable } = builtin(name, options);
    sources.push({
      path,
      factory,
      ...(replaceable ? { replaceable } : {}),
      // pi 1.6 reports every built-in as temporary, whether settings or `-e builtin:…` brought it.
      scope: "temporary",
      sourceInfo: { path, source: "builtin", scope: "temporary", origin: "top-level" },
    });
  }
  return sources;
}
