/**
 * A JSON Schema as a tool's parameters (MCP servers' schemas, and the MCP tools' own). parley
 * validates arguments with TypeBox, which reads plain JSON Schema; only the type says TypeBox-made,
 * hence the one cast. No imports: tool_search's module loads at start-up.
 */
import type { TSchema } from "typebox";

export const jsonSchemaParameters = (schema: Record<string, unknown>): TSchema => schema as TSchema;
