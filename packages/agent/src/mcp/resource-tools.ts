/**
 * MCP resources through the three tools other agents (Codex, opencode) give models, so models
 * trained on them use them unchanged: `list_mcp_resources`, `list_mcp_resource_templates`,
 * `read_mcp_resource`. Listings are JSON (`{ server?, resources: [{ server, ... }], nextCursor? }`);
 * with `server` one page is listed and `cursor` goes on, without it every page of every server.
 * Resources meant for hosts that draw MCP Apps (`ui://`, `profile=mcp-app`) are left out.
 */
import { limitMcpContent, type McpRequestOptions } from "@earendil-works/pi-mcp";
import type { TSchema } from "typebox";
import { errorMessage } from "../error-text.js";
import type { ToolDefinition } from "../tools/types.js";
import type { McpServerConnection } from "./connection.js";
import { jsonSchemaParameters } from "./json-schema.js";
import type { ToolExposure } from "./server-tools.js";
import { LIST_MCP_RESOURCE_TEMPLATES_TOOL, LIST_MCP_RESOURCES_TOOL, READ_MCP_RESOURCE_TOOL } from "./names.js";
import { modelContent, saveOutput } from "./tool-results.js";

type Details = { server: string; tool: string; fullOutputPath?: string };
type Listed = { uri?: string; uriTemplate?: string; mimeType?: string | undefined };

const text = (description: string) => ({ type: "string", description });
const LIST_PARAMETERS = jsonSchemaParameters({
  type: "object",
  properties: {
    server: text("The MCP server to list. Leave it out to list every server that has resources."),
    cursor: text("The nextCursor of an earlier call for the same server; leave it out for the first page."),
  },
  additionalProperties: false,
});
const READ_PARAMETERS = jsonSchemaParameters({
  type: "object",
  properties: {
    server: text("The MCP server, by the name list_mcp_resources gives in its 'server' field."),
    uri: text("The URI of the resource, as list_mcp_resources gives it."),
  },
  required: ["server", "uri"],
  additionalProperties: false,
});

const isAppResource = (item: Listed): boolean =>
  (item.uri ?? item.uriTemplate ?? "").startsWith("ui://") || /;\s*profile\s*=\s*"?mcp-app"?/i.test(item.mimeType ?? "");

/** The item tagged with its server, without `_meta` and icons. */
function listed(server: string, item: Listed): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...item };
  delete rest._meta;
  delete rest.icons;
  return { server, ...rest };
}

function stringArgument(params: unknown, key: string): string | undefined {
  const value: unknown = typeof params === "object" && params !== null ? Reflect.get(params, key) : undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`${key} must be a string`);
  return value.trim() || undefined;
}

async function jsonResult(tool: string, server: string | undefined, payload: unknown) {
  const { content, fullOutputPath } = await limitMcpContent([{ type: "text", text: JSON.stringify(payload) }], saveOutput);
  return { content, details: { server: server ?? "", tool, ...(fullOutputPath ? { fullOutputPath } : {}) } };
}

/** The three tools; `servers` gives, when a call runs, the connections whose resources they reach. */
export function resourceToolDefinitions(exposure: ToolExposure, servers: () => McpServerConnection[]): ToolDefinition<TSchema, Details>[] {
  const annotations = { readOnlyHint: true };
  const find = (name: string): McpServerConnection => {
    const all = servers();
    const found = all.find((server) => server.name === name);
    if (found) return found;
    const names = all.map((server) => server.name).join(", ");
    throw new Error(`MCP server "${name}" has no resources${names ? `. Servers with resources: ${names}` : ""}`);
  };
  /** A listing tool: one page of one server (`server`, `cursor`), or every page of every server. */
  const listing = (
    name: string,
    description: string,
    key: string,
    page: (
      server: McpServerConnection,
      cursor: string | undefined,
      options: McpRequestOptions,
    ) => Promise<{ items: Listed[]; nextCursor?: string | undefined }>,
    all: (server: McpServerConnection, options: McpRequestOptions) => Promise<Listed[]>,
  ): ToolDefinition<TSchema, Details> => ({
    name,
    label: name,
    description,
    parameters: LIST_PARAMETERS,
    exposure,
    annotations,
    async execute(_id, params, signal) {
      const serverName = stringArgument(params, "server");
      const cursor = stringArgument(params, "cursor");
      const options = (server: McpServerConnection): McpRequestOptions => ({ ...(signal ? { signal } : {}), timeoutMs: server.timeoutMs });
      const shown = (server: string, items: Listed[]) => items.filter((item) => !isAppResource(item)).map((item) => listed(server, item));
      if (serverName) {
        const server = find(serverName);
        const result = await page(server, cursor, options(server));
        const payload = {
          server: server.name,
          [key]: shown(server.name, result.items),
          ...(result.nextCursor === undefined ? {} : { nextCursor: result.nextCursor }),
        };
        return jsonResult(name, serverName, payload);
      }
      if (cursor) throw new Error("cursor can only be used when a server is specified");
      const sorted = [...servers()].sort((a, b) => a.name.localeCompare(b.name));
      const results = await Promise.allSettled(sorted.map((server) => all(server, options(server))));
      const items: Record<string, unknown>[] = [];
      const errors: { server: string; error: string }[] = [];
      results.forEach((result, index) => {
        const server = sorted[index]?.name ?? "";
        if (result.status === "fulfilled") items.push(...shown(server, result.value));
        else errors.push({ server, error: errorMessage(result.reason) });
      });
      return jsonResult(name, undefined, { [key]: items, ...(errors.length > 0 ? { errors } : {}) });
    },
  });
  return [
    listing(
      LIST_MCP_RESOURCES_TOOL,
      "Lists the resources MCP servers offer: files, schemas and other data a server shares as context. Prefer a server's resources to a web search when they cover the question.",
      "resources",
      async (server, cursor, options) => {
        const result = await server.resourcesPage(cursor, options);
        return { items: result.resources, nextCursor: result.nextCursor };
      },
      (server, options) => server.allResources(options),
    ),
    listing(
      LIST_MCP_RESOURCE_TEMPLATES_TOOL,
      "Lists the resource templates MCP servers offer: URI templates (RFC 6570) for data a server shares when given parameters. Prefer them to a web search when they cover the question.",
      "resourceTemplates",
      async (server, cursor, options) => {
        const result = await server.resourceTemplatesPage(cursor, options);
        return { items: result.resourceTemplates, nextCursor: result.nextCursor };
      },
      (server, options) => server.allResourceTemplates(options),
    ),
    {
      name: READ_MCP_RESOURCE_TOOL,
      label: READ_MCP_RESOURCE_TOOL,
      description: "Reads one resource of an MCP server, given the server's name and the resource's URI.",
      parameters: READ_PARAMETERS,
      exposure,
      annotations,
      async execute(_id, params, signal) {
        const name = stringArgument(params, "server");
        const uri = stringArgument(params, "uri");
        if (!name || !uri) throw new Error("server and uri are required");
        const server = find(name);
        const result = await server.readResource(uri, { ...(signal ? { signal } : {}), timeoutMs: server.timeoutMs });
        const blocks = result.contents.map((resource) => ({ type: "resource" as const, resource }));
        const converted = await modelContent(server.name, blocks, true);
        const { content, fullOutputPath } = await limitMcpContent(
          converted.length > 0 ? converted : [{ type: "text", text: `Resource ${uri} is empty` }],
          saveOutput,
        );
        return { content, details: { server: server.name, tool: READ_MCP_RESOURCE_TOOL, ...(fullOutputPath ? { fullOutputPath } : {}) } };
      },
    },
  ];
}
