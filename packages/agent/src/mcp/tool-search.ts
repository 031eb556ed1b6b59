/**
 * The newest pi's `tool_search` tool, as a built-in extension: it searches the tools that are not
 * declared to the model (`codemode` and `deferred` exposure: MCP servers' tools, and extensions'),
 * and activates the matches so the next model call declares them (tool-ranker.ts ranks them). It
 * is registered inactive; the MCP integration activates it for servers whose tools are not
 * `direct`, and `--tools` or `setActiveTools` can too.
 */
import type { TSchema } from "typebox";
import type { ExtensionAPI, ExtensionFactory } from "../extensions/types.js";
import type { ToolDefinition } from "../tools/types.js";
import { jsonSchemaParameters } from "./json-schema.js";
import { TOOL_SEARCH_TOOL_NAME } from "./names.js";

const DEFAULT_LIMIT = 8;

const PARAMETERS = jsonSchemaParameters({
  type: "object",
  properties: {
    query: { type: "string", description: "What the tool should do, or its name." },
    limit: { type: "number", description: `How many tools to load at most (default ${DEFAULT_LIMIT}).` },
  },
  required: ["query"],
});

const DESCRIPTION = `Finds tools that were not given to you up front, such as the tools of MCP servers, and makes the best matches callable from your next call. Search with ${TOOL_SEARCH_TOOL_NAME} whenever a task needs a tool you do not have.`;

export function toolSearchDefinition(
  pi: Pick<ExtensionAPI, "getAllTools" | "getActiveTools" | "setActiveTools">,
): ToolDefinition<TSchema, { loaded: string[] }> {
  return {
    name: TOOL_SEARCH_TOOL_NAME,
    label: TOOL_SEARCH_TOOL_NAME,
    description: DESCRIPTION,
    promptSnippet: "Find tools that are not loaded yet and load the matches",
    parameters: PARAMETERS,
    exposure: "model-only",
    defaultActive: false,
    reachesTools: () => "all",
    async execute(_id, params) {
      const { query, limit } = params as { query?: unknown; limit?: unknown };
      if (typeof query !== "string" || query.trim() === "") throw new Error("query must not be empty");
      const max = limit ?? DEFAULT_LIMIT;
      if (typeof max !== "number" || !Number.isInteger(max) || max <= 0) throw new Error("limit must be a positive integer");
      const active = pi.getActiveTools();
      const candidates = pi.getAllTools().filter((tool) => (tool.exposure === "codemode" || tool.exposure === "deferred") && !active.includes(tool.name));
      // The ranker (MiniSearch) loads with the first search.
      const { rankTools } = await import("./tool-ranker.js");
      const matches = rankTools(query, candidates, max);
      if (matches.length > 0) pi.setActiveTools([...active, ...matches.map((tool) => tool.name)]);
      const lines = matches.map((tool) => `- ${tool.name}: ${(tool.description ?? "").trim().split(/\r?\n/)[0]}`);
      const text =
        matches.length === 0
          ? "No matching tools found."
          : `Loaded ${matches.length} tool${matches.length === 1 ? "" : "s"}; you can call them from your next call:\n${lines.join("\n")}`;
      return { content: [{ type: "text", text }], details: { loaded: matches.map((tool) => tool.name) } };
    },
  };
}

export const toolSearchExtension: ExtensionFactory = (pi) => {
  pi.registerTool({ ...toolSearchDefinition(pi) });
};
