import { constants } from "node:fs";
import { access } from "node:fs/promises";
import type { ImageContent, TextContent } from "@earendil-works/pi-ai";
import { type Static, Type } from "typebox";
import { fitImage } from "./image-fit.js";
import { resolveReadPath } from "./path-utils.js";
import { readRegularFile, readRegularHead } from "./read-regular-file.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult, truncateHead } from "./truncate.js";
import type { AgentTool, AgentToolResult, ToolDefinition } from "./types.js";
import { abortable, describeFsError, throwIfAborted, toAgentTool } from "./util.js";

const readSchema = Type.Object({
  path: Type.String({ description: "File to read, relative to the working directory or absolute" }),
  offset: Type.Optional(Type.Number({ description: "1-based line number to start at" })),
  limit: Type.Optional(Type.Number({ description: "How many lines to return at most" })),
});

export type ReadToolInput = Static<typeof readSchema>;

export interface ReadToolDetails {
  truncation?: TruncationResult;
}

/** Pluggable file access, so extensions can read from remote systems (e.g. over SSH). */
export interface ReadOperations {
  readFile: (absolutePath: string) => Promise<Buffer>;
  /** Throws if the file is not readable. */
  access: (absolutePath: string) => Promise<void>;
  /** Image MIME type, or null/undefined for anything else. */
  detectImageMimeType?: (absolutePath: string) => Promise<string | null | undefined>;
}

export interface ReadToolOptions {
  /**
   * settings.json `images.autoResize` (default true, as in pi): images over 2000 pixels a side
   * or 4.5 MB (base64) are scaled down before they reach the model (see image-fit.ts).
   */
  autoResizeImages?: boolean;
  operations?: ReadOperations;
}

/** Sniff the image formats models accept from their magic bytes (extensions lie). */
export function sniffImageMimeType(head: Uint8Array): string | undefined {
  const startsWith = (bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
  if (startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith([0x47, 0x49, 0x46, 0x38]) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61) return "image/gif";
  if (startsWith([0x52, 0x49, 0x46, 0x46]) && startsWith([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return undefined;
}

const localOperations: ReadOperations = {
  readFile: readRegularFile,
  access: (p) => access(p, constants.R_OK),
  async detectImageMimeType(p) {
    const head = await readRegularHead(p, 16);
    return head === undefined ? undefined : sniffImageMimeType(head);
  },
};

function formatText(text: string, rawPath: string, offset: number | undefined, limit: number | undefined) {
  const lines = text.split("\n");
  const totalFileLines = lines.length;
  const startIndex = offset !== undefined && offset > 0 ? Math.floor(offset) - 1 : 0;
  if (startIndex >= totalFileLines) {
    throw new Error(`Offset ${offset} is beyond end of file (${totalFileLines} lines total)`);
  }
  const userLimit = limit !== undefined ? Math.max(0, Math.floor(limit)) : undefined;
  const endIndex = userLimit !== undefined ? Math.min(startIndex + userLimit, totalFileLines) : totalFileLines;
  const selected = lines.slice(startIndex, endIndex).join("\n");
  const truncation = truncateHead(selected);
  const firstLine = startIndex + 1;

  if (truncation.firstLineExceedsLimit) {
    const size = formatSize(Buffer.byteLength(lines[startIndex] ?? "", "utf8"));
    return {
      text: `[Line ${firstLine} is ${size}, exceeds ${formatSize(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '${firstLine}p' ${rawPath} | head -c ${DEFAULT_MAX_BYTES}]`,
      details: { truncation } as ReadToolDetails,
    };
  }
  if (truncation.truncated) {
    const lastLine = firstLine + truncation.outputLines - 1;
    const limitNote = truncation.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
    return {
      text: `${truncation.content}\n\n[Showing lines ${firstLine}-${lastLine} of ${totalFileLines}${limitNote}. Use offset=${lastLine + 1} to continue.]`,
      details: { truncation } as ReadToolDetails,
    };
  }
  if (userLimit !== undefined && startIndex + userLimit < totalFileLines) {
    const remaining = totalFileLines - (startIndex + userLimit);
    return {
      text: `${truncation.content}\n\n[${remaining} more lines in file. Use offset=${startIndex + userLimit + 1} to continue.]`,
      details: undefined,
    };
  }
  return { text: truncation.content, details: undefined };
}

async function imageContent(buffer: Buffer, mimeType: string, autoResize: boolean): Promise<(TextContent | ImageContent)[]> {
  if (!autoResize) {
    return [
      { type: "text", text: `Read image file [${mimeType}]` },
      { type: "image", data: buffer.toString("base64"), mimeType },
    ];
  }
  const fitted = await fitImage(buffer, mimeType);
  if (!fitted) return [{ type: "text", text: `Read image file [${mimeType}]\n[The image is left out: even scaled down it is over the size a model accepts.]` }];
  const r = fitted.resized;
  const note = r
    ? `\n[Image scaled from ${r.fromWidth}x${r.fromHeight} to ${r.toWidth}x${r.toHeight}: multiply its coordinates by ${(r.fromWidth / r.toWidth).toFixed(2)} for the original.]`
    : "";
  return [
    { type: "text", text: `Read image file [${fitted.mimeType}]${note}` },
    { type: "image", data: fitted.data, mimeType: fitted.mimeType },
  ];
}

/** What a codemode script's `tools.read()` resolves to (pi 1.6's): the text, or the image with its note. */
const readOutputSchema = Type.Union([
  Type.String(),
  Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String(), note: Type.String() }),
]);

function scriptOutput(content: readonly (TextContent | ImageContent)[]): string | { type: "image"; data: string; mimeType: string; note: string } {
  const text = content.find((block) => block.type === "text")?.text ?? "";
  const image = content.find((block) => block.type === "image");
  return image ? { type: "image", data: image.data, mimeType: image.mimeType, note: text } : text;
}

export function createReadToolDefinition(cwd: string, options: ReadToolOptions = {}): ToolDefinition<typeof readSchema, ReadToolDetails | undefined> {
  const ops = options.operations ?? localOperations;
  return {
    name: "read",
    label: "read",
    description: `Read a file. Text files are returned as-is, cut at ${DEFAULT_MAX_LINES} lines or ${formatSize(DEFAULT_MAX_BYTES)} (whichever comes first); page through large files with offset/limit until you have what you need. Images (png, jpeg, gif, webp) are returned as image attachments.`,
    promptSnippet: "Read file contents",
    // Strict-schema arguments where the provider offers them, as pi 1.6 declares its read, bash, edit and write.
    constrainedSampling: { type: "json_schema", strict: "prefer" },
    promptGuidelines: ["Use read to look at files rather than cat or sed."],
    parameters: readSchema,
    outputSchema: readOutputSchema,
    async execute(_toolCallId, params, signal) {
      const result = await readFile(params, signal);
      return { ...result, structuredContent: scriptOutput(result.content) };
    },
  };

  async function readFile(params: Static<typeof readSchema>, signal: AbortSignal | undefined): Promise<AgentToolResult<ReadToolDetails | undefined>> {
    throwIfAborted(signal);
    const absolutePath = resolveReadPath(params.path, cwd);
    return abortable(signal, async () => {
      try {
        await ops.access(absolutePath);
        const mimeType = ops.detectImageMimeType ? await ops.detectImageMimeType(absolutePath) : undefined;
        const buffer = await ops.readFile(absolutePath);
        throwIfAborted(signal);
        if (mimeType) return { content: await imageContent(buffer, mimeType, options.autoResizeImages ?? true), details: undefined };
        const { text, details } = formatText(buffer.toString("utf8"), params.path, params.offset, params.limit);
        return { content: [{ type: "text", text }], details };
      } catch (error) {
        throw describeFsError(error, absolutePath, "read");
      }
    });
  }
}

export function createReadTool(cwd: string, options?: ReadToolOptions): AgentTool<typeof readSchema, ReadToolDetails | undefined> {
  return toAgentTool(createReadToolDefinition(cwd, options));
}
