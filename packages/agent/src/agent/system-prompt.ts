/**
 * The system prompt: who the agent is, its tools, where it works, and the project's own
 * instructions (AGENTS.md / CLAUDE.md from the working folder up), unless --system-prompt replaces it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface SystemPromptOptions {
  cwd: string;
  tools: { name: string; description: string; promptSnippet?: string }[];
  /** Replaces the built-in text (the context files are still appended, as in pi). */
  custom?: string | undefined;
  /** The skills the model may load (resources/skills.ts formats it; empty for none). */
  skillsSection?: string;
  now?: Date;
}

const CONTEXT_FILES = ["AGENTS.md", "CLAUDE.md"];

/** Project instruction files, outermost folder first, one per folder. */
export function contextFiles(cwd: string): { path: string; content: string }[] {
  const found: { path: string; content: string }[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    const name = CONTEXT_FILES.find((f) => existsSync(join(dir, f)));
    if (name) {
      try {
        found.unshift({ path: join(dir, name), content: readFileSync(join(dir, name), "utf8") });
      } catch {
        // Unreadable instructions are skipped rather than failing every prompt.
      }
    }
    if (dirname(dir) === dir) return found;
  }
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
  const parts = [base, `Current date: ${(options.now ?? new Date()).toISOString().slice(0, 10)}\nCurrent working directory: ${options.cwd}`];
  for (const file of contextFiles(options.cwd)) parts.push(`# Project instructions (${file.path})\n\n${file.content.trim()}`);
  // The section brings its own leading blank line, as pi's does.
  return parts.join("\n\n") + (options.skillsSection ?? "");
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}
