import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { type Static, Type } from "typebox";
import { findGitRoot, walk } from "./fs-walk.js";
import { createPathMatcher } from "./glob.js";
import { resolveToCwd } from "./path-utils.js";
import { DEFAULT_MAX_BYTES, formatSize, GREP_MAX_LINE_LENGTH, type TruncationResult, truncateHead, truncateLine } from "./truncate.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { throwIfAborted, toAgentTool } from "./util.js";
import { errorMessage } from "../error-text.js";

const DEFAULT_LIMIT = 100;
// Files with a NUL byte this early are treated as binary and skipped, like ripgrep does.
const BINARY_SNIFF_CHARS = 8000;

const grepSchema = Type.Object({
  pattern: Type.String({ description: "Regular expression (or literal text with literal: true) to search for" }),
  path: Type.Optional(Type.String({ description: "Directory or file to search (defaults to the working directory)" })),
  glob: Type.Optional(Type.String({ description: "Only search files matching this glob, e.g. '*.ts' or '**/*.spec.ts'" })),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Match case-insensitively (default false)" })),
  literal: Type.Optional(Type.Boolean({ description: "Treat pattern as plain text, not a regex (default false)" })),
  context: Type.Optional(Type.Number({ description: "Lines of context before and after each match (default 0)" })),
  limit: Type.Optional(Type.Number({ description: `Maximum number of matches (default ${DEFAULT_LIMIT})` })),
});

export type GrepToolInput = Static<typeof grepSchema>;

export interface GrepToolDetails {
  truncation?: TruncationResult;
  matchLimitReached?: number;
  linesTruncated?: boolean;
}

/** Pluggable file access for grep (directory traversal itself is always local). */
export interface GrepOperations {
  /** Throws if the path does not exist. */
  isDirectory: (absolutePath: string) => Promise<boolean> | boolean;
  readFile: (absolutePath: string) => Promise<string> | string;
}

export interface GrepToolOptions {
  operations?: GrepOperations;
}

const localOperations: GrepOperations = {
  isDirectory: (p) => statSync(p).isDirectory(),
  readFile: (p) => readFile(p, "utf8"),
};

function buildRegex(pattern: string, literal: boolean, ignoreCase: boolean): RegExp {
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : pattern;
  const flags = ignoreCase ? "i" : "";
  try {
    // Unicode mode first (closest to ripgrep); some valid legacy patterns need it off.
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      const reason = errorMessage(error);
      throw new Error(`Invalid regex pattern ${JSON.stringify(pattern)}: ${reason}. Use literal: true to search for plain text.`);
    }
  }
}

export function createGrepToolDefinition(cwd: string, options: GrepToolOptions = {}): ToolDefinition<typeof grepSchema, GrepToolDetails | undefined> {
  const ops = options.operations ?? localOperations;
  return {
    name: "grep",
    label: "grep",
    description: `Search file contents for a regular expression. Prints matching lines as path:line: text (context lines as path-line- text). Hidden files are searched; inside a git repository .gitignore is respected. At most ${DEFAULT_LIMIT} matches or ${formatSize(DEFAULT_MAX_BYTES)} are returned, and lines are cut at ${GREP_MAX_LINE_LENGTH} characters.`,
    promptSnippet: "Search file contents for patterns (respects .gitignore)",
    parameters: grepSchema,
    async execute(_toolCallId, params, signal) {
      throwIfAborted(signal);
      const searchPath = resolveToCwd(params.path || ".", cwd);
      let isDirectory: boolean;
      try {
        isDirectory = await ops.isDirectory(searchPath);
      } catch {
        throw new Error(`Path not found: ${searchPath}`);
      }
      const regex = buildRegex(params.pattern, params.literal ?? false, params.ignoreCase ?? false);
      const contextLines = Math.max(0, Math.floor(params.context ?? 0));
      const limit = Math.max(1, Math.floor(params.limit ?? DEFAULT_LIMIT));
      const globMatches = params.glob ? createPathMatcher(params.glob) : undefined;

      const output: string[] = [];
      let matchCount = 0;
      let linesTruncated = false;
      const clip = (text: string) => {
        const { text: clipped, wasTruncated } = truncateLine(text.endsWith("\r") ? text.slice(0, -1) : text);
        if (wasTruncated) linesTruncated = true;
        return clipped;
      };

      // The lines a search shows, as pi 1.6 takes them from ripgrep's --context stream: each line
      // once (overlapping windows merge, a match inside another's context shows as a match). Past
      // the limit-th match its trailing context is still shown (a match there as context), and only
      // one more match anywhere proves that the limit cut results off.
      let limitHit = false;
      let limitFile: string | undefined;
      let trailingEnd = 0;
      let matchLimitReached = false;
      const push = (display: string, lineNumber: number, text: string, isMatch: boolean): void => {
        const sepChar = isMatch ? ":" : "-";
        output.push(`${display}${sepChar}${lineNumber}${sepChar} ${clip(text)}`);
      };
      /** One line of the stream; true when the search is over. */
      const take = (absPath: string, display: string, lineNumber: number, text: string, isMatch: boolean): boolean => {
        if (!limitHit) {
          push(display, lineNumber, text, isMatch);
          if (!isMatch) return false;
          matchCount++;
          if (matchCount >= limit) {
            limitHit = true;
            limitFile = absPath;
            trailingEnd = lineNumber + contextLines;
          }
          return false;
        }
        const inWindow = absPath === limitFile && lineNumber <= trailingEnd;
        if (inWindow) push(display, lineNumber, text, false);
        if (isMatch) matchLimitReached = true;
        return matchLimitReached && !(inWindow && lineNumber < trailingEnd);
      };

      const searchFile = async (absPath: string, display: string): Promise<boolean> => {
        let content: string;
        try {
          content = await ops.readFile(absPath);
        } catch {
          return false; // unreadable file: skip
        }
        if (content.slice(0, BINARY_SNIFF_CHARS).includes("\0")) return false;
        const lines = content.split("\n");
        // The empty string after a final newline is no line (neither a match nor context).
        const count = content.endsWith("\n") ? lines.length - 1 : lines.length;
        let shown = -1; // the last line index taken from this file
        let afterEnd = -1; // the last index of the current match's trailing context
        for (let i = 0; i < count; i++) {
          if (regex.test(lines[i] as string)) {
            for (let j = Math.max(shown + 1, i - contextLines); j < i; j++) if (take(absPath, display, j + 1, lines[j] as string, false)) return true;
            shown = i;
            afterEnd = i + contextLines;
            if (take(absPath, display, i + 1, lines[i] as string, true)) return true;
          } else if (i <= afterEnd) {
            shown = i;
            if (take(absPath, display, i + 1, lines[i] as string, false)) return true;
          }
        }
        return false;
      };

      if (!isDirectory) {
        if (!globMatches || globMatches(basename(searchPath))) await searchFile(searchPath, basename(searchPath));
      } else {
        // Like ripgrep: .gitignore rules only apply inside a git repository.
        const walker = walk(searchPath, {
          gitignore: findGitRoot(searchPath) !== undefined,
          skipDirs: new Set([".git"]),
          signal,
        });
        for await (const entry of walker) {
          if (entry.isDirectory || entry.isSymbolicLink) continue;
          if (globMatches && !globMatches(entry.rel)) continue;
          if (await searchFile(entry.path, entry.rel)) break;
        }
      }
      throwIfAborted(signal);

      if (matchCount === 0) return { content: [{ type: "text", text: "No matches found" }], details: undefined };

      // Only the byte limit applies (the match limit bounds the rows); the notices in pi 1.6's order.
      const truncation = truncateHead(output.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      const notices: string[] = [];
      if (matchLimitReached) notices.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`);
      if (truncation.truncated) notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
      if (linesTruncated) notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
      const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
      const details: GrepToolDetails = {};
      if (matchLimitReached) details.matchLimitReached = limit;
      if (truncation.truncated) details.truncation = truncation;
      if (linesTruncated) details.linesTruncated = true;
      return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
    },
  };
}

export function createGrepTool(cwd: string, options?: GrepToolOptions): AgentTool<typeof grepSchema, GrepToolDetails | undefined> {
  return toAgentTool(createGrepToolDefinition(cwd, options));
}
