/**
 * A server's `tools/list`, page by page, keeping every well-formed tool: pi-mcp's own listing
 * fails the whole server for one malformed entry; here that entry is skipped and named (by its
 * name when it has one, else its place in the list), so the server's other tools still work.
 */
import type { McpClient, McpRequestOptions, Tool } from "@earendil-works/pi-mcp";

/** pi-mcp's bound on pages. */
const MAX_PAGES = 100;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Why an entry is not a usable tool, or undefined when it is one (pi-mcp's rule: a name and an object schema). */
function problem(entry: unknown): string | undefined {
  if (!isObject(entry)) return "not an object";
  if (typeof entry["name"] !== "string" || entry["name"] === "") return "no name";
  if (!isObject(entry["inputSchema"])) return entry["inputSchema"] === undefined ? "no inputSchema" : "its inputSchema is not an object";
  return undefined;
}

const isTool = (entry: unknown): entry is Tool => problem(entry) === undefined;

function describe(entry: unknown, index: number, why: string): string {
  const name = isObject(entry) && typeof entry["name"] === "string" && entry["name"] !== "" ? `"${entry["name"]}"` : `#${index + 1}`;
  return `tool ${name} (${why})`;
}

export interface ToolList {
  tools: Tool[];
  /** The entries left out, each named with why. */
  skipped: string[];
}

export async function listTools(client: McpClient, options: McpRequestOptions = {}): Promise<ToolList> {
  const tools: Tool[] = [];
  const skipped: string[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let index = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result: unknown = await client.request("tools/list", cursor === undefined ? undefined : { cursor }, options);
    const entries = isObject(result) ? result["tools"] : undefined;
    if (!Array.isArray(entries)) throw new Error("Invalid MCP tools/list result: no tools array");
    for (const entry of entries) {
      if (isTool(entry)) tools.push(entry);
      else skipped.push(describe(entry, index, problem(entry) ?? "malformed"));
      index++;
    }
    const next = isObject(result) ? result["nextCursor"] : undefined;
    if (next === undefined || next === null || next === "") return { tools, skipped };
    if (typeof next !== "string") throw new Error("Invalid MCP tools/list cursor");
    if (cursors.has(next)) throw new Error(`MCP tools/list returned duplicate cursor: ${next}`);
    cursors.add(next);
    cursor = next;
  }
  throw new Error(`MCP tools/list exceeded ${MAX_PAGES} pages`);
}
