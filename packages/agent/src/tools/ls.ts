import { existsSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type Static, Type } from "typebox";
import { resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, type TruncationResult, truncateHead } from "./truncate.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { throwIfAborted, toAgentTool } from "./util.js";

const DEFAULT_LIMIT = 500;

const lsSchema = Type.Object({
  path: Type.Optional(Type.String({ description: "Directory to list (defaults to the working directory)" })),
  limit: Type.Optional(Type.Number({ description: `Maximum number of entries (default ${DEFAULT_LIMIT})` })),
});

export type LsToolInput = Static<typeof lsSchema>;

export interface LsToolDetails {
  truncation?: TruncationResult;
  entryLimitReached?: number;
}

/** Pluggable directory access, so extensions can list remote directories. */
export interface LsOperations {
  exists: (absolutePath: string) => Promise<boolean> | boolean;
  /** Throws if the path does not exist. */
  stat: (absolutePath: string) => Promise<{ isDirectory: () => boolean }> | { isDirectory: () => boolean };
  readdir: (absolutePath: string) => Promise<string[]> | string[];
}

export interface LsToolOptions {
  operations?: LsOperations;
}

const localOperations: LsOperations = {
  exists: (p) => existsSync(p),
  stat: (p) => statSync(p),
  readdir: (p) => readdir(p),
};

/** Join output lines and append the bracketed notices the model uses to page further. */
export function withNotices(lines: string[], notices: string[]): { text: string; truncation?: TruncationResult } {
  // Only the byte limit applies: the entry/result limits already bound the line count.
  const truncation = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
  const all = [...notices];
  if (truncation.truncated) all.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
  const text = all.length > 0 ? `${truncation.content}\n\n[${all.join(". ")}]` : truncation.content;
  return truncation.truncated ? { text, truncation } : { text };
}

export function createLsToolDefinition(cwd: string, options: LsToolOptions = {}): ToolDefinition<typeof lsSchema, LsToolDetails | undefined> {
  const ops = options.operations ?? localOperations;
  return {
    name: "ls",
    label: "ls",
    description: `List a directory's entries in alphabetical order, directories marked with a trailing '/'. Hidden files are included. At most ${DEFAULT_LIMIT} entries or ${formatSize(DEFAULT_MAX_BYTES)} are returned.`,
    promptSnippet: "List directory contents",
    parameters: lsSchema,
    async execute(_toolCallId, params, signal) {
      throwIfAborted(signal);
      const dir = resolveToCwd(params.path || ".", cwd);
      const limit = Math.max(1, Math.floor(params.limit ?? DEFAULT_LIMIT));
      if (!(await ops.exists(dir))) throw new Error(`Path not found: ${dir}`);
      if (!(await ops.stat(dir)).isDirectory()) throw new Error(`Not a directory: ${dir}`);

      const names = [...(await ops.readdir(dir))];
      names.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
      const lines: string[] = [];
      let entryLimitReached: number | undefined;
      for (const name of names) {
        if (lines.length >= limit) {
          entryLimitReached = limit;
          break;
        }
        throwIfAborted(signal);
        try {
          const isDir = (await ops.stat(join(dir, name))).isDirectory();
          lines.push(isDir ? `${name}/` : name);
        } catch {
          // Dangling symlink or entry removed meanwhile: not listable, skip it.
        }
      }
      if (lines.length === 0) return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };

      const notices = entryLimitReached ? [`${limit} entries limit reached. Use limit=${limit * 2} for more`] : [];
      const { text, truncation } = withNotices(lines, notices);
      const details: LsToolDetails = {};
      if (entryLimitReached) details.entryLimitReached = entryLimitReached;
      if (truncation) details.truncation = truncation;
      return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
    },
  };
}

export function createLsTool(cwd: string, options?: LsToolOptions): AgentTool<typeof lsSchema, LsToolDetails | undefined> {
  return toAgentTool(createLsToolDefinition(cwd, options));
}
