import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { type Static, Type } from "typebox";
import { walk } from "./fs-walk.js";
import { createPathMatcher } from "./glob.js";
import { withNotices } from "./ls.js";
import { resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, type TruncationResult } from "./truncate.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { throwIfAborted, toAgentTool } from "./util.js";

const DEFAULT_LIMIT = 1000;
/** Always skipped, whatever .gitignore says. */
const DEFAULT_IGNORE = ["**/node_modules/**", "**/.git/**"];

const findSchema = Type.Object({
  pattern: Type.String({
    description: "Glob to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'",
  }),
  path: Type.Optional(Type.String({ description: "Directory to search (defaults to the working directory)" })),
  limit: Type.Optional(Type.Number({ description: `Maximum number of results (default ${DEFAULT_LIMIT})` })),
});

export type FindToolInput = Static<typeof findSchema>;

export interface FindToolDetails {
  truncation?: TruncationResult;
  resultLimitReached?: number;
}

/** Pluggable file search, so extensions can search remote file systems. */
export interface FindOperations {
  exists: (absolutePath: string) => Promise<boolean> | boolean;
  /** Paths (relative to `cwd` or absolute) matching `pattern`. */
  glob: (pattern: string, cwd: string, options: { ignore: string[]; limit: number }) => Promise<string[]> | string[];
}

export interface FindToolOptions {
  operations?: FindOperations;
}

/**
 * Local search: a sorted walk that honours .gitignore (also outside git
 * repositories), includes hidden files, and lists directories with a
 * trailing "/". A pattern without "/" matches names at any depth; with "/" it
 * matches the path below the search directory.
 */
export function createLocalFindOperations(signal?: AbortSignal): FindOperations {
  return {
    exists: (p) => existsSync(p),
    async glob(pattern, cwd, { limit }) {
      const matches = createPathMatcher(pattern);
      const results: string[] = [];
      const walker = walk(cwd, { gitignore: true, skipDirs: new Set(["node_modules", ".git"]), signal });
      for await (const entry of walker) {
        if (!matches(entry.rel)) continue;
        results.push(entry.isDirectory ? `${entry.rel}/` : entry.rel);
        if (results.length >= limit) break;
      }
      return results;
    },
  };
}

export function createFindToolDefinition(cwd: string, options: FindToolOptions = {}): ToolDefinition<typeof findSchema, FindToolDetails | undefined> {
  return {
    name: "find",
    label: "find",
    description: `Find files by glob pattern. Returns paths relative to the search directory; .gitignore is respected. At most ${DEFAULT_LIMIT} results or ${formatSize(DEFAULT_MAX_BYTES)} are returned.`,
    promptSnippet: "Find files by glob pattern (respects .gitignore)",
    parameters: findSchema,
    async execute(_toolCallId, params, signal) {
      throwIfAborted(signal);
      const ops = options.operations ?? createLocalFindOperations(signal);
      const searchPath = resolveToCwd(params.path || ".", cwd);
      const limit = Math.max(1, Math.floor(params.limit ?? DEFAULT_LIMIT));
      if (!(await ops.exists(searchPath))) throw new Error(`Path not found: ${searchPath}`);

      // One result past the limit tells "exactly `limit` matches" from "more" (as pi 1.6 asks its glob).
      const found = await ops.glob(params.pattern, searchPath, { ignore: [...DEFAULT_IGNORE], limit: limit + 1 });
      throwIfAborted(signal);
      if (found.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };

      const lines = found.slice(0, limit).map((p) => {
        const trailingSlash = p.endsWith("/") || p.endsWith(sep) ? "/" : "";
        const rel = isAbsolute(p) ? relative(searchPath, p) : relative(searchPath, resolve(searchPath, p));
        return rel.split(sep).join("/") + (trailingSlash && rel !== "" ? trailingSlash : "");
      });
      const resultLimitReached = found.length > limit ? limit : undefined;
      // pi 1.6 words the notice of its own search (fd) with a hint, a plugged-in glob's without.
      const limitNotice = options.operations
        ? `${limit} results limit reached`
        : `${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`;
      const notices = resultLimitReached ? [limitNotice] : [];
      const { text, truncation } = withNotices(lines, notices);
      const details: FindToolDetails = {};
      if (resultLimitReached) details.resultLimitReached = resultLimitReached;
      if (truncation) details.truncation = truncation;
      return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
    },
  };
}

export function createFindTool(cwd: string, options?: FindToolOptions): AgentTool<typeof findSchema, FindToolDetails | undefined> {
  return toAgentTool(createFindToolDefinition(cwd, options));
}
