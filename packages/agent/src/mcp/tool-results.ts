/**
 * What the model gets from an MCP result: text and images (pi-mcp's conversion), a resource link
 * as a line naming `read_mcp_resource`, a binary resource saved to a file parley creates. Text
 * over pi-mcp's limit (20 KB) keeps its start and end, and the whole text is saved to a file the
 * model can read. A result with `isError` becomes an error for the model.
 */
import { type CallToolResult, type ContentBlock, type LlmContent, limitMcpContent, toLlmContent } from "@earendil-works/pi-mcp";
import type { JsonValue } from "@earendil-works/pi-ai";
import { errorMessage } from "../error-text.js";
import { writeOutputFile } from "../output-files.js";
import { formatSize } from "../tools/truncate.js";
import { READ_MCP_RESOURCE_TOOL } from "./names.js";

/** Saves data to a new output file of parley's (private, removed at exit); returns its path. */
export function saveOutput(data: string | Uint8Array, extension: string): Promise<string> {
  return writeOutputFile("parley-mcp", extension, data);
}

function isTextType(mimeType: string | undefined): boolean {
  const type = mimeType?.split(";", 1)[0]?.trim().toLowerCase();
  if (!type) return false;
  return type.startsWith("text/") || type === "application/json" || type.endsWith("+json") || type.endsWith("+xml");
}

function extensionOf(uri: string): string {
  let path = uri;
  try {
    path = new URL(uri).pathname;
  } catch {
    // not a URL: its own text
  }
  return /\.[A-Za-z0-9]{1,8}$/.exec(path)?.[0] ?? ".bin";
}

async function blockContent(server: string, block: ContentBlock, readable: boolean): Promise<LlmContent[]> {
  if (block.type === "resource_link") {
    const details = [block.mimeType, block.size === undefined ? undefined : formatSize(block.size)].filter(Boolean);
    const read = readable ? `. Read it with ${READ_MCP_RESOURCE_TOOL} (server "${server}")` : "";
    const description = block.description ? `: ${block.description}` : "";
    return [
      {
        type: "text",
        text: `[Resource ${block.uri} "${block.title ?? block.name}"${details.length > 0 ? ` (${details.join(", ")})` : ""}${description}${read}]`,
      },
    ];
  }
  if (block.type === "resource" && "blob" in block.resource && !block.resource.mimeType?.startsWith("image/")) {
    const { uri, mimeType, blob } = block.resource;
    const data = Buffer.from(blob, "base64");
    if (isTextType(mimeType)) return [{ type: "text", text: data.toString("utf8") }];
    const kind = `${mimeType ?? "unknown type"}, ${formatSize(data.length)}`;
    try {
      return [{ type: "text", text: `[Binary resource ${uri} (${kind}) saved to ${await saveOutput(data, extensionOf(uri))}]` }];
    } catch (error) {
      return [{ type: "text", text: `[Binary resource ${uri} (${kind}) could not be saved: ${errorMessage(error)}]` }];
    }
  }
  return toLlmContent({ content: [block] });
}

/** Content blocks for the model, before the size limit. */
export async function modelContent(server: string, blocks: readonly ContentBlock[], readable: boolean): Promise<LlmContent[]> {
  return (await Promise.all(blocks.map((block) => blockContent(server, block, readable)))).flat();
}

export interface McpToolOutput {
  content: LlmContent[];
  details: { server: string; tool: string; fullOutputPath?: string };
  /** The server's whole result less `_meta`: what a codemode script's call resolves to (pi 1.6). */
  structuredContent: JsonValue;
  /** The server said `isError`: an error result for the model, still with the structured result. */
  isError?: true;
}

/** A tool result for the model, with the server's result as structured content (pi 1.6's). */
export async function toolOutput(server: string, tool: string, result: CallToolResult, readable: boolean): Promise<McpToolOutput> {
  const converted = result.content.length > 0 ? await modelContent(server, result.content, readable) : toLlmContent(result);
  if (result.isError && !converted.some((block) => block.type === "text" && block.text !== "")) {
    converted.push({ type: "text", text: `MCP tool ${server}/${tool} returned an error` });
  }
  const { content, fullOutputPath } = await limitMcpContent(converted, saveOutput);
  const { _meta: _dropped, ...scriptResult } = result;
  return {
    content,
    details: { server, tool, ...(fullOutputPath ? { fullOutputPath } : {}) },
    structuredContent: toJsonValue(scriptResult),
    ...(result.isError ? { isError: true as const } : {}),
  };
}

/** The server's result as JSON (it came as JSON, so only undefined fields drop out). */
function toJsonValue(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value) ?? "null") as JsonValue;
}
