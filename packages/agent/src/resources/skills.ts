/**
 * Skills (the Agent Skills format pi reads): a folder with a SKILL.md, or a markdown file with a
 * `description` in its frontmatter. Only names, descriptions and paths are kept; the model reads
 * the file itself when a task matches (see formatSkillsForPrompt), or `/skill:name` inlines it.
 */
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { parseFrontmatter, stripFrontmatter } from "../extensions/compat/frontmatter.js";
import type { SourceInfo } from "../extensions/types.js";
import { errorMessage } from "../error-text.js";
import { listFolder } from "./fs-entries.js";
import { IgnoreRules } from "./ignore-files.js";

export interface Skill {
  name: string;
  description: string;
  filePath: string;
  /** The folder the skill's relative references are resolved against. */
  baseDir: string;
  sourceInfo: SourceInfo;
  /** Hidden from the system prompt; only `/skill:name` uses it. */
  disableModelInvocation: boolean;
}

export interface ResourceWarning {
  path: string;
  message: string;
}

/**
 * The skill files under `dir`: a folder's own SKILL.md makes it one skill (nothing below it
 * counts); otherwise, recursively, its sub-folders' skills, and loose markdown files: in pi's own
 * skill folders (`"pi"`) those directly in `dir`, in `.agents/skills` folders (`"agents"`, the
 * newest pi) those below it. What the ignore files of the folders walked list is skipped
 * (ignore-files.ts).
 */
export function findSkillFiles(dir: string, mode: "pi" | "agents", rules = new IgnoreRules(dir)): string[] {
  const entries = listFolder(dir);
  rules.addFolder(dir, entries);
  const own = entries.find((e) => e.name === "SKILL.md" && e.isFile && !rules.ignores(e.path, false));
  if (own) return [own.path];
  const atRoot = dir === rules.root;
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || rules.ignores(entry.path, entry.isDirectory)) continue;
    if (entry.isDirectory) found.push(...findSkillFiles(entry.path, mode, rules));
    else if (entry.isFile && entry.name.endsWith(".md") && (mode === "pi" ? atRoot : !atRoot)) found.push(entry.path);
  }
  return found;
}

/** One skill file; null (with a warning for a SKILL.md) when it is not a usable skill. */
export function readSkill(filePath: string, sourceInfo: SourceInfo, warnings: ResourceWarning[]): Skill | null {
  const declared = basename(filePath) === "SKILL.md";
  let frontmatter: Record<string, unknown>;
  try {
    frontmatter = parseFrontmatter(readFileSync(filePath, "utf8")).frontmatter;
  } catch (error) {
    if (declared) warnings.push({ path: filePath, message: errorMessage(error) });
    return null;
  }
  const description = frontmatter["description"];
  if (typeof description !== "string" || description.trim() === "") {
    if (declared) warnings.push({ path: filePath, message: "description is required" });
    return null;
  }
  const baseDir = dirname(filePath);
  // pi falls back to the folder's name, also for a loose markdown file (whose folder is `skills`).
  const name = typeof frontmatter["name"] === "string" && frontmatter["name"] ? frontmatter["name"] : basename(baseDir);
  for (const problem of nameProblems(name)) warnings.push({ path: filePath, message: problem });
  if (description.length > 1024) warnings.push({ path: filePath, message: `description exceeds 1024 characters (${description.length})` });
  return { name, description, filePath, baseDir, sourceInfo, disableModelInvocation: frontmatter["disable-model-invocation"] === true };
}

/** The Agent Skills naming rules: pi warns about a breach and loads the skill anyway. */
function nameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 64) problems.push(`name exceeds 64 characters (${name.length})`);
  if (!/^[a-z0-9-]+$/.test(name)) problems.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)");
  if (name.startsWith("-") || name.endsWith("-")) problems.push("name must not start or end with a hyphen");
  if (name.includes("--")) problems.push("name must not contain consecutive hyphens");
  return problems;
}

/** The tool the model loads a skill's file with; "indirect" when that tool is active but not declared. */
export type SkillReader = "read" | "bash" | "indirect";

/**
 * The system prompt's skills section, in the XML form of the Agent Skills standard, as pi writes
 * it: empty when no skill may be offered to the model.
 */
export function formatSkillsForPrompt(skills: readonly Skill[], reader: SkillReader = "read"): string {
  const offered = skills.filter((s) => !s.disableModelInvocation);
  if (offered.length === 0) return "";
  const lines = [
    "\n\nThe following skills provide specialized instructions for specific tasks.",
    reader === "indirect"
      ? "Load a skill's file when the task matches its description."
      : `Use the ${reader} tool to load a skill's file when the task matches its description.`,
    "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
    "",
    "<available_skills>",
  ];
  for (const skill of offered) {
    lines.push(
      "  <skill>",
      `    <name>${xml(skill.name)}</name>`,
      `    <description>${xml(skill.description)}</description>`,
      `    <location>${xml(skill.filePath)}</location>`,
      "  </skill>",
    );
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

/**
 * `/skill:name args` → the skill's body in a `<skill>` block, the arguments after it; the text
 * unchanged when it names no skill. A file that cannot be read is reported and the text kept.
 */
export function expandSkillCommand(text: string, skills: readonly Skill[], onError: (skill: Skill, error: unknown) => void): string {
  if (!text.startsWith("/skill:")) return text;
  const space = text.indexOf(" ");
  const name = space === -1 ? text.slice(7) : text.slice(7, space);
  const args = space === -1 ? "" : text.slice(space + 1).trim();
  const skill = skills.find((s) => s.name === name);
  if (!skill) return text;
  try {
    const body = stripFrontmatter(readFileSync(skill.filePath, "utf8")).trim();
    const block = `<skill name="${skill.name}" location="${skill.filePath}">\nReferences are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
    return args ? `${block}\n\n${args}` : block;
  } catch (error) {
    onError(skill, error);
    return text;
  }
}

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}
