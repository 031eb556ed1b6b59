/**
 * An MCP server's tool as a parley tool: named `mcp__<server>__<tool>` (pi-mcp's naming, with its
 * hash suffix when names collide), its input schema made an object schema, its annotations kept for
 * permission extensions, and calls run through parley's tool pipeline (`tool_call`/`tool_result`
 * hooks apply). `codemode` and `deferred` tools are both `deferred` tools: declared once
 * `tool_search` (or a codemode extension) reaches them.
 */
import { normalizeMcpInputSchema, type Tool } from "@earendil-works/pi-mcp";
import type { TSchema } from "typebox";
import type { ToolDefinition } from "../tools/types.js";
import type { McpExposure } from "./config.js";
import { jsonSchemaParameters } from "./json-schema.js";
import type { McpServerConnection } from "./connection.js";
import { type McpToolOutput, toolOutput } from "./tool-results.js";

export type ToolExposure = "direct" | "deferred" | "hidden";

export const toToolExposure = (exposure: McpExposure): ToolExposure => (exposure === "codemode" ? "deferred" : exposure);

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

function annotationsOf(tool: Tool): ToolDefinition["annotations"] {
  const out: NonNullable<ToolDefinition["annotations"]> = {};
  for (const hint of HINTS) {
    const value = tool.annotations?.[hint];
    if (typeof value === "boolean") out[hint] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A content block, as much of it as a script needs to know. */
const CONTENT_BLOCK_SCHEMA = {
  type: "object",
  properties: {
    type: { enum: ["text", "image", "audio", "resource_link", "resource"] },
    text: { type: "string" },
    data: { type: "string" },
    mimeType: { type: "string" },
  },
  required: ["type"],
  additionalProperties: true,
};

/** Values of these keywords are data (a `$ref` key in them is no reference); those of the others below map names to schemas. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"]);

/** The schema with its local `$ref`s pointing below `pointer`, where it is placed. */
function relocate(schema: unknown, pointer: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => relocate(item, pointer));
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref" && typeof value === "string" && (value === "#" || value.startsWith("#/"))) out[key] = `${pointer}${value.slice(1)}`;
    else if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (MAP_KEYWORDS.has(key) && typeof value === "object" && value !== null && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, relocate(sub, pointer)]));
    else out[key] = relocate(value, pointer);
  }
  return out;
}

/** What a script's call of an MCP tool resolves to: the server's CallToolResult, its structured content by the tool's own output schema. */
export function mcpResultSchema(structuredContentSchema: unknown): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      content: { type: "array", items: CONTENT_BLOCK_SCHEMA },
      // A server may send structured content without declaring its schema, and it may be any JSON.
      structuredContent: structuredContentSchema ? relocate(structuredContentSchema, "#/properties/structuredContent") : {},
      isError: { type: "boolean" },
    },
    required: ["content"],
    // Newer protocol versions add fields.
    additionalProperties: true,
  };
}

export interface McpToolOptions {
  server: string;
  tool: Tool;
  name: string;
  exposure: McpExposure;
  namespace: NonNullable<ToolDefinition["namespace"]>;
  /** The server's connection when the call runs (it may have been replaced or disabled meanwhile). */
  connection: () => McpServerConnection;
  /** Whether the server's resources can be read (resource links then name read_mcp_resource). */
  readableResources: () => boolean;
}

export function mcpToolDefinition(options: McpToolOptions): ToolDefinition<TSchema, McpToolOutput["details"]> {
  const { server, tool } = options;
  const annotations = annotationsOf(tool);
  return {
    name: options.name,
    label: `${server}/${tool.name}`,
    description: tool.description?.trim() || tool.title || tool.annotations?.title || `MCP tool ${tool.name} from server ${server}`,
    parameters: jsonSchemaParameters(normalizeMcpInputSchema(tool.inputSchema)),
    outputSchema: mcpResultSchema(tool.outputSchema),
    exposure: toToolExposure(options.exposure),
    namespace: options.namespace,
    ...(annotations ? { annotations } : {}),
    async execute(_toolCallId, params, signal, onUpdate) {
      const connection = options.connection();
      const args = typeof params === "object" && params !== null ? (params as Record<string, unknown>) : {};
      const result = await connection.callTool(tool.name, args, {
        ...(signal ? { signal } : {}),
        timeoutMs: connection.timeoutMs,
        onProgress: (progress) => {
          const total = progress.total === undefined ? "" : `/${progress.total}`;
          onUpdate?.({ content: [{ type: "text", text: progress.message ?? `Progress ${progress.progress}${total}` }], details: { server, tool: tool.name } });
        },
      });
      return toolOutput(server, tool.name, result, options.readableResources());
    },
  };
}
