/**
 * Prompt templates: markdown files whose name is a command. `/name args` becomes the file's body
 * with the arguments substituted, as pi does it ($1…, $@, $ARGUMENTS, ${@:N}, ${@:N:L}).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseFrontmatter } from "../extensions/compat/frontmatter.js";
import type { SourceInfo } from "../extensions/types.js";
import { listFolder } from "./fs-entries.js";
import { IgnoreRules } from "./ignore-files.js";

export interface PromptTemplate {
  name: string;
  description: string;
  argumentHint?: string;
  content: string;
  filePath: string;
  sourceInfo: SourceInfo;
}

/** The `.md` files directly in `dir` (no recursion; hidden files and those its ignore files list skipped). */
export function findTemplateFiles(dir: string): string[] {
  const entries = listFolder(dir);
  const rules = new IgnoreRules(dir);
  rules.addFolder(dir, entries);
  return entries.filter((e) => e.isFile && e.name.endsWith(".md") && !e.name.startsWith(".") && !rules.ignores(e.path, false)).map((e) => e.path);
}

/** One template; null when the file cannot be read. */
export function readTemplate(filePath: string, sourceInfo: SourceInfo): PromptTemplate | null {
  let parsed: { frontmatter: Record<string, unknown>; body: string };
  try {
    parsed = parseFrontmatter(readFileSync(filePath, "utf8"));
  } catch {
    return null;
  }
  const { frontmatter, body } = parsed;
  let description = typeof frontmatter["description"] === "string" ? frontmatter["description"] : "";
  if (!description) {
    // No description: the first non-blank line, cut at 60 characters as pi cuts it.
    const first = body.split("\n").find((line) => line.trim()) ?? "";
    description = first.length > 60 ? `${first.slice(0, 60)}...` : first;
  }
  const hint = frontmatter["argument-hint"];
  return {
    name: basename(filePath).replace(/\.md$/, ""),
    description,
    ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}),
    content: body,
    filePath,
    sourceInfo,
  };
}

/** Splits arguments at whitespace; single or double quotes group words (and are dropped). */
export function parseCommandArgs(text: string): string[] {
  const args: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (/\s/.test(ch)) {
      if (current) args.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  if (current) args.push(current);
  return args;
}

/**
 * Fills the placeholders of `content`. Positional ones go first, so the text of an argument is
 * never substituted again by the later passes that insert all of them.
 */
export function substituteArgs(content: string, args: readonly string[]): string {
  const all = args.join(" ");
  return content
    .replace(/\$(\d+)/g, (_m, n: string) => args[Number(n) - 1] ?? "")
    .replace(/\$\{@:(\d+)(?::(\d+))?\}/g, (_m, from: string, count: string | undefined) => {
      const start = Math.max(0, Number(from) - 1);
      return (count === undefined ? args.slice(start) : args.slice(start, start + Number(count))).join(" ");
    })
    .replace(/\$ARGUMENTS/g, () => all)
    .replace(/\$@/g, () => all);
}

/** `/name args` → the template's text; anything else unchanged. */
export function expandPromptTemplate(text: string, templates: readonly PromptTemplate[]): string {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!match) return text;
  const template = templates.find((t) => t.name === match[1]);
  return template ? substituteArgs(template.content, parseCommandArgs(match[2] ?? "")) : text;
}
