/**
 * The system prompt: who the agent is, its tools, where it works, and the project's own
 * instructions, from pi's sources: SYSTEM.md or --system-prompt replace the built-in text,
 * APPEND_SYSTEM.md or --append-system-prompt add to it, then the context files (AGENTS.override.md /
 * AGENTS.md / CLAUDE.md, global then from the outermost folder in).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { packageRoot } from "../package-root.js";

/** A tool as the prompt lists it: only tools with a snippet are listed; their guidelines join the rules. */
export interface PromptTool {
  name: string;
  promptSnippet?: string | undefined;
  promptGuidelines?: readonly string[] | undefined;
}

export interface SystemPromptOptions {
  cwd: string;
  /** The tools declared to the model, in order. */
  tools: readonly PromptTool[];
  /** Replaces the built-in text (the context files are still appended, as in pi). */
  custom?: string | undefined;
  /** Added after the base text, joined into one section. */
  append?: readonly string[] | undefined;
  /** The context files; default: contextFiles(cwd) with no global agent directory. */
  contextFiles?: readonly { path: string; content: string }[] | undefined;
  /** The skills the model may load (resources/skills.ts formats it; empty for none). */
  skillsSection?: string | undefined;
  /** Extra rules (before_agent_start handlers' `promptGuidelines`). */
  guidelines?: readonly string[] | undefined;
  /** Sections of the extensions' own, after the built-in ones (before_agent_start handlers' `sections`). */
  sections?: Readonly<Record<string, string>> | undefined;
}

/** The prompt as named sections, each replaceable on its own (see buildSystemPromptSections). */
export type PromptSections = Record<string, string>;

/**
 * pi 1.6's names, in its order of preference: the first file present in a folder counts, so an
 * `AGENTS.override.md` stands in for that folder's AGENTS.md or CLAUDE.md (and only that folder's).
 */
const CONTEXT_FILES = ["AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

function contextFileIn(dir: string): { path: string; content: string } | undefined {
  for (const name of CONTEXT_FILES) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    try {
      // A folder of that name is passed over, as pi does.
      if (!statSync(path).isFile()) continue;
      return { path, content: readFileSync(path, "utf8") };
    } catch {
      // Unreadable instructions are skipped rather than failing every prompt.
    }
  }
  return undefined;
}

/** The agent directory's file first, then one per folder from the outermost ancestor of cwd in. */
export function contextFiles(cwd: string, agentDir?: string): { path: string; content: string }[] {
  const found: { path: string; content: string }[] = [];
  const seen = new Set<string>();
  const global = agentDir !== undefined ? contextFileIn(agentDir) : undefined;
  if (global) {
    found.push(global);
    seen.add(global.path);
  }
  const ancestors: { path: string; content: string }[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = contextFileIn(dir);
    if (file && !seen.has(file.path)) {
      ancestors.unshift(file);
      seen.add(file.path);
    }
    if (dirname(dir) === dir) break;
  }
  return [...found, ...ancestors];
}

/**
 * A prompt given as text or as the path of a file holding it (pi's rule for --system-prompt and
 * --append-system-prompt: an existing file is read, anything else is the text itself).
 */
export function promptText(input: string, cwd: string): string {
  const path = resolve(cwd, input);
  if (input.length < 4096 && !input.includes("\n") && existsSync(path)) {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return input;
    }
  }
  return input;
}

/** A section name an extension may use: pi 1.6's rule (lower case, digits, `-` and `_`; not `preamble`). */
const SECTION_NAME = /^[a-z][a-z0-9_-]*$/;

/**
 * The prompt as pi 1.6 structures it, so that a change is recorded as a patch of the sections it
 * touches: `preamble` (the built-in text or SYSTEM.md / --system-prompt), then, without a custom
 * prompt, `tools`, `rules` and `docs`; then `addendum` (APPEND_SYSTEM.md / --append-system-prompt),
 * `project_context` (AGENTS.md …), `skills`, `cwd` and the extensions' own sections. Every section
 * but the preamble is wrapped in a tag of its name. The wording is parley's own.
 */
export function buildSystemPromptSections(options: SystemPromptOptions): PromptSections {
  const parts: [string, string][] = [];
  if (options.custom !== undefined && options.custom.length > 0) parts.push(["preamble", options.custom]);
  else {
    parts.push([
      "preamble",
      "You are an expert coding assistant working in the user's project through tools. Read files before changing them, make focused edits, run commands to check your work, and say briefly what you did.",
    ]);
    const listed = options.tools.filter((t) => t.promptSnippet);
    const tools = listed.length > 0 ? listed.map((t) => `- ${t.name}: ${t.promptSnippet}`).join("\n") : "(none)";
    parts.push(["tools", `${tools}\n\nOther tools may be offered to you as well.`]);
    parts.push(["rules", rules(options.tools, options.guidelines ?? [])]);
    parts.push([
      "docs",
      `parley's documentation, to read only when the user asks about the agent itself (its settings, extensions, skills, RPC protocol):\n- ${join(packageRoot, "README.md")}`,
    ]);
  }
  const append = (options.append ?? []).join("\n\n");
  if (append.length > 0) parts.push(["addendum", append]);
  const files = options.contextFiles ?? contextFiles(options.cwd);
  if (files.length > 0) {
    parts.push([
      "project_context",
      `Instructions for this project:\n\n${files.map((f) => `<file path="${f.path}">\n${f.content.trim()}\n</file>`).join("\n\n")}`,
    ]);
  }
  const skills = options.skillsSection?.trim() ?? "";
  if (skills.length > 0) parts.push(["skills", skills]);
  parts.push(["cwd", options.cwd.replace(/\\/g, "/")]);
  for (const [name, content] of Object.entries(options.sections ?? {})) {
    if (!SECTION_NAME.test(name) || name === "preamble") throw new Error(`Invalid system prompt section name: ${name}`);
    if (content) parts.push([name, content]);
  }
  const sections: PromptSections = {};
  for (const [name, content] of parts) sections[name] = name === "preamble" ? content : `<${name}>\n${content}\n</${name}>`;
  return sections;
}

/** The rules: the file-listing hint when only the shell can list files, each declared tool's guidelines, the extra ones, then parley's own; each once. */
function rules(tools: readonly PromptTool[], extra: readonly string[]): string {
  const names = new Set(tools.map((t) => t.name));
  const found: string[] = [];
  const add = (rule: string): void => {
    const trimmed = rule.trim();
    if (trimmed.length > 0 && !found.includes(trimmed)) found.push(trimmed);
  };
  if (names.has("bash") && !names.has("grep") && !names.has("find") && !names.has("ls")) add("List, search and find files with bash (ls, rg, find).");
  for (const tool of tools) for (const rule of tool.promptGuidelines ?? []) add(rule);
  for (const rule of extra) add(rule);
  add("Keep answers short; ask when a request is ambiguous and do not invent file contents.");
  add("Name the files you work on by their paths.");
  return found.map((rule) => `- ${rule}`).join("\n");
}

/** The prompt's text: the sections in order, a blank line between (pi-ai's rendering of a system message). */
export function renderSystemPrompt(sections: Readonly<PromptSections>): string {
  return Object.values(sections)
    .filter((text) => text.length > 0)
    .join("\n\n");
}

export function buildSystemPrompt(options: SystemPromptOptions): string {
  return renderSystemPrompt(buildSystemPromptSections(options));
}
