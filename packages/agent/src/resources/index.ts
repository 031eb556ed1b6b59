/**
 * Skills and prompt templates, found where pi finds them: the project's `.pi/skills` and
 * `.pi/prompts`, `.agents/skills` in the working folder and its parents (up to the git root),
 * the agent folder's `skills/` and `prompts/`, `~/.agents/skills`, then the paths given with
 * --skill / --prompt-template (loaded even with --no-skills / --no-prompt-templates). The first
 * of two with the same name wins; the other is reported.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { SourceInfo } from "../extensions/types.js";
import { isDirectory, isFile } from "./fs-entries.js";
import { userPath } from "./paths.js";
import { findTemplateFiles, readTemplate, type PromptTemplate } from "./prompt-templates.js";
import { findSkillFiles, readSkill, type ResourceWarning, type Skill } from "./skills.js";
import { discoveredSource, explicitSource } from "./source-info.js";

export { expandPromptTemplate, parseCommandArgs, substituteArgs, type PromptTemplate } from "./prompt-templates.js";
export { expandSkillCommand, formatSkillsForPrompt, type ResourceWarning, type Skill } from "./skills.js";
export { piAgentDir } from "./paths.js";

export interface ResourceOptions {
  cwd: string;
  /** pi's agent folder (PI_CODING_AGENT_DIR, default ~/.pi/agent). */
  agentDir: string;
  /** --skill paths (files or folders), in order. */
  skillPaths?: readonly string[];
  /** --prompt-template paths (files or folders), in order. */
  promptTemplatePaths?: readonly string[];
  /** settings.json `skills` entries (project's first, then global), already resolved; skipped with --no-skills, as in pi. */
  settingsSkillPaths?: readonly SettingsPath[];
  /** settings.json `prompts` entries, likewise. */
  settingsPromptPaths?: readonly SettingsPath[];
  /** false: the project's `.pi/skills`, `.pi/prompts` and `.agents/skills` are not used (an untrusted project, as in pi). */
  projectTrusted?: boolean;
  /** --no-skills: no discovery; explicit paths still load. */
  noSkills?: boolean;
  /** --no-prompt-templates: no discovery; explicit paths still load. */
  noPromptTemplates?: boolean;
  /** For `~` and `~/.agents/skills`; the user's home by default. */
  home?: string;
}

/** A path from a settings file and the scope of that file. */
export interface SettingsPath {
  path: string;
  scope: "user" | "project";
}

/** pi reports settings entries as "local" resources of the file's scope. */
const settingsSource = (path: string, scope: SettingsPath["scope"]): SourceInfo => ({ path, source: "local", scope, origin: "top-level" });

export interface Resources {
  skills: Skill[];
  prompts: PromptTemplate[];
  warnings: ResourceWarning[];
}

export const NO_RESOURCES: Resources = { skills: [], prompts: [], warnings: [] };

export function loadResources(options: ResourceOptions): Resources {
  const home = options.home ?? homedir();
  const cwd = resolve(options.cwd);
  const warnings: ResourceWarning[] = [];
  return {
    skills: loadSkills(options, cwd, home, warnings),
    prompts: loadPrompts(options, cwd, home, warnings),
    warnings,
  };
}

/** Keeps the first of each name, and each file once. */
function firstByName<T extends { name: string; filePath: string }>(items: Iterable<T>, kind: string, warnings: ResourceWarning[]): T[] {
  const byName = new Map<string, T>();
  const files = new Set<string>();
  for (const item of items) {
    if (files.has(item.filePath)) continue;
    const winner = byName.get(item.name);
    if (winner) {
      warnings.push({ path: item.filePath, message: `${kind} name "${item.name}" is taken by ${winner.filePath}; this one is skipped` });
      continue;
    }
    byName.set(item.name, item);
    files.add(item.filePath);
  }
  return [...byName.values()];
}

function loadSkills(options: ResourceOptions, cwd: string, home: string, warnings: ResourceWarning[]): Skill[] {
  const found: Skill[] = [];
  const add = (files: string[], source: (file: string) => SourceInfo): void => {
    for (const file of files) {
      const skill = readSkill(file, source(file), warnings);
      if (skill) found.push(skill);
    }
  };
  if (!options.noSkills) {
    for (const { path, scope } of options.settingsSkillPaths ?? []) {
      if (isDirectory(path)) add(findSkillFiles(path, true), (f) => settingsSource(f, scope));
      else if (isFile(path) && path.endsWith(".md")) add([path], (f) => settingsSource(f, scope));
      else if (!existsSync(path)) warnings.push({ path, message: "skill path (settings.json) does not exist" });
    }
    const projectBase = join(cwd, ".pi");
    const userAgents = join(home, ".agents", "skills");
    if (options.projectTrusted !== false) {
      add(findSkillFiles(join(projectBase, "skills"), true), (f) => discoveredSource(f, "project", projectBase));
      for (const dir of ancestorAgentsSkillDirs(cwd)) {
        if (dir !== userAgents) add(findSkillFiles(dir, false), (f) => discoveredSource(f, "project", projectBase));
      }
    }
    add(findSkillFiles(join(options.agentDir, "skills"), true), (f) => discoveredSource(f, "user", options.agentDir));
    add(findSkillFiles(userAgents, false), (f) => discoveredSource(f, "user", options.agentDir));
  }
  for (const raw of options.skillPaths ?? []) {
    const path = userPath(raw, cwd, home);
    if (isDirectory(path)) add(findSkillFiles(path, true), (f) => explicitSource(f, path));
    else if (isFile(path) && path.endsWith(".md")) add([path], (f) => explicitSource(f));
    else warnings.push({ path, message: existsSync(path) ? "skill path is not a markdown file" : "skill path does not exist" });
  }
  return firstByName(found, "skill", warnings);
}

function loadPrompts(options: ResourceOptions, cwd: string, home: string, warnings: ResourceWarning[]): PromptTemplate[] {
  const found: PromptTemplate[] = [];
  const add = (files: string[], source: (file: string) => SourceInfo): void => {
    for (const file of files) {
      const template = readTemplate(file, source(file));
      if (template) found.push(template);
    }
  };
  if (!options.noPromptTemplates) {
    for (const { path, scope } of options.settingsPromptPaths ?? []) {
      if (isDirectory(path)) add(findTemplateFiles(path), (f) => settingsSource(f, scope));
      else if (isFile(path) && path.endsWith(".md")) add([path], (f) => settingsSource(f, scope));
    }
    const projectBase = join(cwd, ".pi");
    if (options.projectTrusted !== false) add(findTemplateFiles(join(projectBase, "prompts")), (f) => discoveredSource(f, "project", projectBase));
    add(findTemplateFiles(join(options.agentDir, "prompts")), (f) => discoveredSource(f, "user", options.agentDir));
  }
  for (const raw of options.promptTemplatePaths ?? []) {
    const path = userPath(raw, cwd, home);
    if (isDirectory(path)) add(findTemplateFiles(path), (f) => explicitSource(f, path));
    else if (isFile(path) && path.endsWith(".md")) add([path], (f) => explicitSource(f));
  }
  return firstByName(found, "prompt template", warnings);
}

/** `.agents/skills` in `cwd` and each parent, up to the git repository's root (or the filesystem's). */
function ancestorAgentsSkillDirs(cwd: string): string[] {
  const dirs: string[] = [];
  const gitRoot = findGitRoot(cwd);
  for (let dir = cwd; ; dir = dirname(dir)) {
    dirs.push(join(dir, ".agents", "skills"));
    if (dir === gitRoot || dirname(dir) === dir) return dirs;
  }
}

function findGitRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Adds the skill and prompt paths extensions name in `resources_discover`, as pi does: loaded
 * like explicit paths, after what is already there (which keeps its names).
 */
export function extendResources(base: Resources, extra: { cwd: string; skillPaths: readonly string[]; promptTemplatePaths: readonly string[] }): Resources {
  const added = loadResources({
    cwd: extra.cwd,
    agentDir: "",
    noSkills: true,
    noPromptTemplates: true,
    skillPaths: extra.skillPaths,
    promptTemplatePaths: extra.promptTemplatePaths,
  });
  const warnings = [...base.warnings, ...added.warnings];
  return {
    skills: firstByName([...base.skills, ...added.skills], "skill", warnings),
    prompts: firstByName([...base.prompts, ...added.prompts], "prompt template", warnings),
    warnings,
  };
}
