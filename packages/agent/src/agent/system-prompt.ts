/**
 * The system prompt: who the agent is, its tools, where it works, and the project's own
 * instructions, from pi's sources: SYSTEM.md or --system-prompt replace the built-in text,
 * APPEND_SYSTEM.md or --append-system-prompt add to it, then the context files (AGENTS.override.md /
 * AGENTS.md / CLAUDE.md, global then from the outermost folder in).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export interface SystemPromptOptions {
  cwd: string;
  tools: { name: string; description: string; promptSnippet?: string }[];
  /** Replaces the built-in text (the context files are still appended, as in pi). */
  custom?: string | undefined;
  /** Added after the base text, each in its own paragraph. */
  append?: string[] | undefined;
  /** The context files; default: contextFiles(cwd) with no global agent directory. */
  contextFiles?: { path: string; content: string }[] | undefined;
  /** The skills the model may load (resources/skills.ts formats it; empty for none). */
  skillsSection?: string;
  now?: Date;
}

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

export function buildSystemPrompt(options: SystemPromptOptions): string {
  const tools = options.tools.map((t) => `- ${t.name}: ${t.promptSnippet ?? firstLine(t.description)}`).join("\n");
  const base =
    options.custom ??
    `You are an expert coding assistant working in the user's project through tools. Read files before changing them, make focused edits, run commands to check your work, and say briefly what you did.

Available tools:
${tools || "(none)"}

Guidelines:
- Prefer edit for changes to existing files and write for new files.
- Use bash for builds, tests, git and searches; keep output small.
- Ask when a request is ambiguous; do not invent file contents.`;
  const parts = [base, ...(options.append ?? [])];
  const files = options.contextFiles ?? contextFiles(options.cwd);
  if (files.length > 0) {
    parts.push(`# Project Context\n\nProject-specific instructions and guidelines:\n\n${files.map((f) => `## ${f.path}\n\n${f.content.trim()}`).join("\n\n")}`);
  }
  // As in pi: the skills after the context (the section brings its own leading blank line), the date and cwd last.
  const dated = `Current date: ${(options.now ?? new Date()).toISOString().slice(0, 10)}\nCurrent working directory: ${options.cwd}`;
  return `${parts.join("\n\n")}${options.skillsSection ?? ""}\n\n${dated}`;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}
